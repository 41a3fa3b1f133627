import type { ApiKeyLimits, ApiKeyPatch, ApiKeyRecord, ApiKeyType } from './types.ts'

/** A parameter of the key statements. */
export type ApiKeySqlValue = string | number | null

/** Schema 8's columns of `api_keys` (NULL on keys made by `antler keys create` and on keys stored before). */
export const API_KEY_ADDED_COLUMNS: readonly { readonly column: string; readonly integer: boolean }[] = [
  { column: 'account_id', integer: false },
  { column: 'key_prefix', integer: false },
  { column: 'last_used_at_ms', integer: true },
  { column: 'limits', integer: false },
]

/**
 * An account's keys by account (schema 8). Created after the columns are added (an upgraded store's `api_keys` gains
 * `account_id` only then), like ROW_VERSIONS_BORN.
 */
export const API_KEYS_ACCOUNT_INDEX =
  'CREATE INDEX IF NOT EXISTS api_keys_account ON api_keys (account_id, created_at_ms, id)'

const COLUMNS = 'id, name, type, origins, created_at_ms, revoked_at_ms, account_id, key_prefix, last_used_at_ms, limits'

/**
 * The key statements both adapters run (placeholders `?`; the PostgreSQL adapter numbers them).
 * A second revoke keeps the earlier time (a revoke "now" shortens a rotated key's grace); revoked ids are those
 * revoked at or before a time (a rotated key is revoked in the future), read through the partial index on revoked
 * keys (its `IS NOT NULL` is stated so that both planners match the index). A touch keeps the later time.
 */
export const API_KEY_SQL = {
  insert: `INSERT INTO api_keys (id, key_hash, name, type, origins, created_at_ms, revoked_at_ms, account_id, key_prefix,
    last_used_at_ms, limits) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  byHash: `SELECT ${COLUMNS} FROM api_keys WHERE key_hash = ?`,
  byId: `SELECT ${COLUMNS} FROM api_keys WHERE id = ?`,
  all: `SELECT ${COLUMNS} FROM api_keys ORDER BY created_at_ms, id`,
  ofAccount: `SELECT ${COLUMNS} FROM api_keys WHERE account_id = ? ORDER BY created_at_ms, id`,
  // Parameters: at, at, id.
  revoke: `UPDATE api_keys SET revoked_at_ms = CASE WHEN revoked_at_ms IS NULL OR revoked_at_ms > ? THEN ? ELSE
    revoked_at_ms END WHERE id = ?`,
  revokedIds: 'SELECT id FROM api_keys WHERE revoked_at_ms IS NOT NULL AND revoked_at_ms <= ? ORDER BY id',
  // Parameters: at, id, at.
  touch: 'UPDATE api_keys SET last_used_at_ms = ? WHERE id = ? AND (last_used_at_ms IS NULL OR last_used_at_ms < ?)',
  secret: 'SELECT value FROM secrets WHERE name = ?',
} as const

/** The parameters of `API_KEY_SQL.insert`. */
export function apiKeyParams(record: ApiKeyRecord, keyHash: string): ApiKeySqlValue[] {
  return [
    record.id,
    keyHash,
    record.name,
    record.type,
    JSON.stringify(record.origins),
    record.createdAtMs,
    record.revokedAtMs ?? null,
    record.accountId ?? null,
    record.prefix ?? null,
    record.lastUsedAtMs ?? null,
    record.limits === undefined ? null : JSON.stringify(record.limits),
  ]
}

/**
 * The UPDATE of `updateApiKey`: the patch's fields, answering the new row (RETURNING, in both adapters); undefined for
 * an empty patch (nothing to write: the caller reads the key). Column names are fixed here, never taken from the patch.
 */
export function apiKeyUpdate(id: string, patch: ApiKeyPatch): { sql: string; params: ApiKeySqlValue[] } | undefined {
  const sets: [string, ApiKeySqlValue][] = []
  if (patch.name !== undefined) sets.push(['name', patch.name])
  if (patch.origins !== undefined) sets.push(['origins', JSON.stringify(patch.origins)])
  if (patch.limits !== undefined) sets.push(['limits', patch.limits === null ? null : JSON.stringify(patch.limits)])
  if (sets.length === 0) return undefined
  return {
    sql: `UPDATE api_keys SET ${sets.map(([c]) => `${c} = ?`).join(', ')} WHERE id = ? RETURNING ${COLUMNS}`,
    params: [...sets.map(([, v]) => v), id],
  }
}

/** The touches of `touchApiKeys`, one per key (its latest time), by id: every writer locks the rows in one order. */
export function latestTouches(
  used: readonly { readonly id: string; readonly atMs: number }[],
): { id: string; atMs: number }[] {
  const latest = new Map<string, number>()
  for (const { id, atMs } of used) latest.set(id, Math.max(atMs, latest.get(id) ?? -Infinity))
  return [...latest].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([id, atMs]) => ({ id, atMs }))
}

const present = (v: unknown) => v !== null && v !== undefined

/** An `api_keys` row of either adapter as a record (integers may come back as strings); absent stays absent. */
export function apiKeyFromRow(r: Record<string, unknown>): ApiKeyRecord {
  return {
    id: r.id as string,
    name: r.name as string,
    type: r.type as ApiKeyType,
    origins: JSON.parse(r.origins as string) as string[],
    createdAtMs: Number(r.created_at_ms),
    ...(present(r.revoked_at_ms) ? { revokedAtMs: Number(r.revoked_at_ms) } : {}),
    ...(present(r.account_id) ? { accountId: r.account_id as string } : {}),
    ...(present(r.key_prefix) ? { prefix: r.key_prefix as string } : {}),
    ...(present(r.last_used_at_ms) ? { lastUsedAtMs: Number(r.last_used_at_ms) } : {}),
    ...(present(r.limits) ? { limits: JSON.parse(r.limits as string) as ApiKeyLimits } : {}),
  }
}
