import type { ApiKeyType } from '../store/index.ts'
import type { RateLimitRule } from './rate-limit.ts'
import { InvalidApiKeySpecError } from './errors.ts'

/**
 * The limits by key type (docs/API.md, "Rate limits"). Issuance is
 * strictest for server keys (they must cache their token for its whole life); calls are limited
 * per (key, IP): mobile keys finely (apps on many IPs), web keys heavily and on few IPs per token,
 * server keys loosely (one backend makes many calls).
 */
export interface AuthLimits {
  /** Token issuance per API key. */
  readonly issuancePerKey: Readonly<Record<ApiKeyType, RateLimitRule>>
  /** Issuance attempts per client IP, whatever the key (valid or not: key guessing counts too). */
  readonly issuancePerIp: RateLimitRule
  /** Authenticated calls per (API key, client IP). */
  readonly callsPerIp: Readonly<Record<ApiKeyType, RateLimitRule>>
  /** Distinct IPs one web token may be used from, per window. */
  readonly webIpsPerToken: { readonly max: number; readonly windowMs: number }
  /** Calls per client IP on the routes served without a token (Hyperion's API: its own default, 1,000 a minute). */
  readonly publicCallsPerIp: RateLimitRule
}

const MINUTE = 60_000

export const DEFAULT_AUTH_LIMITS: AuthLimits = {
  issuancePerKey: {
    server: { limit: 10, windowMs: 60 * MINUTE },
    web: { limit: 120, windowMs: MINUTE },
    mobile: { limit: 600, windowMs: MINUTE },
  },
  issuancePerIp: { limit: 60, windowMs: MINUTE },
  callsPerIp: {
    server: { limit: 60_000, windowMs: MINUTE },
    web: { limit: 300, windowMs: MINUTE },
    mobile: { limit: 600, windowMs: MINUTE },
  },
  webIpsPerToken: { max: 5, windowMs: 60 * MINUTE },
  publicCallsPerIp: { limit: 1000, windowMs: MINUTE },
}

const isRule = (v: unknown): v is RateLimitRule =>
  typeof v === 'object' &&
  v !== null &&
  Number.isInteger((v as RateLimitRule).limit) &&
  (v as RateLimitRule).limit >= 1 &&
  Number.isInteger((v as RateLimitRule).windowMs) &&
  (v as RateLimitRule).windowMs >= 1000

/**
 * `--rate-limits` JSON: any part of AuthLimits, merged over the defaults, e.g.
 * `{"callsPerIp":{"server":{"limit":1000000,"windowMs":60000}}}`. Throws a one-line error naming the bad part.
 */
export function parseAuthLimits(json: string): AuthLimits {
  let raw: Record<string, unknown>
  try {
    raw = JSON.parse(json)
  } catch {
    throw InvalidApiKeySpecError({ field: 'rate-limits', reason: 'not JSON' })
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw InvalidApiKeySpecError({ field: 'rate-limits', reason: 'must be a JSON object' })
  const out: Record<string, unknown> = { ...DEFAULT_AUTH_LIMITS }
  for (const [field, value] of Object.entries(raw)) {
    if (field === 'issuancePerKey' || field === 'callsPerIp') {
      const merged: Record<string, unknown> = { ...DEFAULT_AUTH_LIMITS[field] }
      for (const [type, rule] of Object.entries((value ?? {}) as object)) {
        if (!(type in merged) || !isRule(rule))
          throw InvalidApiKeySpecError({
            field: `rate-limits.${field}.${type}`,
            reason: 'must be {"limit": n >= 1, "windowMs": ms >= 1000} for mobile, web or server',
          })
        merged[type] = rule
      }
      out[field] = merged
    } else if (field === 'issuancePerIp' || field === 'publicCallsPerIp') {
      if (!isRule(value))
        throw InvalidApiKeySpecError({
          field: `rate-limits.${field}`,
          reason: 'must be {"limit": n >= 1, "windowMs": ms >= 1000}',
        })
      out[field] = value
    } else if (field === 'webIpsPerToken') {
      const v = value as { max?: unknown; windowMs?: unknown }
      if (
        !Number.isInteger(v?.max) ||
        (v.max as number) < 1 ||
        !Number.isInteger(v?.windowMs) ||
        (v.windowMs as number) < 1000
      )
        throw InvalidApiKeySpecError({
          field: 'rate-limits.webIpsPerToken',
          reason: 'must be {"max": n >= 1, "windowMs": ms >= 1000}',
        })
      out[field] = value
    } else
      throw InvalidApiKeySpecError({
        field: `rate-limits.${field}`,
        reason: 'unknown; expected issuancePerKey, issuancePerIp, callsPerIp, webIpsPerToken or publicCallsPerIp',
      })
  }
  return out as unknown as AuthLimits
}
