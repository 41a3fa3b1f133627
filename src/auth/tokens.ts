import { randomUUID } from 'node:crypto'
import { SignJWT, decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose'
import type { ApiKeyRecord, ApiKeyType } from '../store/index.ts'
import { AuthInvalidTokenError } from './errors.ts'
import type { SigningKey } from './signing-key.ts'

/** The issuer every Antler token carries. */
export const TOKEN_ISSUER = 'antler'

/** The claims of an Antler JWT (docs/API.md, "Tokens"). */
export interface TokenClaims {
  readonly iss: string
  /** The key holder: `key:<key id>` (Antler has no user accounts; a key is its own subject). */
  readonly sub: string
  /** The API key id. */
  readonly aki: string
  /** The API key type. */
  readonly usg: ApiKeyType
  readonly iat: number
  readonly exp: number
  readonly jti: string
  /** Web keys: the origins the token may be used from. */
  readonly origin?: readonly string[]
  /** The earliest block a stream may start from (1: any). */
  readonly stblk: number
}

/** `/v1/auth/issue`'s answer. */
export interface IssuedToken {
  readonly token: string
  /** UNIX seconds. */
  readonly expires_at: number
}

/** Signs tokens for live keys. */
export function createTokenIssuer(deps: { key: SigningKey; ttlSeconds: number; now?: () => number }): {
  issue(key: ApiKeyRecord): Promise<IssuedToken>
} {
  const now = deps.now ?? Date.now
  return {
    async issue(key) {
      const iat = Math.floor(now() / 1000)
      const exp = iat + deps.ttlSeconds
      const payload: Record<string, unknown> = { aki: key.id, usg: key.type, stblk: 1 }
      if (key.type === 'web') payload.origin = key.origins
      const token = await new SignJWT(payload)
        .setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid: deps.key.publicJwk.kid })
        .setIssuer(TOKEN_ISSUER)
        .setSubject(`key:${key.id}`)
        .setIssuedAt(iat)
        .setExpirationTime(exp)
        .setJti(randomUUID())
        .sign(deps.key.privateKey)
      return { token, expires_at: exp }
    },
  }
}

/** Checks presented tokens. */
export interface TokenVerifier {
  /** The claims of a valid token of a live key; throws `auth_invalid_token_error` with the reason otherwise. */
  verify(token: string | undefined): Promise<TokenClaims>
}

const KEY_TYPES: ReadonlySet<string> = new Set(['mobile', 'web', 'server'])

function claimsOf(payload: Record<string, unknown>): TokenClaims | undefined {
  const { iss, sub, aki, usg, iat, exp, jti, origin, stblk } = payload
  if (
    typeof aki !== 'string' ||
    typeof usg !== 'string' ||
    !KEY_TYPES.has(usg) ||
    typeof iat !== 'number' ||
    typeof exp !== 'number' ||
    typeof jti !== 'string'
  )
    return undefined
  if (typeof sub !== 'string' || typeof iss !== 'string' || typeof stblk !== 'number') return undefined
  if (origin !== undefined && !(Array.isArray(origin) && origin.every((o) => typeof o === 'string'))) return undefined
  return { iss, sub, aki, usg: usg as ApiKeyType, iat, exp, jti, origin: origin as string[] | undefined, stblk }
}

/**
 * Verifies ES256 tokens of this server. A verified token is cached (bounded, oldest dropped
 * first), so a client presenting the same token again costs a map lookup, an expiry comparison
 * and a revocation-set lookup; the signature is checked once per token.
 */
export function createTokenVerifier(deps: {
  key: SigningKey
  isRevoked: (keyId: string) => boolean
  now?: () => number
  cacheSize?: number
}): TokenVerifier {
  const now = deps.now ?? Date.now
  const cacheSize = deps.cacheSize ?? 10_000
  const cache = new Map<string, TokenClaims>()
  const live = (claims: TokenClaims): TokenClaims => {
    // The key id goes with these refusals (the token's signature was checked): usage counts them for that key.
    if (claims.exp <= now() / 1000)
      throw Object.assign(AuthInvalidTokenError({ reason: 'expired' }), { keyId: claims.aki })
    if (deps.isRevoked(claims.aki))
      throw Object.assign(AuthInvalidTokenError({ reason: 'revoked' }), { keyId: claims.aki })
    return claims
  }
  return {
    async verify(token) {
      if (token === undefined || token === '') throw AuthInvalidTokenError({ reason: 'missing' })
      const cached = cache.get(token)
      if (cached) return live(cached)
      let alg: string | undefined
      try {
        alg = decodeProtectedHeader(token).alg
      } catch {
        throw AuthInvalidTokenError({ reason: 'malformed' })
      }
      // `alg: none`, HS256 keyed with the public key and the like are refused before any key is used.
      if (alg !== 'ES256') throw AuthInvalidTokenError({ reason: 'bad_signature' })
      let payload: Record<string, unknown>
      try {
        payload = (
          await jwtVerify(token, deps.key.publicKey, {
            algorithms: ['ES256'],
            issuer: TOKEN_ISSUER,
            currentDate: new Date(now()),
            clockTolerance: 5,
          })
        ).payload
      } catch (error) {
        if (error instanceof joseErrors.JWTExpired) throw AuthInvalidTokenError({ reason: 'expired' })
        if (error instanceof joseErrors.JWSSignatureVerificationFailed)
          throw AuthInvalidTokenError({ reason: 'bad_signature' })
        if (error instanceof joseErrors.JWTClaimValidationFailed)
          throw AuthInvalidTokenError({
            reason: error.claim === 'nbf' || error.claim === 'iat' ? 'not_yet_valid' : 'wrong_claims',
          })
        throw AuthInvalidTokenError({ reason: 'malformed' })
      }
      const claims = claimsOf(payload)
      if (!claims) throw AuthInvalidTokenError({ reason: 'wrong_claims' })
      live(claims)
      if (cache.size >= cacheSize) cache.delete(cache.keys().next().value!)
      cache.set(token, claims)
      return claims
    },
  }
}
