import type { ApiKeyType } from '../store/index.ts'
import type { ApiKeyService } from './api-keys.ts'
import { AuthOriginNotAllowedError, AuthTooManyIpsError, RateLimitExceededError } from './errors.ts'
import type { AuthLimits } from './limits.ts'
import type { RateLimitDecision, RateLimiter, RateLimitRule } from './rate-limit.ts'
import type { RevocationWatch } from './revocations.ts'
import { callsRule, createKeyLimitsCache, issuanceRule } from './key-limits.ts'
import { createTokenIssuer, createTokenVerifier, type IssuedToken, type TokenClaims } from './tokens.ts'
import type { SigningKey } from './signing-key.ts'

/** Who is calling: what the API layer knows of a request before auth. */
export interface Caller {
  readonly ip: string
  /** The request's Origin header, when a browser sent one. */
  readonly origin?: string
}

/** A request admitted with a token: its claims and the limit it was counted against (for X-RateLimit-* headers). */
export interface Admission {
  readonly claims: TokenClaims
  readonly rate: RateLimitDecision
}

/** Issuance and admission: keys → tokens, tokens → claims, with the limits and origin rules of each key type. */
export interface AuthService {
  /**
   * `/v1/auth/issue`: a token for a live key, within its issuance limits and origin rules. A refusal once the key is
   * known carries its id (`keyId` on the error: usage counts it as that key's auth failure or 429).
   */
  issue(args: {
    apiKey: unknown
    caller: Caller
  }): Promise<{ issued: IssuedToken; rate: RateLimitDecision; type: ApiKeyType; keyId: string }>
  /**
   * Every call that needs a token: verified (cached), origin and IP rules, per-(key, IP) limit (the key's override,
   * else its type's). A refusal of a verified token carries its key id, as for issue.
   */
  admit(args: { token: string | undefined; caller: Caller }): Promise<Admission>
  /** A call to a route served without a token (Hyperion's): counted per client IP under `publicCallsPerIp`. */
  admitPublic(args: { caller: Caller }): Promise<RateLimitDecision>
  /** The public signing key, for `/.well-known/jwks.json`. */
  readonly jwks: { keys: SigningKey['publicJwk'][] }
}

/** The key a refusal concerns, on the error itself (as a limiter's decision is): usage counts it for that key. */
function withKeyId(error: unknown, keyId: string): unknown {
  return typeof error === 'object' && error !== null ? Object.assign(error, { keyId }) : error
}

/** The key id a refusal carries (withKeyId), if any. */
export const refusedKeyId = (error: unknown): string | undefined => {
  const keyId = (error as { keyId?: unknown } | undefined)?.keyId
  return typeof keyId === 'string' ? keyId : undefined
}

function originAllowed(
  origins: readonly string[] | undefined,
  origin: string | undefined,
  requireOrigin: boolean,
): boolean {
  if (origin === undefined) return !requireOrigin
  return origins === undefined || origins.length === 0 || origins.includes(origin)
}

/** The auth service over the key store, a signing key derived from the store's secret, and a rate limiter. */
export function createAuthService(deps: {
  keys: ApiKeyService
  signingKey: SigningKey
  revocations: RevocationWatch
  limiter: RateLimiter
  limits: AuthLimits
  ttlSeconds: number
  requireOrigin: boolean
  now?: () => number
}): AuthService {
  const issuer = createTokenIssuer({ key: deps.signingKey, ttlSeconds: deps.ttlSeconds, now: deps.now })
  const verifier = createTokenVerifier({ key: deps.signingKey, isRevoked: deps.revocations.isRevoked, now: deps.now })
  const overrides = createKeyLimitsCache({ read: async (id) => (await deps.keys.find(id))?.limits, now: deps.now })
  const limit = async (scope: string, bucket: string, rule: RateLimitRule): Promise<RateLimitDecision> => {
    const decision = await deps.limiter.hit(bucket, rule)
    if (!decision.allowed)
      throw Object.assign(
        RateLimitExceededError({ scope, limit: decision.limit, retryAfterSeconds: decision.retryAfterSeconds }),
        { decision },
      )
    return decision
  }
  return {
    jwks: { keys: [deps.signingKey.publicJwk] },
    async issue({ apiKey, caller }) {
      await limit('issuance per IP', `issue-ip:${caller.ip}`, deps.limits.issuancePerIp)
      const key = await deps.keys.authenticate(apiKey)
      try {
        if (key.type === 'web' && !originAllowed(key.origins, caller.origin, deps.requireOrigin))
          throw AuthOriginNotAllowedError({ origin: caller.origin })
        const rate = await limit(
          `issuance per ${key.type} key`,
          `issue-key:${key.id}`,
          issuanceRule(key.limits) ?? deps.limits.issuancePerKey[key.type],
        )
        return { issued: await issuer.issue(key), rate, type: key.type, keyId: key.id }
      } catch (error) {
        throw withKeyId(error, key.id)
      }
    },
    admitPublic: ({ caller }) => limit('public calls per IP', `public-ip:${caller.ip}`, deps.limits.publicCallsPerIp),
    async admit({ token, caller }) {
      const claims = await verifier.verify(token)
      try {
        if (claims.usg === 'web') {
          if (!originAllowed(claims.origin, caller.origin, deps.requireOrigin))
            throw AuthOriginNotAllowedError({ origin: caller.origin })
          const { max, windowMs } = deps.limits.webIpsPerToken
          if (!(await deps.limiter.admitMember(`web-ips:${claims.jti}`, caller.ip, max, windowMs)).allowed)
            throw AuthTooManyIpsError({ maxIps: max })
        }
        const override = overrides.limitsOf(claims.aki)
        const rule = callsRule(override instanceof Promise ? await override : override)
        const rate = await limit(
          `calls per IP for ${rule ? 'this' : claims.usg} key${rule ? '' : 's'}`,
          `calls:${claims.aki}:${caller.ip}`,
          rule ?? deps.limits.callsPerIp[claims.usg],
        )
        return { claims, rate }
      } catch (error) {
        throw withKeyId(error, claims.aki)
      }
    },
  }
}
