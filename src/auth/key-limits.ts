import type { ApiKeyLimits } from '../store/index.ts'
import type { RateLimitRule } from './rate-limit.ts'

const MINUTE_MS = 60_000
const HOUR_MS = 60 * MINUTE_MS
/** Keys whose overrides are kept at once (the least recently read are dropped first). */
const MAX_KEYS = 10_000

/** The per-key overrides as limiter rules: calls per minute per IP, tokens per hour. */
export const callsRule = (limits: ApiKeyLimits | undefined): RateLimitRule | undefined =>
  limits?.callsPerMinute === undefined ? undefined : { limit: limits.callsPerMinute, windowMs: MINUTE_MS }
export const issuanceRule = (limits: ApiKeyLimits | undefined): RateLimitRule | undefined =>
  limits?.tokensPerHour === undefined ? undefined : { limit: limits.tokensPerHour, windowMs: HOUR_MS }

/**
 * A key's limit overrides as last read, re-read at most every `ttlMs` (1 s): an edit in the portal (any replica)
 * applies to calls within a second, and a busy key costs one store read a second, not one per call. A cached answer
 * is returned without a promise (the hot path).
 */
export interface KeyLimitsCache {
  limitsOf(keyId: string): ApiKeyLimits | undefined | Promise<ApiKeyLimits | undefined>
}

export function createKeyLimitsCache(deps: {
  read: (keyId: string) => Promise<ApiKeyLimits | undefined>
  ttlMs?: number
  now?: () => number
}): KeyLimitsCache {
  const ttlMs = deps.ttlMs ?? 1000
  const now = deps.now ?? Date.now
  const kept = new Map<string, { readonly atMs: number; readonly limits: ApiKeyLimits | undefined }>()
  // Reads in flight, shared by the calls that arrive meanwhile: one read per key, however many calls wait on it.
  const reading = new Map<string, Promise<ApiKeyLimits | undefined>>()
  return {
    limitsOf(keyId) {
      const entry = kept.get(keyId)
      if (entry && now() - entry.atMs < ttlMs) return entry.limits
      const pending = reading.get(keyId)
      if (pending) return pending
      const read = deps
        .read(keyId)
        .then((limits) => {
          kept.delete(keyId)
          if (kept.size >= MAX_KEYS) kept.delete(kept.keys().next().value as string)
          kept.set(keyId, { atMs: now(), limits })
          return limits
        })
        .finally(() => reading.delete(keyId))
      reading.set(keyId, read)
      return read
    },
  }
}
