import { join } from 'node:path'
import type { Store } from './port.ts'
import { openPostgresStore } from './postgres/postgres-store.ts'
import type { OpenStoreOptions } from './read-only.ts'
import { openSqliteStore } from './sqlite/sqlite-store.ts'

/**
 * Opens the store a `--store` flag names: `sqlite` (a file in the data dir) or a `postgres://` URL.
 * `readOnly` (the API): no schema creation, upgrade or writes; the store must exist at this version.
 */
export async function openStore(args: { store: string; dataDir: string } & OpenStoreOptions): Promise<Store> {
  const options: OpenStoreOptions = { readOnly: args.readOnly ?? false }
  if (args.store === 'sqlite') return openSqliteStore(join(args.dataDir, 'store.sqlite'), options)
  if (/^postgres(ql)?:\/\//.test(args.store)) return openPostgresStore(args.store, options)
  throw new Error(`--store must be sqlite or a postgres:// URL, not ${JSON.stringify(args.store)}`)
}
