import assert from 'node:assert/strict'
import { test } from 'node:test'
import { seedHyperion } from '../_helpers/hyperion.ts'
import { send, type Answer } from '../_helpers/http.ts'
import { issueToken, startPlatform } from '../_helpers/platform.ts'

type ActData = { [field: string]: unknown; auth?: { waits?: unknown }; newact?: string }

interface Doc {
  '@timestamp': string
  timestamp: string
  block_num: number
  block_id: string
  trx_id: string
  act: { account: string; name: string; authorization: { actor: string; permission: string }[]; data: ActData }
  receipts: { receiver: string; global_sequence: number | string; recv_sequence: number | string }[]
  cpu_usage_us?: number
  net_usage_words?: number
  signatures?: string[]
  global_sequence: number | string
  producer: string
  action_ordinal: number
  creator_action_ordinal: number
  notified?: string
}

interface ActionsAnswer {
  actions?: Doc[]
  simple_actions?: { block: number; contract: string; action: string; notified: string; irreversible?: boolean }[]
  total?: { value: number; relation: string }
  lib: number
  query_time_ms: number
  last_indexed_block: number
}

/** A flat action trace of the dfuse lifecycle (`/v0/transactions/:id`). */
interface DfuseTrace {
  receiver: string
  receipt: { receiver: string; global_sequence: string | number; act_digest: string }
  act: { account: string; name: string }
  inline_traces?: DfuseTrace[]
}

function ok(answer: Answer): unknown {
  assert.equal(answer.status, 200, answer.text.slice(0, 500))
  return answer.body
}

function badRequest(answer: Answer, message?: RegExp): void {
  assert.equal(answer.status, 400, answer.text.slice(0, 500))
  const body = answer.body as { statusCode: number; error: string; message: string }
  assert.equal(body.statusCode, 400)
  assert.equal(body.error, 'Bad Request')
  if (message) assert.match(body.message, message)
}

