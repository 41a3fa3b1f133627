import { createHash, randomBytes } from 'node:crypto'
import type { ApiKeyLimits, ApiKeyPatch, ApiKeyRecord, ApiKeyType, KeyStore } from '../store/index.ts'
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

/** What a new key is made of. */
export interface NewApiKey {
  readonly type: ApiKeyType
  readonly name: string
  readonly origins?: readonly string[]
  /** The portal account that owns it (absent: the operator's, from `antler keys create`). */
  readonly accountId?: string
  readonly limits?: ApiKeyLimits
}

/** Creating, listing, revoking, rotating and checking API keys, over the store's key port. */
export interface ApiKeyService {
  create(args: NewApiKey): Promise<CreatedApiKey>
  list(): Promise<ApiKeyRecord[]>
  /** An account's keys, oldest first. */
  listOf(accountId: string): Promise<ApiKeyRecord[]>
  /** The key with this id (revoked ones too); undefined when unknown. */
  find(id: string): Promise<ApiKeyRecord | undefined>
  /** False when no key has this id. */
  revoke(id: string): Promise<boolean>
  /**
   * A new key with the old one's name, type, origins, limits and account; the old one is revoked `graceMs` from now
   * (0: at once), its tokens with it.
   */
  rotate(id: string, graceMs: number): Promise<CreatedApiKey & { readonly previous: ApiKeyRecord }>
  /** Changes name, origins (web keys) or limits, validated as at creation; undefined when no such key. */
  update(id: string, patch: ApiKeyPatch): Promise<ApiKeyRecord | undefined>
  /**
   * The live record of a key string; throws `auth_invalid_api_key_error` when it is missing, malformed, unknown or
   * revoked.
   */
  authenticate(key: unknown): Promise<ApiKeyRecord>
}

/** A key name: 1 to 64 printable ASCII characters. */
function checkedName(name: string): string {
  if (!/^[\x20-\x7e]{1,64}$/.test(name))
    throw InvalidApiKeySpecError({ field: 'name', reason: 'must be 1 to 64 printable ASCII characters' })
  return name
}

/** Origins of a key of this type: web keys only, each normalized, without repeats. */
function checkedOrigins(type: ApiKeyType, origins: readonly string[]): string[] {
  if (type !== 'web' && origins.length > 0)
    throw InvalidApiKeySpecError({ field: 'origin', reason: 'only web keys carry origins' })
  return [...new Set(origins.map(normalizeOrigin))]
}

/** Most a per-key override may allow (the per-type defaults are far below). */
const MAX_LIMIT = 1_000_000

/** Per-key limit overrides: whole numbers from 1 to 1,000,000; an empty set is none. */
function checkedLimits(limits: ApiKeyLimits | undefined): ApiKeyLimits | undefined {
  if (!limits) return undefined
  const out: { callsPerMinute?: number; tokensPerHour?: number } = {}
  for (const field of ['callsPerMinute', 'tokensPerHour'] as const) {
    const value = limits[field]
    if (value === undefined) continue
    if (!Number.isInteger(value) || value < 1 || value > MAX_LIMIT)
      throw InvalidApiKeySpecError({ field, reason: `must be a whole number from 1 to ${MAX_LIMIT}` })
    out[field] = value
  }
  return Object.keys(out).length > 0 ? out : undefined
}

/** The API key service: keys are random, stored as their SHA-256, identified by a short public id. */
export function createApiKeyService(deps: { store: KeyStore; now?: () => number }): ApiKeyService {
  const now = deps.now ?? Date.now
  async function create({ type, name, origins = [], accountId, limits }: NewApiKey): Promise<CreatedApiKey> {
    if (!API_KEY_TYPES.includes(type))
      throw InvalidApiKeySpecError({ field: 'type', reason: `must be one of ${API_KEY_TYPES.join(', ')}` })
    const secret = randomBytes(KEY_BYTES).toString('hex')
    const key = `${type}_${secret}`
    const checkedLimitSet = checkedLimits(limits)
    const record: ApiKeyRecord = {
      id: `key_${randomBytes(8).toString('hex')}`,
      name: checkedName(name),
      type,
      origins: checkedOrigins(type, origins),
      createdAtMs: now(),
      prefix: `${type}_${secret.slice(0, 4)}`,
      ...(accountId === undefined ? {} : { accountId }),
      ...(checkedLimitSet === undefined ? {} : { limits: checkedLimitSet }),
    }
    await deps.store.insertApiKey({ record, keyHash: hashApiKey(key) })
    return { record, key }
  }
  return {
    create,
    list: () => deps.store.apiKeys(),
    listOf: (accountId) => deps.store.apiKeysOf(accountId),
    find: (id) => deps.store.apiKeyById(id),
    revoke: (id) => deps.store.revokeApiKey({ id, atMs: now() }),
    async rotate(id, graceMs) {
      const previous = await deps.store.apiKeyById(id)
      if (!previous) throw AuthInvalidApiKeyError({ reason: 'unknown' })
      if (previous.revokedAtMs !== undefined && previous.revokedAtMs <= now())
        throw AuthInvalidApiKeyError({ reason: 'revoked' })
      const created = await create({
        type: previous.type,
        name: previous.name,
        origins: previous.origins,
        accountId: previous.accountId,
        limits: previous.limits,
      })
      await deps.store.revokeApiKey({ id, atMs: now() + Math.max(0, graceMs) })
      return { ...created, previous: (await deps.store.apiKeyById(id)) as ApiKeyRecord }
    },
    async update(id, patch) {
      const current = await deps.store.apiKeyById(id)
      if (!current) return undefined
      return deps.store.updateApiKey(id, {
        ...(patch.name === undefined ? {} : { name: checkedName(patch.name) }),
        ...(patch.origins === undefined ? {} : { origins: checkedOrigins(current.type, patch.origins) }),
        ...(patch.limits === undefined
          ? {}
          : { limits: patch.limits === null ? null : (checkedLimits(patch.limits) ?? null) }),
      })
    },
    async authenticate(key) {
      if (key === undefined || key === null || key === '') throw AuthInvalidApiKeyError({ reason: 'missing' })
      if (typeof key !== 'string' || !apiKeyType(key)) throw AuthInvalidApiKeyError({ reason: 'malformed' })
      const record = await deps.store.apiKeyByHash(hashApiKey(key))
      if (!record) throw AuthInvalidApiKeyError({ reason: 'unknown' })
      if (record.revokedAtMs !== undefined && record.revokedAtMs <= now())
        throw AuthInvalidApiKeyError({ reason: 'revoked' })
      return record
    },
  }
}
