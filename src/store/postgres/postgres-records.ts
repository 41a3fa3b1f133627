import type pg from 'pg'
import { USAGE_ADDED, USAGE_COLUMNS } from '../portal-sql.ts'
import type { RecordsDialect } from '../records-dialect.ts'
import { DELIVERY_ADVANCE, WEBHOOK_SQL } from '../webhooks-sql.ts'
import { createPostgresExecutor } from './postgres-runner.ts'

/** PostgreSQL's unique_violation: an id, a key hash or a login is taken. */
const UNIQUE_VIOLATION = '23505'

/** Write transactions begin READ WRITE: a read-only store's writes pool must still write. */
const READ_WRITE = 'BEGIN READ WRITE'

/**
 * touchApiKeys in one statement: the keys' rows are locked in id order first (every writer locks them in that order,
 * so two replicas touching the same keys wait for each other instead of deadlocking), then each gets the later of
 * its stored time and the batch's (`$1` ids, `$2` times: one per id, latestTouches).
 */
const TOUCH_KEYS = `WITH u AS (SELECT * FROM unnest($1::text[], $2::bigint[]) AS u(id, at_ms)),
  locked AS (SELECT k.id FROM api_keys k JOIN u ON u.id = k.id ORDER BY k.id FOR UPDATE OF k)
  UPDATE api_keys k SET last_used_at_ms = u.at_ms FROM u, locked
  WHERE k.id = u.id AND locked.id = k.id AND (k.last_used_at_ms IS NULL OR k.last_used_at_ms < u.at_ms)`

/**
 * addKeyUsage in one statement for any number of rows (one array per column), in key then hour order (summedUsage):
 * concurrent batches of two replicas take the rows' locks in one order.
 */
const ADD_USAGE = `INSERT INTO key_usage (${USAGE_COLUMNS})
  SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[])
  ${USAGE_ADDED}`

/** keyUsage's one read of every key asked, by key in byte order (as SQLite sorts), then hour. */
const USAGE_OF_KEYS = `SELECT ${USAGE_COLUMNS} FROM key_usage WHERE key_id = ANY($1::text[]) AND hour_ms >= $2
  ORDER BY key_id COLLATE "C", hour_ms`

/** recordWebhookDelivery in one statement and one round trip: the attempt's insert runs as a CTE beside the CAS. */
const RECORD_DELIVERY = `WITH attempt AS (${WEBHOOK_SQL.insertAttempt}) ${DELIVERY_ADVANCE}`

/**
 * An owner's subscription inserts take turns: a lock held to the end of the transaction, so the count of each insert
 * (a statement after it, READ COMMITTED: a fresh snapshot) sees every one committed before (parameter: the owner).
 */
const LOCK_OWNER = "SELECT pg_advisory_xact_lock(hashtext('antler_webhooks_of'), hashtext(?))"

/** The pools keys, webhooks and the portal use on a PostgreSQL store (open-pool.ts). */
export interface RecordsPools {
  /** The store's pool (read-only connections on a read-only store). */
  readonly reads: pg.Pool
  /** Read-write connections on any store, apart from the store's reads. */
  readonly writes: pg.Pool
  /** Delivery writes, committed without waiting for the WAL flush. */
  readonly deliveries: pg.Pool
}

/**
 * Keys, webhooks and the portal on a PostgreSQL store: reads on the store's pool, writes on pools of their own (so each
 * is one statement and one round trip, and a read-only store writes them too), and one statement where a batch would
 * otherwise cost a round trip per row.
 */
export function postgresRecordsDialect(pools: RecordsPools): RecordsDialect {
  return {
    reads: createPostgresExecutor(pools.reads),
    writes: createPostgresExecutor(pools.writes, READ_WRITE),
    deliveries: createPostgresExecutor(pools.deliveries, READ_WRITE),
    isTaken: (error) => (error as { code?: string }).code === UNIQUE_VIOLATION,
    list: (values) => values,
    statements: {
      usageOfKeys: USAGE_OF_KEYS,
      touchKeys: TOUCH_KEYS,
      addUsage: ADD_USAGE,
      recordDelivery: RECORD_DELIVERY,
      lockOwner: LOCK_OWNER,
    },
  }
}
