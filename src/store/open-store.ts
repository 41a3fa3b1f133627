import { join } from 'node:path'
import type { Store } from './port.ts'
import { openPostgresStore } from './postgres/postgres-store.ts'
import { openSqliteStore } from './sqlite/sqlite-store.ts'

/** Opens the store a `--store` flag names: `sqlite` (a file in the data dir) or a `postgres://` URL. */
export async function openStore(args: { store: string; dataDir: string }): Promise<Store> {
  if (args.store === 'sqlite') return openSqliteStore(join(args.dataDir, 'store.sqlite'))
  if (/^postgres(ql)?:\/\//.test(args.store)) return openPostgresStore(args.store)
  throw new Error(`--store must be sqlite or a postgres:// URL, not ${JSON.stringify(args.store)}`)
}
