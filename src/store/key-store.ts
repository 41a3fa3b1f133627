import { API_KEY_SQL, apiKeyFromRow, apiKeyParams, apiKeyUpdate, latestTouches } from './api-keys-sql.ts'
import { StoreApiKeyExistsError } from './errors.ts'
import type { KeyStore } from './port.ts'
import { readAll, readOne, unlessTaken, type RecordsDialect } from './records-dialect.ts'
import { u8 } from './row-mapping.ts'
import { awaited, changesOf, rowsOf } from './sql-routine.ts'

/**
 * API keys and server secrets, on either adapter. Every key write (creation, revocation, name, origins, limits, last
 * use) goes through the dialect's writes: the portal on a read-only PostgreSQL store (API replicas) manages keys too.
 */
export function createKeyStore(d: RecordsDialect): KeyStore {
  const { reads, writes } = d
  return {
    async insertApiKey({ record, keyHash }) {
      const insert = writes.run(changesOf(API_KEY_SQL.insert, apiKeyParams(record, keyHash)))
      await unlessTaken(d, insert, () => StoreApiKeyExistsError({ id: record.id }))
    },
    apiKeyByHash: (keyHash) => readOne(reads, API_KEY_SQL.byHash, [keyHash], apiKeyFromRow),
    apiKeyById: (id) => readOne(reads, API_KEY_SQL.byId, [id], apiKeyFromRow),
    apiKeys: () => readAll(reads, API_KEY_SQL.all, [], apiKeyFromRow),
    apiKeysOf: (accountId) => readAll(reads, API_KEY_SQL.ofAccount, [accountId], apiKeyFromRow),
    updateApiKey(id, patch) {
      const update = apiKeyUpdate(id, patch)
      return update
        ? readOne(writes, update.sql, update.params, apiKeyFromRow)
        : readOne(reads, API_KEY_SQL.byId, [id], apiKeyFromRow)
    },
    async touchApiKeys(used) {
      if (used.length === 0) return
      const touches = latestTouches(used)
      const { touchKeys } = d.statements
      if (touchKeys) {
        await writes.run(changesOf(touchKeys, [d.list(touches.map((u) => u.id)), d.list(touches.map((u) => u.atMs))]))
        return
      }
      await writes.transaction(function* (sql) {
        for (const { id, atMs } of touches) yield* awaited(sql.run(API_KEY_SQL.touch, [atMs, id, atMs]))
      })
    },
    async revokeApiKey({ id, atMs }) {
      return (await writes.run(changesOf(API_KEY_SQL.revoke, [atMs, atMs, id]))) > 0
    },
    async revokedApiKeyIds(nowMs) {
      return (await reads.run(rowsOf<{ id: string }>(API_KEY_SQL.revokedIds, [nowMs]))).map((r) => r.id)
    },
    async secret(name) {
      const value = await readOne(reads, API_KEY_SQL.secret, [name], (row) => u8(row.value as Uint8Array))
      if (!value) throw new Error(`store: secret ${name} is missing (a writer creates it with the schema)`)
      return value
    },
  }
}
