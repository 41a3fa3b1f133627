import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import type { AntlerError } from '../../src/antelope/index.ts'
import { createIndexer } from '../../src/ingest/index.ts'
import type { ShipReaderEvent } from '../../src/ship/index.ts'
import type { Store } from '../../src/store/index.ts'
import { withDevchain } from '../_helpers/devchain.ts'
import { tempSqliteStore } from '../_helpers/store.ts'

/** A store holding blocks 1..20 of one devchain (LIB 17), and another devchain of 30 blocks (another chain id). */
async function storeOfOneChainAndAnother(t: TestContext) {
  const first = await withDevchain(t, { libDepth: 3 })
  for (let i = 0; i < 20; i++) first.chain.produceBlock()
  const store = tempSqliteStore(t)
  await createIndexer({ shipUrl: first.ship, store, endBlockNum: 20 }).run()
  const other = await withDevchain(t, { libDepth: 3 })
  for (let i = 0; i < 30; i++) other.chain.produceBlock()
  return { first, other, store, position: await store.position() }
}

/** Runs an indexer to its end (stopped after 15 s if it never ends): its error, forks undone and sessions. */
async function runToError(shipUrl: string, store: Parameters<typeof createIndexer>[0]['store']) {
  const events: ShipReaderEvent[] = []
  const forks: number[] = []
  const indexer = createIndexer({
    shipUrl,
    store,
    reconnect: { minDelayMs: 50, maxDelayMs: 400 },
    onReaderEvent: (e) => events.push(e),
    onFork: (fork) => forks.push(fork.blockNum),
  })
  const timer = setTimeout(() => void indexer.stop(), 15_000)
  const error = await indexer.run().then(
    () => undefined,
    (e: unknown) => e as AntlerError,
  )
  clearTimeout(timer)
  await indexer.stop()
  return { error, forks, sessions: events.filter((e) => e.type === 'connected').length }
}

test('a node of another chain id stops the indexer at connect with ship_history_mismatch_error naming both chain ids: one session, nothing undone', async (t) => {
  const { first, other, store, position } = await storeOfOneChainAndAnother(t)
  assert.equal(await store.chainId(), first.chainId, 'the store recorded its node chain id')
  const { error, forks, sessions } = await runToError(other.ship, store)
  assert.equal(error?.code, 'ship_history_mismatch_error', error?.message)
  assert.deepEqual(error.details, {
    kind: 'chain_id',
    blockNum: 20,
    storeId: first.chainId,
    nodeId: other.chainId,
    storeLib: position?.lib,
  })
  assert.match(error.message, /a fresh store .*or connect --ship to a node of the store's chain/)
  assert.deepEqual({ forks, sessions }, { forks: [], sessions: 1 })
  assert.deepEqual(await store.position(), position)
})

test("a store with no chain id (an older build's) on another chain's node: the block below the store's LIB differs, ship_history_mismatch_error before any undo, one session", async (t) => {
  const { other, store, position } = await storeOfOneChainAndAnother(t)
  // As a store written before chain ids were recorded: only its blocks tell the histories apart.
  const unrecorded: Store = { ...store, chainId: async () => undefined, recordChainId: async (id) => id }
  const lib = position!.lib
  const { error, forks, sessions } = await runToError(other.ship, unrecorded)
  assert.equal(error?.code, 'ship_history_mismatch_error', error?.message)
  assert.deepEqual(error.details, {
    kind: 'block',
    blockNum: lib,
    storeId: (await store.blockByNum(lib))!.id,
    nodeId: other.chain.blockIdAt(lib),
    storeLib: lib,
  })
  assert.deepEqual({ forks, sessions }, { forks: [], sessions: 1 }, 'no reversible block undone, no relink')
  assert.deepEqual(await store.position(), position)
})
