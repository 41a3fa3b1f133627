import type pg from 'pg'
import { API_KEY_SQL, apiKeyFromRow, apiKeyParams } from '../api-keys-sql.ts'
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

/** API keys and server secrets of a PostgreSQL store. */
export function createPostgresKeys(pool: pg.Pool): KeyStore {
  return {
    async insertApiKey({ record, keyHash }) {
      try {
        await pool.query(SQL.insert, apiKeyParams(record, keyHash))
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
    async revokeApiKey({ id, atMs }) {
      return ((await pool.query(SQL.revoke, [atMs, id])).rowCount ?? 0) > 0
    },
    async revokedApiKeyIds() {
      return (await pool.query<{ id: string }>(SQL.revokedIds)).rows.map((r) => r.id)
    },
    async secret(name) {
      const row = (await pool.query<{ value: Buffer }>(SQL.secret, [name])).rows[0]
      if (!row) throw new Error(`store: secret ${name} is missing (a writer creates it with the schema)`)
      return u8(row.value)
    },
  }
}
