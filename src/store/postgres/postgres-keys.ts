import type pg from 'pg'
import { API_KEY_SQL, apiKeyFromRow, apiKeyParams, apiKeyUpdate, latestTouches } from '../api-keys-sql.ts'
import { StoreApiKeyExistsError } from '../errors.ts'
import type { KeyStore } from '../port.ts'
import { u8 } from '../row-mapping.ts'
import { numbered } from '../common-sql.ts'

/** PostgreSQL's unique_violation: the id (primary key) or the key hash is taken. */
const UNIQUE_VIOLATION = '23505'

const SQL = Object.fromEntries(Object.entries(API_KEY_SQL).map(([name, sql]) => [name, numbered(sql)])) as Record<
  keyof typeof API_KEY_SQL,
  string
>

/**
 * touchApiKeys in one statement: the keys' rows are locked in id order first (every writer locks them in that order,
 * so two replicas touching the same keys wait for each other instead of deadlocking), then each gets the later of
 * its stored time and the batch's (`$1` ids, `$2` times: one per id, latestTouches).
 */
const TOUCH = `WITH u AS (SELECT * FROM unnest($1::text[], $2::bigint[]) AS u(id, at_ms)),
  locked AS (SELECT k.id FROM api_keys k JOIN u ON u.id = k.id ORDER BY k.id FOR UPDATE OF k)
  UPDATE api_keys k SET last_used_at_ms = u.at_ms FROM u, locked
  WHERE k.id = u.id AND locked.id = k.id AND (k.last_used_at_ms IS NULL OR k.last_used_at_ms < u.at_ms)`

/**
 * API keys and server secrets of a PostgreSQL store. Every key write (creation, revocation, name, origins, limits,
 * last use) goes through `writes`, like webhook records (postgres-webhooks.ts): the portal on a read-only store (API
 * replicas) manages keys too.
 */
export function createPostgresKeys(pool: pg.Pool, writes: pg.Pool = pool): KeyStore {
  return {
    async insertApiKey({ record, keyHash }) {
      try {
        await writes.query(SQL.insert, apiKeyParams(record, keyHash))
      } catch (error) {
        if ((error as { code?: string }).code === UNIQUE_VIOLATION) throw StoreApiKeyExistsError({ id: record.id })
        throw error
      }
    },
    async apiKeyByHash(keyHash) {
      const row = (await pool.query(SQL.byHash, [keyHash])).rows[0]
      return row && apiKeyFromRow(row)
    },
    async apiKeyById(id) {
      const row = (await pool.query(SQL.byId, [id])).rows[0]
      return row && apiKeyFromRow(row)
    },
    async apiKeys() {
      return (await pool.query(SQL.all)).rows.map(apiKeyFromRow)
    },
    async apiKeysOf(accountId) {
      return (await pool.query(SQL.ofAccount, [accountId])).rows.map(apiKeyFromRow)
    },
    async updateApiKey(id, patch) {
      const update = apiKeyUpdate(id, patch)
      const row = update
        ? (await writes.query(numbered(update.sql), update.params)).rows[0]
        : (await pool.query(SQL.byId, [id])).rows[0]
      return row && apiKeyFromRow(row)
    },
    async touchApiKeys(used) {
      if (used.length === 0) return
      const touches = latestTouches(used)
      await writes.query(TOUCH, [touches.map((u) => u.id), touches.map((u) => u.atMs)])
    },
    async revokeApiKey({ id, atMs }) {
      return ((await writes.query(SQL.revoke, [atMs, atMs, id])).rowCount ?? 0) > 0
    },
    async revokedApiKeyIds(nowMs) {
      return (await pool.query<{ id: string }>(SQL.revokedIds, [nowMs])).rows.map((r) => r.id)
    },
    async secret(name) {
      const row = (await pool.query<{ value: Buffer }>(SQL.secret, [name])).rows[0]
      if (!row) throw new Error(`store: secret ${name} is missing (a writer creates it with the schema)`)
      return u8(row.value)
    },
  }
}
