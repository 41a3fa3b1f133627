import { test } from 'node:test'
import assert from 'node:assert/strict'
import { APIClient } from '@wharfkit/antelope'
import { issueToken, startPlatform } from '../_helpers/platform.ts'
import { pollUntil, pushActions, waitIndexed } from '../_helpers/push.ts'

/*
 * Hyperion's table, ABI and block routes against `antler dev` (docs/HYPERION.md): get_deltas and get_table_state
 * checked against /v0/state/table, get_abi_snapshot against /v0/state/abi, get_block(s) against nodeos's
 * /v1/chain/get_block; and their refusals in Hyperion's error shape.
 */

type Json = Record<string, unknown>
type Delta = { block_num: number; block_id: string; present: number; scope: string; data: { balance: string } }

test(
  'hyperion tables: get_deltas, get_table_state, get_abi_snapshot, get_block(s), get_schedule',
  { timeout: 180_000 },
  async (t) => {
    const p = await startPlatform(t)
    const chain = new APIClient({ url: p.chainApi })
    const transfer = (to: string, quantity: string, memo: string) => ({
      account: 'eosio.token',
      name: 'transfer',
      actor: 'alice',
      data: { from: 'alice', to, quantity, memo },
    })
    const first = await pushActions(chain, [transfer('bob', '1.0000 EOS', 'one')])
    // The second transfer must land in a later block: the checks below tell the two blocks apart.
    await pollUntil(
      () => chain.v1.chain.get_info(),
      (info) => Number(info.head_block_num) > first.blockNum,
    )
    const second = await pushActions(chain, [
      transfer('bob', '2.5000 EOS', 'two'),
      transfer('carol', '0.1000 EOS', 'c'),
    ])
    await waitIndexed(p.api, second.blockNum)

    const token = await issueToken(p, p.apiKey)
    const dfuse = async <T>(path: string): Promise<T> => {
      const response = await fetch(`${p.api}${path}`, { headers: { authorization: `Bearer ${token}` } })
      assert.equal(response.status, 200, `${path}: ${await response.clone().text()}`)
      return (await response.json()) as T
    }
    const hyperion = async (path: string, status = 200): Promise<Json> => {
      const response = await fetch(`${p.api}${path}`)
      const body = (await response.json()) as Json
      assert.equal(response.status, status, `${path}: ${JSON.stringify(body)}`)
      return body
    }
    const balanceOf = async (scope: string) => {
      const table = await dfuse<{ rows: { json: { balance: string } }[] }>(
        `/v0/state/table?account=eosio.token&scope=${scope}&table=accounts&json=true`,
      )
      return table.rows[0]?.json.balance
    }
    const chainBlock = async (num: number) =>
      (await (
        await fetch(`${p.chainApi}/v1/chain/get_block`, {
          method: 'POST',
          body: JSON.stringify({ block_num_or_id: num }),
        })
      ).json()) as { id: string; previous: string; producer: string; timestamp: string; transactions: unknown[] }

    // get_deltas: bob's balance history, newest first, ending at the balance /v0/state/table reads.
    const bob = await hyperion('/v2/history/get_deltas?code=eosio.token&table=accounts&scope=bob')
    const bobDeltas = bob.deltas as Delta[]
    assert.deepEqual(
      bobDeltas.slice(0, 2).map((d) => [d.block_num, d.present]),
      [
        [second.blockNum, 1],
        [first.blockNum, 1],
      ],
    )
    assert.equal(bobDeltas[0]?.data.balance, await balanceOf('bob'))
    assert.equal(bobDeltas[0]?.block_id, (await chainBlock(second.blockNum)).id)
    const [amount, symbol] = (bobDeltas[0]?.data.balance ?? '').split(' ')
    assert.deepEqual(
      [(bobDeltas[0]?.data as Json).amount, (bobDeltas[0]?.data as Json).symbol],
      [Number(amount), symbol],
    )
    assert.equal(typeof bob.query_time_ms, 'number')
    assert.equal(bob.cached, false)
    assert.equal(typeof bob.last_indexed_block, 'number')
    assert.deepEqual((bob.total as Json).relation, 'eq')

    // One block's deltas (block_num), both recipients and the sender, ascending.
    const inBlock = await hyperion(
      `/v2/history/get_deltas?code=eosio.token&table=accounts&block_num=${second.blockNum}&sort=asc`,
    )
    assert.deepEqual(
      (inBlock.deltas as Delta[]).map((d) => d.scope),
      ['alice', 'bob', 'carol'],
    )
    for (const d of inBlock.deltas as Delta[]) assert.equal(d.data.balance, await balanceOf(d.scope))

    // get_table_state at head agrees with /v0/state/table for every holder it lists.
    const state = await hyperion('/v2/history/get_table_state?code=eosio.token&table=accounts')
    const results = state.results as Delta[]
    assert.ok(results.some((r) => r.scope === 'carol'))
    for (const r of results) assert.equal(r.data.balance, await balanceOf(r.scope), r.scope)
    assert.equal(state.code, 'eosio.token')
    // … and before the second transfer, bob's balance as it was.
    const before = await hyperion(
      `/v2/history/get_table_state?code=eosio.token&table=accounts&block_num=${second.blockNum - 1}`,
    )
    assert.equal(
      (before.results as Delta[]).find((r) => r.scope === 'bob')?.data.balance,
      bobDeltas.find((d) => d.block_num === first.blockNum)?.data.balance,
    )

    // get_abi_snapshot: the ABI /v0/state/abi renders, and the block that set it.
    const abi = await dfuse<{ block_num: number; abi: unknown }>('/v0/state/abi?account=eosio.token&json=true')
    const snapshot = await hyperion('/v2/history/get_abi_snapshot?contract=eosio.token&fetch=true')
    assert.deepEqual(snapshot.abi, abi.abi)
    assert.equal(snapshot.block_num, abi.block_num)
    assert.equal((await hyperion('/v2/history/get_abi_snapshot?contract=eosio.token')).present, true)
    const none = await hyperion('/v2/history/get_abi_snapshot?contract=nosuchacct&block=5')
    assert.deepEqual(
      [none.block_num, none.present, none.error],
      [null, false, 'abi not found for nosuchacct until block 5'],
    )

    // get_block / get_blocks against nodeos's get_block.
    const nodeos = await chainBlock(second.blockNum)
    const block = await hyperion(`/v2/history/get_block?block_num=${second.blockNum}`)
    assert.deepEqual(
      [block.block_id, block.prev_id, block.producer, block['@timestamp'], block.trx_count],
      [nodeos.id, nodeos.previous, nodeos.producer, nodeos.timestamp, nodeos.transactions.length],
    )
    assert.ok((block.cpu_usage as number) > 0)
    const blocks = await hyperion(`/v2/history/get_blocks?before=${second.blockNum}&limit=3`)
    assert.deepEqual(
      (blocks.blocks as Json[]).map((b) => b.block_num),
      [second.blockNum, second.blockNum - 1, second.blockNum - 2],
    )
    const byId = await hyperion(`/v2/history/get_blocks?block_id=${nodeos.id}`)
    assert.deepEqual(
      (byId.blocks as Json[]).map((b) => b.block_num),
      [second.blockNum],
    )
    const busy = await hyperion(
      `/v2/history/get_blocks?min_trx_count=1&after=${first.blockNum}&before=${second.blockNum}&sort=asc`,
    )
    assert.deepEqual(
      (busy.blocks as Json[]).map((b) => b.block_num),
      [first.blockNum, second.blockNum],
    )

    // get_schedule: the devchain never announces a schedule; the answer is a 404, never a 5xx.
    const schedule = await fetch(`${p.api}/v2/history/get_schedule`)
    assert.equal(schedule.status, 404)

    // Refusals in Hyperion's shape.
    const missing = await hyperion('/v2/history/get_block?block_num=4000000000', 404)
    assert.deepEqual([missing.statusCode, missing.message], [404, 'Block 4000000000 not found'])
    const badLimit = await hyperion('/v2/history/get_deltas?limit=0', 400)
    assert.equal(badLimit.code, 'FST_ERR_VALIDATION')
    const unknownFilter = await hyperion('/v2/history/get_deltas?data.balance=1', 400)
    assert.match(String(unknownFilter.message), /unsupported filter: data\.balance/)
    await hyperion('/v2/history/get_deltas?skip=20000', 400)
    await hyperion('/v2/history/get_table_state?code=eosio.token', 400)
    await hyperion('/v2/history/get_table_state?code=eosio.token&table=accounts&after_key=x', 400)
    await hyperion('/v2/history/get_blocks?producer=' + Array.from({ length: 30 }, (_, i) => `p${i}`).join(','), 400)
  },
)
