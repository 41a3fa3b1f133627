import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { StoreNotFoundError, StoreSchemaVersionError } from '../errors.ts'
import { SECRET_NAMES } from '../types.ts'
import {
  POSTGRES_MIGRATION_5,
  POSTGRES_MIGRATION_6,
  POSTGRES_MIGRATION_8,
  POSTGRES_SCHEMA,
  POSTGRES_SCHEMA_VERSION,
  POSTGRES_UPGRADABLE_VERSIONS,
} from './schema.ts'
import { ROW_VERSIONS_BORN } from '../versioned-tables.ts'
import {
  CONTROLLERS_INDEX,
  CONTROLLERS_INDEX_NAME,
  TOKEN_HOLDINGS_INDEX,
  TOKEN_HOLDINGS_INDEX_NAME,
} from '../holdings-sql.ts'
import { API_KEYS_ACCOUNT_INDEX } from '../api-keys-sql.ts'

/** The URL with its password masked, for messages. */
function shown(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return 'the PostgreSQL database'
  }
}

const VERSION = "SELECT value FROM meta WHERE key = 'schema_version'"

/**
 * The pool webhook records, portal records and the portal's key changes are written through (postgres-webhooks.ts,
 * postgres-portal.ts, postgres-keys.ts): read-write connections on any store, apart from the store's reads. Up to 8;
 * connections open only as needed.
 */
export function openWebhookWritesPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 8, options: '-c jit=off' })
  pool.on('error', () => undefined)
  return pool
}

/**
 * The pool of delivery writes (a delivered message's attempt and cursor, a failed attempt): thousands a second from the
 * delivering process, up to 32 connections (4 held deliveries to 650/s: docs/PERFORMANCE.md), opened only as needed.
 * They commit without waiting for the WAL flush (`synchronous_commit=off`; durable within a fraction of a second):
 * a PostgreSQL crash may forget the last acknowledged deliveries, which are then delivered again with their ids
 * (at least once), never skipped. Nothing else is written through it: subscriptions, keys and accounts are durable
 * at commit.
 */
export function openDeliveryWritesPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 32, options: '-c jit=off -c synchronous_commit=off' })
  pool.on('error', () => undefined)
  return pool
}

/**
 * The connection pool of a store. A writer creates the schema and its secrets, or upgrades a store
 * of the previous version in place; a reader (`readOnly`) runs every connection with
 * `default_transaction_read_only`, and only checks that the store exists at this version.
 */
export async function openPostgresPool(url: string, readOnly: boolean): Promise<pg.Pool> {
  // JIT compiles plans for analytic queries; for these short indexed reads it only adds latency.
  const options = readOnly ? '-c jit=off -c default_transaction_read_only=on' : '-c jit=off'
  const pool = new pg.Pool({ connectionString: url, max: 4, options })
  // An idle connection dropped by the server is replaced on next use; it must not crash the process.
  pool.on('error', () => undefined)
  try {
    if (readOnly) await checkVersion(pool, shown(url))
    else await createSchema(pool, shown(url))
    return pool
  } catch (error) {
    await pool.end().catch(() => undefined)
    throw error
  }
}

async function checkVersion(pool: pg.Pool, store: string): Promise<void> {
  const present = (await pool.query<{ present: boolean }>("SELECT to_regclass('meta') IS NOT NULL AS present")).rows[0]
    .present
  const found = present ? (await pool.query<{ value: string }>(VERSION)).rows[0]?.value : undefined
  if (found === undefined) throw StoreNotFoundError({ store, reason: 'holds no Antler store' })
  if (Number(found) !== POSTGRES_SCHEMA_VERSION)
    throw StoreSchemaVersionError({
      store,
      found,
      expected: POSTGRES_SCHEMA_VERSION,
      upgradable: POSTGRES_UPGRADABLE_VERSIONS.includes(Number(found)),
    })
}

/**
 * Creates or upgrades the schema in one transaction (an interrupted upgrade leaves the store at its
 * old version, unchanged). Version 6's backfill rewrites tuples of `row_versions`: they are
 * vacuumed after the commit (VACUUM runs outside a transaction), not left to autovacuum, which
 * may be off.
 */
async function createSchema(pool: pg.Pool, store: string): Promise<void> {
  const client = await pool.connect()
  try {
    if (await createSchemaIn(client, store)) await client.query('VACUUM (ANALYZE) row_versions')
  } finally {
    client.release()
  }
}

/** The schema's transaction; true when it filled version 6's column. */
async function createSchemaIn(client: pg.PoolClient, store: string): Promise<boolean> {
  try {
    await client.query('BEGIN')
    // Concurrent first opens take turns, so exactly one creates the schema and its secrets.
    await client.query("SELECT pg_advisory_xact_lock(hashtext('antler_schema'))")
    await client.query('CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)')
    const found = (await client.query<{ value: string }>(VERSION)).rows[0]?.value
    if (
      found !== undefined &&
      Number(found) !== POSTGRES_SCHEMA_VERSION &&
      !POSTGRES_UPGRADABLE_VERSIONS.includes(Number(found))
    ) {
      throw StoreSchemaVersionError({ store, found, expected: POSTGRES_SCHEMA_VERSION, upgradable: false })
    }
    // A store at this version has its tables: its DDL is skipped, since CREATE INDEX takes a lock
    // that would queue behind (and hold up) a running indexer's writes.
    if (found !== String(POSTGRES_SCHEMA_VERSION)) await client.query(POSTGRES_SCHEMA)
    if (found !== undefined && Number(found) < 5) await client.query(POSTGRES_MIGRATION_5)
    const backfill = found !== undefined && Number(found) < 6
    if (backfill) {
      const lib = Number(
        (await client.query<{ value: string }>("SELECT value FROM meta WHERE key = 'lib'")).rows[0]?.value ?? 0,
      )
      const [addColumn, current, reopenable] = POSTGRES_MIGRATION_6
      await client.query(addColumn)
      await client.query(current)
      await client.query(reopenable, [lib])
    }
    if (found !== undefined && Number(found) < 8) await client.query(POSTGRES_MIGRATION_8)
    if (found !== String(POSTGRES_SCHEMA_VERSION)) {
      await client.query(ROW_VERSIONS_BORN)
      await client.query(API_KEYS_ACCOUNT_INDEX)
    }
    // The token-holdings and controllers indexes (holdings-sql.ts) came without a schema version of their own: the
    // first writer's open that lacks one builds it; later opens find them and take no lock that would queue behind an
    // indexer's writes.
    for (const [name, ddl] of [
      [TOKEN_HOLDINGS_INDEX_NAME, TOKEN_HOLDINGS_INDEX],
      [CONTROLLERS_INDEX_NAME, CONTROLLERS_INDEX],
    ]) {
      const found = await client.query('SELECT to_regclass($1::text) AS found', [name])
      if (found.rows[0]?.found === null) await client.query(ddl)
    }
    await client.query('INSERT INTO secrets SELECT * FROM unnest($1::text[], $2::bytea[]) ON CONFLICT DO NOTHING', [
      SECRET_NAMES,
      SECRET_NAMES.map(() => randomBytes(32)),
    ])
    await client.query(
      "INSERT INTO meta VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
      [String(POSTGRES_SCHEMA_VERSION)],
    )
    await client.query('COMMIT')
    return backfill
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw error
  }
}
