import { StoreReadOnlyError } from './errors.ts'
import type { Store, StoreWriter } from './port.ts'

/** How an adapter opens its store. */
export interface OpenStoreOptions {
  /**
   * Reads only (the API): no DDL, no schema creation or upgrade, no background thread, no writes.
   * The store must exist at this build's schema version, created by a writer.
   */
  readonly readOnly?: boolean
}

/**
 * The port's methods that write chain data. A new StoreWriter method fails compilation here until it is listed. Keys,
 * webhooks and portal records are not refused here: an API replica's portal writes them (PostgreSQL through a pool of
 * its own; a read-only SQLite connection refuses them itself).
 */
type WriteMethod = Exclude<keyof StoreWriter, 'position' | 'reversibleBlocks' | 'chainId'>
const WRITES: Record<WriteMethod, true> = {
  applyBlock: true,
  applyBlocks: true,
  undoFrom: true,
  recordChainId: true,
}

/** `store` with every write refused by a `store_read_only_error`, before anything reaches the database. */
export function readOnlyStore(store: Store): Store {
  const refusals = Object.fromEntries(
    Object.keys(WRITES).map((method) => [
      method,
      async () => {
        throw StoreReadOnlyError({ method })
      },
    ]),
  )
  return { ...store, ...refusals }
}
