import type Database from 'better-sqlite3'
import { API_KEY_SQL, apiKeyFromRow, apiKeyParams } from '../api-keys-sql.ts'
import { StoreApiKeyExistsError } from '../errors.ts'
import type { KeyStore } from '../port.ts'
import { u8 } from '../row-mapping.ts'

/** The driver's codes for a taken id (primary key) or key hash (unique). */
const TAKEN = new Set(['SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_CONSTRAINT_UNIQUE'])

/** API keys and server secrets of a SQLite store. */
export function createSqliteKeys(db: Database.Database): KeyStore {
  const s = Object.fromEntries(Object.entries(API_KEY_SQL).map(([name, sql]) => [name, db.prepare(sql)])) as Record<
    keyof typeof API_KEY_SQL,
    Database.Statement
  >
  return {
    async insertApiKey({ record, keyHash }) {
      try {
        s.insert.run(...apiKeyParams(record, keyHash))
      } catch (error) {
        if (TAKEN.has((error as { code?: string }).code ?? '')) throw StoreApiKeyExistsError({ id: record.id })
        throw error
      }
    },
    async apiKeyByHash(keyHash) {
      const row = s.byHash.get(keyHash) as Record<string, unknown> | undefined
      return row && apiKeyFromRow(row)
    },
    async apiKeyById(id) {
      const row = s.byId.get(id) as Record<string, unknown> | undefined
      return row && apiKeyFromRow(row)
    },
    async apiKeys() {
      return (s.all.all() as Record<string, unknown>[]).map(apiKeyFromRow)
    },
    async revokeApiKey({ id, atMs }) {
      return s.revoke.run(atMs, id).changes > 0
    },
    async revokedApiKeyIds() {
      return s.revokedIds.pluck().all() as string[]
    },
    async secret(name) {
      const row = s.secret.get(name) as { value: Buffer } | undefined
      if (!row) throw new Error(`store: secret ${name} is missing (a writer creates it with the schema)`)
      return u8(row.value)
    },
  }
}
