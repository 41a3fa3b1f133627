import { createHash, randomBytes } from 'node:crypto'
import type { ApiKeyRecord, ApiKeyType, KeyStore } from '../store/index.ts'
import { AuthInvalidApiKeyError, InvalidApiKeySpecError } from './errors.ts'

/** The key types, strictest issuance first. */
export const API_KEY_TYPES: readonly ApiKeyType[] = ['server', 'web', 'mobile']

/** 32 random bytes (256 bits) after the type prefix, hex: URL- and shell-safe. */
const KEY_BYTES = 32
const KEY_PATTERN = /^(mobile|web|server)_([0-9a-f]{64})$/

/** SHA-256 (hex) of a key string: the only form of the key the store keeps. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex')
}

/** The type a key string claims by its prefix; undefined when it is not a key this server makes. */
export function apiKeyType(key: string): ApiKeyType | undefined {
  return KEY_PATTERN.exec(key)?.[1] as ApiKeyType | undefined
}

/** An origin as browsers send it: scheme, host and optional port, no path. */
export function normalizeOrigin(value: string): string {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw InvalidApiKeySpecError({
      field: 'origin',
      reason: `${JSON.stringify(value)} is not a URL like https://app.example.com`,
    })
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw InvalidApiKeySpecError({ field: 'origin', reason: `${JSON.stringify(value)} must be http:// or https://` })
  if (url.pathname !== '/' || url.search || url.hash || url.username)
    throw InvalidApiKeySpecError({
      field: 'origin',
      reason: `${JSON.stringify(value)} must be an origin (scheme://host[:port]) without a path`,
    })
  return url.origin
}

/** A key as `antler keys create` prints it: the only time the key string exists outside its holder. */
export interface CreatedApiKey {
  readonly record: ApiKeyRecord
  readonly key: string
}

/** Creating, listing, revoking and checking API keys, over the store's key port. */
export interface ApiKeyService {
  create(args: { type: ApiKeyType; name: string; origins?: readonly string[] }): Promise<CreatedApiKey>
  list(): Promise<ApiKeyRecord[]>
  /** False when no key has this id. */
  revoke(id: string): Promise<boolean>
  /**
   * The live record of a key string; throws `auth_invalid_api_key_error` when it is missing, malformed, unknown or
   * revoked.
   */
  authenticate(key: unknown): Promise<ApiKeyRecord>
}

/** The API key service: keys are random, stored as their SHA-256, identified by a short public id. */
export function createApiKeyService(deps: { store: KeyStore; now?: () => number }): ApiKeyService {
  const now = deps.now ?? Date.now
  return {
    async create({ type, name, origins = [] }) {
      if (!API_KEY_TYPES.includes(type))
        throw InvalidApiKeySpecError({ field: 'type', reason: `must be one of ${API_KEY_TYPES.join(', ')}` })
      if (!/^[\x20-\x7e]{1,64}$/.test(name))
        throw InvalidApiKeySpecError({ field: 'name', reason: 'must be 1 to 64 printable ASCII characters' })
      if (type !== 'web' && origins.length > 0)
        throw InvalidApiKeySpecError({ field: 'origin', reason: 'only web keys carry origins' })
      const key = `${type}_${randomBytes(KEY_BYTES).toString('hex')}`
      const record: ApiKeyRecord = {
        id: `key_${randomBytes(8).toString('hex')}`,
        name,
        type,
        origins: [...new Set(origins.map(normalizeOrigin))],
        createdAtMs: now(),
      }
      await deps.store.insertApiKey({ record, keyHash: hashApiKey(key) })
      return { record, key }
    },
    list: () => deps.store.apiKeys(),
    revoke: (id) => deps.store.revokeApiKey({ id, atMs: now() }),
    async authenticate(key) {
      if (key === undefined || key === null || key === '') throw AuthInvalidApiKeyError({ reason: 'missing' })
      if (typeof key !== 'string' || !apiKeyType(key)) throw AuthInvalidApiKeyError({ reason: 'malformed' })
      const record = await deps.store.apiKeyByHash(hashApiKey(key))
      if (!record) throw AuthInvalidApiKeyError({ reason: 'unknown' })
      if (record.revokedAtMs !== undefined) throw AuthInvalidApiKeyError({ reason: 'revoked' })
      return record
    },
  }
}
