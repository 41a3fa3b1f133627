import type { ApiKeyRecord, ApiKeyType } from './types.ts'

/**
 * The key statements both adapters run (placeholders `?`; the PostgreSQL adapter numbers them).
 * A second revoke keeps the first time (coalesce); revoked ids are read through a partial index.
 */
export const API_KEY_SQL = {
  insert:
    'INSERT INTO api_keys (id, key_hash, name, type, origins, created_at_ms, revoked_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)',
  byHash: 'SELECT id, name, type, origins, created_at_ms, revoked_at_ms FROM api_keys WHERE key_hash = ?',
  byId: 'SELECT id, name, type, origins, created_at_ms, revoked_at_ms FROM api_keys WHERE id = ?',
  all: 'SELECT id, name, type, origins, created_at_ms, revoked_at_ms FROM api_keys ORDER BY created_at_ms, id',
  revoke: 'UPDATE api_keys SET revoked_at_ms = coalesce(revoked_at_ms, ?) WHERE id = ?',
  revokedIds: 'SELECT id FROM api_keys WHERE revoked_at_ms IS NOT NULL ORDER BY id',
  secret: 'SELECT value FROM secrets WHERE name = ?',
} as const

/** The parameters of `API_KEY_SQL.insert`. */
export function apiKeyParams(record: ApiKeyRecord, keyHash: string): (string | number | null)[] {
  return [
    record.id,
    keyHash,
    record.name,
    record.type,
    JSON.stringify(record.origins),
    record.createdAtMs,
    record.revokedAtMs ?? null,
  ]
}

/** An `api_keys` row of either adapter as a record (integers may come back as strings). */
export function apiKeyFromRow(r: Record<string, unknown>): ApiKeyRecord {
  const record: ApiKeyRecord = {
    id: r.id as string,
    name: r.name as string,
    type: r.type as ApiKeyType,
    origins: JSON.parse(r.origins as string) as string[],
    createdAtMs: Number(r.created_at_ms),
  }
  return r.revoked_at_ms === null || r.revoked_at_ms === undefined
    ? record
    : { ...record, revokedAtMs: Number(r.revoked_at_ms) }
}
