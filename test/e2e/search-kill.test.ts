import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ABI, APIClient, Action, PrivateKey, SignedTransaction, Transaction } from '@wharfkit/antelope'
import { DEV_PRIVATE_KEY } from '../../src/devchain/index.ts'
import { spawnAntler, type RunningCli } from '../_helpers/cli.ts'
import { tempDir } from '../_helpers/devchain.ts'
import { send } from '../_helpers/http.ts'
import { issueToken } from '../_helpers/platform.ts'

/*
 * `antler dev` killed with SIGKILL in the middle of a transfer workload, then started again on the
 * same data dir: a search of every transfer (paged with cursors, both orders) returns each transfer
 * the chain holds exactly once, in chain order, and none that was irreversible before the kill is
 * missing.
 */

const devKey = PrivateKey.from(DEV_PRIVATE_KEY)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function pushTransfer(chain: APIClient, abi: ABI, memo: string): Promise<{ id: string; block: number }> {
  const info = await chain.v1.chain.get_info()
  const transaction = Transaction.from({
    ...info.getTransactionHeader(120),
    actions: [
      Action.from(
        {
          account: 'eosio.token',
          name: 'transfer',
          authorization: [{ actor: 'alice', permission: 'active' }],
          data: { from: 'alice', to: 'bob', quantity: '0.0001 EOS', memo },
        },
        abi,
      ),
    ],
  })
  const pushed = await chain.v1.chain.push_transaction(
    SignedTransaction.from({
      ...transaction,
      signatures: [devKey.signDigest(transaction.signingDigest(info.chain_id))],
    }),
  )
  return { id: String(pushed.transaction_id), block: Number(pushed.processed.block_num) }
}

async function healthOf(api: string): Promise<{ head: number; lib: number }> {
  const body = (await send(`${api}/healthz`)).body as {
    head_block_num: number | null
    last_irreversible_block_num: number | null
  }
  return { head: body.head_block_num ?? 0, lib: body.last_irreversible_block_num ?? 0 }
}

/** Transfer ids alice → bob in the chain's blocks 1..upTo, in chain order (the chain's own answer, not the store's). */
async function transfersOnChain(chainApi: string, upTo: number): Promise<string[]> {
  const ids: string[] = []
  for (let num = 1; num <= upTo; num++) {
    const block = (
      await send(`${chainApi}/v1/chain/get_block`, { method: 'POST', body: JSON.stringify({ block_num_or_id: num }) })
    ).body as {
      transactions: {
        trx:
          | string
          | {
              id: string
              transaction: { actions: { account: string; name: string; data: { from?: string; to?: string } }[] }
            }
      }[]
    }
    for (const r of block.transactions) {
      if (typeof r.trx === 'string') continue
      if (
        r.trx.transaction.actions.some(
          (a) => a.account === 'eosio.token' && a.name === 'transfer' && a.data.from === 'alice' && a.data.to === 'bob',
        )
      )
        ids.push(r.trx.id)
    }
  }
  return ids
}

test('search after kill -9 of antler dev during a workload and a restart: every transfer exactly once', async (t) => {
  const dataDir = tempDir(t, 'antler-e2e-')
  const args = [
    'dev',
    '--data-dir',
    dataDir,
    '--port',
    '0',
    '--grpc-port',
    '0',
    '--chain-port',
    '0',
    '--ship-port',
    '0',
    '--block-time',
    '50',
    '--lib-depth',
    '6',
    '--workload',
    'none',
    '--log-level',
    'warn',
  ]
  let cli: RunningCli = await spawnAntler(t, args)
  let chain = new APIClient({ url: cli.ready.chainApi })
  const abi = ABI.from((await chain.v1.chain.get_abi('eosio.token')).abi!)

  // Transfers from four pushers until the kill, at a random moment of the workload.
  const acknowledged: { id: string; block: number }[] = []
  let pushing = true
  const pusher = async (n: number) => {
    for (let i = 0; pushing; i++) {
      try {
        acknowledged.push(await pushTransfer(chain, abi, `kill ${n}.${i}`))
      } catch {
        if (!pushing) return
      }
    }
  }
  const pushers = Array.from({ length: 4 }, (_, n) => pusher(n))
  await sleep(2500 + Math.floor(Math.random() * 1500))
  const libBeforeKill = Number((await chain.v1.chain.get_info()).last_irreversible_block_num)
  cli.child.kill('SIGKILL')
  pushing = false
  await cli.exited
  await Promise.all(pushers)
  assert.ok(acknowledged.length > 5, `transfers pushed before the kill: ${acknowledged.length}`)
  t.diagnostic(`${acknowledged.length} transfers acknowledged before the kill; chain LIB then ${libBeforeKill}`)

  // The restart, and a few transfers after it.
  cli = await spawnAntler(t, args)
  chain = new APIClient({ url: cli.ready.chainApi })
  const after: { id: string; block: number }[] = []
  for (let i = 0; i < 5; i++) after.push(await pushTransfer(chain, abi, `after ${i}`))
  const last = Math.max(...after.map((x) => x.block))
  const deadline = Date.now() + 60_000
  while ((await healthOf(cli.ready.api)).lib < last) {
    assert.ok(Date.now() < deadline, 'LIB passes the last transfer within 60 s')
    await sleep(100)
  }
  const { lib } = await healthOf(cli.ready.api)
  const expected = await transfersOnChain(cli.ready.chainApi, lib)
  for (const x of acknowledged.filter((a) => a.block <= libBeforeKill))
    assert.ok(expected.includes(x.id), `the irreversible transfer ${x.id} (block ${x.block}) is still on the chain`)
  for (const x of after) assert.ok(expected.includes(x.id))

  const token = await issueToken({ api: cli.ready.api }, cli.ready.apiKey)
  const search = async (sort: string, limit: number) => {
    const ids: string[] = []
    let cursor = ''
    for (let pages = 0; pages < 1000; pages++) {
      const answer = await send(
        `${cli.ready.api}/v0/search/transactions?q=${encodeURIComponent('data.from:alice data.to:bob')}&sort=${sort}&limit=${limit}&start_block=${sort === 'asc' ? 1 : lib}&block_count=${lib - 1}&cursor=${cursor}`,
        {
          headers: { authorization: `Bearer ${token}` },
        },
      )
      assert.equal(answer.status, 200, answer.text)
      const body = answer.body as { cursor: string; transactions: { lifecycle: { id: string } }[] | null }
      ids.push(...(body.transactions ?? []).map((r) => r.lifecycle.id))
      if (body.cursor === '') return ids
      cursor = body.cursor
    }
    throw new Error('paging did not end')
  }
  const ascending = await search('asc', 7)
  assert.equal(new Set(ascending).size, ascending.length, 'no transfer twice')
  assert.deepEqual(ascending, expected, 'every transfer on the chain, once, in chain order')
  assert.deepEqual(await search('desc', 100), [...expected].reverse())
})
