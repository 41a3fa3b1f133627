import { USAGE_COLUMNS } from '../portal-sql.ts'
import type { RecordsDialect } from '../records-dialect.ts'
import type { SqlExecutor } from '../sql-routine.ts'

/** The driver's codes for a taken primary key (an id) or unique column (a key hash, a login). */
const TAKEN: ReadonlySet<string> = new Set(['SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_CONSTRAINT_UNIQUE'])

/** keyUsage's read: the keys arrive as one JSON array parameter, so one prepared statement serves any number. */
const USAGE_OF_KEYS = `SELECT ${USAGE_COLUMNS} FROM key_usage WHERE key_id IN (SELECT value FROM json_each(?)) AND hour_ms >= ?
  ORDER BY key_id, hour_ms`

/**
 * Keys, webhooks and the portal on a SQLite store: every statement on its one connection (a read-only store's cannot
 * write: its writes fail with the driver's SQLITE_READONLY error). Batches are written a row at a time in one
 * synchronous transaction, which costs no round trip.
 */
export function sqliteRecordsDialect(connection: SqlExecutor): RecordsDialect {
  return {
    reads: connection,
    writes: connection,
    deliveries: connection,
    isTaken: (error) => TAKEN.has((error as { code?: string }).code ?? ''),
    list: (values) => JSON.stringify(values),
    statements: { usageOfKeys: USAGE_OF_KEYS },
  }
}
