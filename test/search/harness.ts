import type { TestContext } from 'node:test'
import { join } from 'node:path'
import { pushSigned, type Chain, type Devchain } from '../../src/devchain/index.ts'
import { createIndexer } from '../../src/ingest/index.ts'
import type { LifecycleService, TransactionLifecycle } from '../../src/lifecycle/index.ts'
import { createSearchService, type SearchService } from '../../src/search/index.ts'
import { openPostgresStore, openSqliteStore, type Store } from '../../src/store/index.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { tempDir, withDevchain } from '../_helpers/devchain.ts'
import { withPostgresDatabase } from '../_helpers/postgres.ts'
import { until } from '../_helpers/store.ts'

/** A lifecycle stand-in: `{id}` for every id asked (the search tests look at rows, not lifecycles). */
export const fakeLifecycles: LifecycleService = {
  async lifecycle(id) {
    return { id, transaction_status: 'executed' } as unknown as TransactionLifecycle
  },
  async lifecycles(ids) {
    return new Map(ids.map((id) => [id, { id, transaction_status: 'executed' } as unknown as TransactionLifecycle]))
  },
  json: (lifecycle) => JSON.stringify(lifecycle),
  isFinal: () => false,
}

/**
 * An in-process devchain (blocks on demand), an indexer following it into SQLite, and the search service on that store.
 */
export interface SearchHarness {
  readonly devchain: Devchain
  readonly chain: Chain
  readonly store: Store
  readonly search: SearchService
  readonly cursorKey: Uint8Array
  /** Pushes a transaction of these actions into the pending block (false if the chain refused it). */
  push(actions: Parameters<typeof pushSigned>[1]): boolean
  /** Waits until the store holds the chain's head and LIB. */
  synced(): Promise<void>
}

let nonce = 0

export const transferAction = (from: string, to: string, quantity: string, memo = '') => ({
  account: 'eosio.token',
  name: 'transfer',
  authorization: [{ actor: from, permission: 'active' }],
  data: { from, to, quantity, memo },
})

/** The store adapters a search test runs on (PostgreSQL when ANTLER_TEST_PG is set). */
export type Adapter = 'sqlite' | 'postgres'

export async function startHarness(
  t: TestContext,
  options: { libDepth?: number; adapter?: Adapter } = {},
): Promise<SearchHarness> {
  const devchain = await withDevchain(t, { libDepth: options.libDepth ?? 12 })
  const store =
    options.adapter === 'postgres'
      ? await openPostgresStore(await withPostgresDatabase(t))
      : openSqliteStore(join(tempDir(t), 'search.sqlite'))
  const indexer = createIndexer({ shipUrl: devchain.ship, store })
  const running = indexer.run()
  // Before the store's folder (or database) and the devchain go: `onCleanup` runs last registered first.
  onCleanup(t, async () => {
    await indexer.stop()
    await running.catch(() => undefined)
    await store.close()
  })
  const cursorKey = await store.secret('cursor_key')
  const search = createSearchService({ store, lifecycle: fakeLifecycles, cursorKey })
  const chain = devchain.chain
  return {
    devchain,
    chain,
    store,
    search,
    cursorKey,
    push(actions) {
      try {
        pushSigned(chain, actions, { nonce: ++nonce })
        return true
      } catch {
        return false
      }
    },
    async synced() {
      await until(async () => {
        const position = await store.position()
        return position?.head.blockId === chain.head.id && position.lib === chain.lib.blockNum
      }, 'the indexer to reach the chain head')
    },
  }
}
