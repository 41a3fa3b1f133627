import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { decodeShipType } from '../../src/ship/index.ts'
import { Chain, bootChain, buildChain } from '../../src/devchain/index.ts'
import { startShipServer } from '../../src/devchain/ship-server.ts'
import { createIndexer } from '../../src/ingest/index.ts'
import { openPostgresStore, openSqliteStore, type Store } from '../../src/store/index.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { tempDir } from '../_helpers/devchain.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import { dumpPostgresStore, dumpSqliteStore } from '../_helpers/store.ts'

type ActionTrace = {
  receiver: string
  receipt: [string, { global_sequence: string }] | null
  act: { account: string; name: string; data: string }
}
type TrxTrace = { id: string; status: number; scheduled: boolean; action_traces: [string, ActionTrace][] }

const hex = (v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : String(v).toLowerCase())

/**
 * A chain of a few dense blocks (17 to 22: the nftdemo setup in 17, an ABI change in 20) served over SHiP, for
 * every test of the file.
 */
async function denseFeed(t: TestContext): Promise<{ chain: Chain; url: string }> {
  const chain = new Chain({ dataDir: undefined, producers: 3, libDepth: 12, signBlocks: false })
  onCleanup(t, () => chain.close())
  bootChain(chain)
  while (chain.head.num < 16) chain.produceBlock()
  buildChain(chain, { profile: 'dense', blocks: 6 })
  const server = await startShipServer({ chain, host: '127.0.0.1', port: 0 })
  onCleanup(t, () => server.close())
  return { chain, url: `ws://127.0.0.1:${server.port}` }
}

/** What the chain holds: every action trace with a receipt, and every transaction with its status, by block. */
function chainHistory(chain: Chain) {
  const actions: string[] = []
  const transactions: string[] = []
  for (let num = 2; num <= chain.head.num; num++) {
    for (const [, trx] of decodeShipType<[string, TrxTrace][]>('transaction_trace[]', chain.block(num)!.traces)) {
      transactions.push(`${num} ${trx.id} ${trx.status} ${trx.scheduled}`)
      for (const [, a] of trx.action_traces)
        if (a.receipt)
          actions.push(
            `${a.receipt[1].global_sequence} ${a.receiver} ${a.act.account}::${a.act.name} ${hex(a.act.data)}`,
          )
    }
  }
  return { actions: actions.sort(), transactions: transactions.sort() }
}

/** The contract rows of the chain's state now: `code table scope key payer value` (the key in 16 hex digits). */
function chainRows(chain: Chain): string[] {
  return [...chain.state.rows('contract_row')]
    .map(
      ([, r]) =>
        `${r.code} ${r.table} ${r.scope} ${r.primaryKey.toString(16).padStart(16, '0')} ${r.payer} ${hex(r.value)}`,
    )
    .sort()
}

/** The same three lists from a store's dump (blocks from 2: block 1 is genesis, with no transactions). */
function storedHistory(dump: Record<string, unknown[]>) {
  const rows = dump.row_versions as Record<string, unknown>[]
  return {
    actions: (dump.actions as Record<string, unknown>[])
      .map((a) => `${a.global_seq} ${a.receiver} ${a.account}::${a.name} ${hex(a.data)}`)
      .sort(),
    transactions: (dump.transactions as Record<string, unknown>[])
      .map((x) => `${x.block_num} ${x.id} ${x.status} ${Boolean(Number(x.scheduled))}`)
      .sort(),
    rows: rows
      .filter((r) => r.valid_to === null && r.value !== null)
      .map((r) => `${r.code} ${r.tbl} ${r.scope} ${r.pk} ${r.payer} ${hex(r.value)}`)
      .sort(),
    abiBlocks: (dump.abi_versions as Record<string, unknown>[])
      .filter((v) => v.account === 'nftdemo')
      .map((v) => Number(v.block_num))
      .sort((a, b) => a - b),
  }
}

async function indexAndCompare(t: TestContext, store: Store, dump: () => Promise<Record<string, unknown[]>>) {
  const { chain, url } = await denseFeed(t)
  await createIndexer({ shipUrl: url, store, endBlockNum: chain.head.num }).run()
  await store.close()
  const stored = storedHistory(await dump())
  const held = chainHistory(chain)
  assert.ok(held.actions.length > 6000, `${held.actions.length} action traces`)
  assert.equal(stored.actions.length, held.actions.length)
  assert.deepEqual(stored.actions, held.actions)
  assert.deepEqual(stored.transactions, held.transactions)
  assert.ok(
    stored.transactions.some((x) => x.endsWith(' 2 true')),
    'a hard_fail scheduled transaction',
  )
  assert.deepEqual(stored.rows, chainRows(chain))
  assert.deepEqual(stored.abiBlocks, [17, 20], 'the setup and the ABI change')
}

test('dense blocks indexed into SQLite hold every action trace, transaction and row the chain holds', async (t) => {
  const path = join(tempDir(t), 'store.sqlite')
  await indexAndCompare(t, openSqliteStore(path), async () => dumpSqliteStore(path))
})

test(
  'dense blocks indexed into PostgreSQL hold every action trace, transaction and row the chain holds',
  { skip: PG_SKIP_REASON },
  async (t) => {
    const url = await withPostgresDatabase(t)
    await indexAndCompare(t, await openPostgresStore(url), () => dumpPostgresStore(url))
  },
)
