import { rowsOf, type SqlExecutor } from './sql-routine.ts'

type Row = Record<string, unknown>

/**
 * What keys, webhooks and the portal (key-store.ts, webhook-store.ts, portal-store.ts) need of an adapter: where their
 * statements run, how it tells a taken key, and the few statements it writes its own way. Everything else is one
 * statement sequence for both adapters.
 */
export interface RecordsDialect {
  /** Reads: the store's connection (SQLite) or pool (PostgreSQL). */
  readonly reads: SqlExecutor
  /**
   * Keys, subscriptions, the lease, accounts, sessions, the audit log, usage: durable at commit. On PostgreSQL a pool
   * of its own whose connections allow writes, so that a read-only store (an API replica) writes these too.
   */
  readonly writes: SqlExecutor
  /** Delivery attempts and cursor advances: on PostgreSQL a pool not waiting for the WAL flush (open-pool.ts). */
  readonly deliveries: SqlExecutor
  /** Whether a driver error is a unique or primary-key violation (the id, hash or login is taken). */
  isTaken(error: unknown): boolean
  /** A list bound as one parameter: an array (PostgreSQL) or the text of a JSON array (SQLite's json_each). */
  list(values: readonly unknown[]): unknown
  readonly statements: RecordsStatements
}

/** The statements an adapter writes its own way; an absent one is done with the shared statements. */
export interface RecordsStatements {
  /** keyUsage's one read of many keys (parameters: list of key ids, since). */
  readonly usageOfKeys: string
  /**
   * touchApiKeys in one statement (parameters: lists of ids and of times, by id); absent: API_KEY_SQL.touch per key,
   * in one transaction.
   */
  readonly touchKeys?: string
  /** addKeyUsage in one statement (parameters: a list per USAGE_COLUMNS column); absent: a row at a time. */
  readonly addUsage?: string
  /**
   * recordWebhookDelivery in one statement (parameters: the attempt's, then the advance's); absent: the attempt's
   * insert and the advance in one transaction.
   */
  readonly recordDelivery?: string
  /**
   * Makes the subscription inserts of one owner take turns, inside their transaction (parameter: the owner); absent
   * where the write transaction alone does (SQLite's holds the database's one write lock).
   */
  readonly lockOwner?: string
}

/** The first row of a read, as a record; undefined when there is none. */
export async function readOne<T>(
  on: SqlExecutor,
  text: string,
  params: readonly unknown[],
  from: (row: Row) => T,
): Promise<T | undefined> {
  const [row] = await on.run(rowsOf(text, params))
  return row && from(row)
}

/** Every row of a read, as records. */
export async function readAll<T>(
  on: SqlExecutor,
  text: string,
  params: readonly unknown[],
  from: (row: Row) => T,
): Promise<T[]> {
  return (await on.run(rowsOf(text, params))).map(from)
}

/** The count a `SELECT count(*) AS n` answers (PostgreSQL's bigint comes as a string). */
export async function readCount(on: SqlExecutor, text: string, params: readonly unknown[] = []): Promise<number> {
  const [row] = await on.run(rowsOf<{ n: number | string }>(text, params))
  return Number(row.n)
}

/** `write`'s answer, or the error `taken` makes of the driver's unique violation. */
export async function unlessTaken<T>(d: RecordsDialect, write: Promise<T>, taken: () => Error): Promise<T> {
  try {
    return await write
  } catch (error) {
    if (d.isTaken(error)) throw taken()
    throw error
  }
}