test(
  'Hyperion get_actions, get_transaction, check_transaction, get_creator and get_created_accounts against the dfuse routes',
  { timeout: 240_000 },
  async (t) => {
    const p = await startPlatform(t)
    const seed = await seedHyperion(p.chainApi, p.api)
    const token = await issueToken(p, p.apiKey)
    const get = async (path: string) => send(`${p.api}${path}`)
    const actions = async (query: string) => ok(await get(`/v2/history/get_actions?${query}`)) as ActionsAnswer

    /** The executed traces of a transaction as the dfuse route answers them, in global-sequence order. */
    const dfuseTraces = async (id: string): Promise<DfuseTrace[]> => {
      const answer = await send(`${p.api}/v0/transactions/${id}`, { headers: { authorization: `Bearer ${token}` } })
      const lifecycle = ok(answer) as { execution_trace: { action_traces: DfuseTrace[] } }
      const flat: DfuseTrace[] = []
      const walk = (traces: DfuseTrace[]) => traces.forEach((tr) => (flat.push(tr), walk(tr.inline_traces ?? [])))
      walk(lifecycle.execution_trace.action_traces)
      return flat.sort((a, b) => Number(BigInt(a.receipt.global_sequence) - BigInt(b.receipt.global_sequence)))
    }

    await t.test(
      'account: one document per action, notifications folded, the two identical transfers two',
      async () => {
        const answer = await actions(`account=${seed.account}&limit=100`)
        const docs = answer.actions!
        // Newest first: linkauth, updateauth, the two identical transfers, send, fund (newaccount names the account
        // only in its data: not a receiver or authorizer).
        assert.deepEqual(
          docs.map((d) => [d.trx_id, d.act.name]),
          [
            [seed.trx.linkauth.id, 'linkauth'],
            [seed.trx.updateauth.id, 'updateauth'],
            [seed.trx.twice.id, 'transfer'],
            [seed.trx.twice.id, 'transfer'],
            [seed.trx.send.id, 'transfer'],
            [seed.trx.fund.id, 'transfer'],
          ],
        )
        assert.deepEqual(answer.total, { value: 6, relation: 'eq' })
        assert.equal(answer.lib, 0, 'without checkLib, lib is 0')
        assert.ok(answer.last_indexed_block >= seed.trx.linkauth.blockNum)

        // Each document's receipts are the dfuse route's traces of that action, in order.
        const [second, first] = docs.slice(2, 4)
        const twice = await dfuseTraces(seed.trx.twice.id)
        assert.deepEqual(
          [...first.receipts, ...second.receipts].map((r) => [r.receiver, String(r.global_sequence)]),
          twice.map((tr) => [tr.receipt.receiver, String(tr.receipt.global_sequence)]),
        )
        assert.deepEqual(
          first.receipts.map((r) => r.receiver),
          ['eosio.token', seed.account, 'carol'],
        )
        assert.equal(typeof first.global_sequence, 'number')
        assert.equal(first.global_sequence, first.receipts[0].global_sequence)
        assert.ok(Number(second.global_sequence) > Number(first.global_sequence))
        // cpu, net and signatures on the transaction's first action only.
        assert.equal(typeof first.cpu_usage_us, 'number')
        assert.equal(typeof first.net_usage_words, 'number')
        assert.deepEqual(first.signatures, [...seed.trx.twice.signatures])
        assert.equal(second.cpu_usage_us, undefined)
        assert.equal(second.signatures, undefined)
        // The transfer's data with Hyperion's projections.
        assert.deepEqual(first.act.data, {
          amount: 0.5,
          symbol: 'EOS',
          from: seed.account,
          to: 'carol',
          quantity: '0.5000 EOS',
          memo: seed.twiceMemo,
        })
        assert.match(first['@timestamp'], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/)
        assert.equal(first.timestamp, first['@timestamp'])
        assert.equal(first.block_num, seed.trx.twice.blockNum)
        const block = ok(
          await send(`${p.chainApi}/v1/chain/get_block`, {
            method: 'POST',
            body: JSON.stringify({ block_num_or_id: first.block_num }),
          }),
        ) as { id: string; producer: string }
        assert.equal(first.block_id, block.id)
        assert.equal(first.producer, block.producer)
        // updateauth's empty arrays are dropped.
        assert.ok(docs[1].act.data.auth)
        assert.equal(docs[1].act.data.auth.waits, undefined)
      },
    )

    await t.test('filters, sort, skip and limit, simple, checkLib', async () => {
      const transfers = await actions(`account=${seed.account}&filter=eosio.token:transfer&sort=asc`)
      assert.deepEqual(
        transfers.actions!.map((d) => d.trx_id),
        [seed.trx.fund.id, seed.trx.send.id, seed.trx.twice.id, seed.trx.twice.id],
      )
      assert.deepEqual(transfers.total, { value: 4, relation: 'eq' })
      const toCarol = await actions(`transfer.to=carol&transfer.from=${seed.account}`)
      assert.deepEqual(
        toCarol.actions!.map((d) => d.trx_id),
        [seed.trx.twice.id, seed.trx.twice.id],
      )
      const same = await actions(`act.data.to=carol&act.authorization.actor=${seed.account}&act.name=transfer`)
      assert.deepEqual(same.actions, toCarol.actions, 'act.data.* where indexed: what Hyperion silently never matches')
      const page = await actions(`account=${seed.account}&skip=2&limit=2&track=false`)
      assert.deepEqual(
        page.actions!.map((d) => d.trx_id),
        [seed.trx.twice.id, seed.trx.twice.id],
      )
      assert.equal(page.total, undefined, 'track=false: no total')
      const capped = await actions(`account=${seed.account}&limit=1&track=3`)
      assert.deepEqual(capped.total, { value: 3, relation: 'gte' })
      const notLink = await actions(`account=${seed.account}&act.name=!linkauth,!updateauth`)
      assert.equal(notLink.actions!.length, 4)
      const byBlock = await actions(
        `account=${seed.account}&block_num=${seed.trx.send.blockNum}-${seed.trx.twice.blockNum}`,
      )
      assert.deepEqual(byBlock.total, { value: 3, relation: 'eq' })
      const after = await actions(`account=${seed.account}&after=${seed.trx.updateauth.blockNum}`)
      assert.deepEqual(
        after.actions!.map((d) => d.act.name),
        ['linkauth', 'updateauth'],
      )
      const simple = await actions(`account=${seed.account}&simple=true&checkLib=true&limit=3`)
      assert.equal(simple.actions, undefined)
      assert.ok(simple.lib > 0, 'checkLib: the store LIB')
      assert.deepEqual(
        simple.simple_actions!.map((s) => [s.contract, s.action, s.notified, typeof s.irreversible]),
        [
          ['eosio', 'linkauth', 'eosio', 'boolean'],
          ['eosio', 'updateauth', 'eosio', 'boolean'],
          ['eosio.token', 'transfer', `eosio.token,${seed.account},carol`, 'boolean'],
        ],
      )
      // The creation names the account in its data: get_actions with newaccount's projection.
      const created = await actions(`newaccount.newact=${seed.account}`)
      assert.equal(created.actions![0].trx_id, seed.trx.create.id)
      assert.equal(created.actions![0].act.data.newact, seed.account)
    })

    await t.test('bad input: Hyperion sentences, 400s for what the index cannot answer', async () => {
      badRequest(await get('/v2/history/get_actions?limit=1001'), /^limit too big, maximum: 1000$/)
      badRequest(await get('/v2/history/get_actions?skip=10001'), /^skip is above maximum internal limit: 10000/)
      badRequest(await get('/v2/history/get_actions?limit=0'))
      badRequest(await get('/v2/history/get_actions?sort=up'))
      badRequest(await get('/v2/history/get_actions?transfer.amount=1-5'), /transfer\.amount/)
      badRequest(await get('/v2/history/get_actions?producer=eosio'), /producer/)
      badRequest(await get('/v2/history/get_actions?after=2024-13-45T99:00'), /after/)
      badRequest(await get('/v2/history/get_actions?track=maybe'))
      badRequest(await get('/v2/history/get_actions?filter=nocolon'))
      badRequest(await get('/v2/history/get_transaction?id=xyz'))
      badRequest(await get('/v2/history/check_transaction?id=abc'))
    })

    await t.test('get_transaction: the documents of the current execution, uint64s as strings', async () => {
      const answer = ok(await get(`/v2/history/get_transaction?id=${seed.trx.twice.id.toUpperCase()}`)) as {
        executed: boolean
        trx_id: string
        lib: number
        cached_lib: boolean
        actions: Doc[]
      }
      assert.equal(answer.executed, true)
      assert.equal(answer.trx_id, seed.trx.twice.id)
      assert.equal(answer.cached_lib, false)
      assert.equal(answer.actions.length, 2)
      const traces = await dfuseTraces(seed.trx.twice.id)
      assert.deepEqual(
        answer.actions.flatMap((d) => d.receipts.map((r) => r.global_sequence)),
        traces.map((tr) => String(tr.receipt.global_sequence)),
      )
      assert.equal(answer.actions[0].notified, `eosio.token,${seed.account},carol`)
      assert.equal(typeof answer.actions[0].global_sequence, 'string')
      const unknown = ok(await get(`/v2/history/get_transaction?id=${'0'.repeat(64)}`)) as Record<string, unknown>
      assert.equal(unknown.executed, false)
      assert.equal(unknown.actions, undefined)

      const check = ok(await get(`/v2/history/check_transaction?id=${seed.trx.send.id}`)) as {
        status: string
        block_num: number
        root_action: { name: string }
        signatures: string[]
      }
      assert.equal(check.status, 'executed')
      assert.equal(check.block_num, seed.trx.send.blockNum)
      assert.equal(check.root_action.name, 'transfer')
      assert.deepEqual(check.signatures, [...seed.trx.send.signatures])
      const none = ok(await get(`/v2/history/check_transaction?id=${'0'.repeat(64)}`)) as { status: string }
      assert.equal(none.status, 'unknown')
    })

    await t.test('get_creator and get_created_accounts', async () => {
      const creator = ok(await get(`/v2/history/get_creator?account=${seed.account}`)) as Record<string, unknown>
      assert.equal(creator.creator, 'alice')
      assert.equal(creator.trx_id, seed.trx.create.id)
      assert.equal(creator.block_num, seed.trx.create.blockNum)
      const system = ok(await get('/v2/history/get_creator?account=eosio')) as Record<string, unknown>
      assert.equal(system.creator, '__self__')
      const missing = await get('/v2/history/get_creator?account=zzzzzzzzzzzz')
      assert.equal(missing.status, 404, missing.text)
      assert.equal((missing.body as { message: string }).message, 'account creation not found')

      const created = ok(await get('/v2/history/get_created_accounts?account=alice&limit=1')) as {
        accounts: { name: string; trx_id: string; timestamp: string }[]
        total: { value: number }
      }
      assert.deepEqual(created.accounts, [
        { name: seed.account, trx_id: seed.trx.create.id, timestamp: created.accounts[0].timestamp },
      ])
      assert.ok(created.total.value >= 1)
    })
  },
)
