import type Database from 'better-sqlite3'
import { API_KEY_SQL, apiKeyFromRow, apiKeyParams, apiKeyUpdate, latestTouches } from '../api-keys-sql.ts'
import { StoreApiKeyExistsError } from '../errors.ts'
import type { KeyStore } from '../port.ts'
import { u8 } from '../row-mapping.ts'

/** The driver's codes for a taken id (primary key) or key hash (unique). */
const TAKEN = new Set(['SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_CONSTRAINT_UNIQUE'])

type Row = Record<string, unknown>

/** API keys and server secrets of a SQLite store. */
export function createSqliteKeys(db: Database.Database): KeyStore {
  const s = Object.fromEntries(Object.entries(API_KEY_SQL).map(([name, sql]) => [name, db.prepare(sql)])) as Record<
    keyof typeof API_KEY_SQL,
    Database.Statement
  >
  // One UPDATE per set of patched fields, prepared once each (at most seven).
  const updates = new Map<string, Database.Statement>()
  const prepared = (sql: string) => updates.get(sql) ?? updates.set(sql, db.prepare(sql)).get(sql)!
  const touch = db.transaction((used: { id: string; atMs: number }[]) => {
    for (const { id, atMs } of used) s.touch.run(atMs, id, atMs)
  })
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
      const row = s.byHash.get(keyHash) as Row | undefined
      return row && apiKeyFromRow(row)
    },
    async apiKeyById(id) {
      const row = s.byId.get(id) as Row | undefined
      return row && apiKeyFromRow(row)
    },
    async apiKeys() {
      return (s.all.all() as Row[]).map(apiKeyFromRow)
    },
    async apiKeysOf(accountId) {
      return (s.ofAccount.all(accountId) as Row[]).map(apiKeyFromRow)
    },
    async updateApiKey(id, patch) {
      const update = apiKeyUpdate(id, patch)
      const row = (update ? prepared(update.sql).get(...update.params) : s.byId.get(id)) as Row | undefined
      return row && apiKeyFromRow(row)
    },
    async touchApiKeys(used) {
      if (used.length > 0) touch(latestTouches(used))
    },
    async revokeApiKey({ id, atMs }) {
      return s.revoke.run(atMs, atMs, id).changes > 0
    },
    async revokedApiKeyIds(nowMs) {
      return s.revokedIds.pluck().all(nowMs) as string[]
    },
    async secret(name) {
      const row = s.secret.get(name) as { value: Buffer } | undefined
      if (!row) throw new Error(`store: secret ${name} is missing (a writer creates it with the schema)`)
      return u8(row.value)
    },
  }
}
