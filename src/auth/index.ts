export {
  AuthInvalidTokenError,
  AuthInvalidApiKeyError,
  AuthOriginNotAllowedError,
  AuthTooManyIpsError,
  RateLimitExceededError,
  InvalidApiKeySpecError,
  type InvalidTokenReason,
} from './errors.ts'
export {
  API_KEY_TYPES,
  apiKeyType,
  hashApiKey,
  normalizeOrigin,
  createApiKeyService,
  type ApiKeyService,
  type CreatedApiKey,
  type NewApiKey,
} from './api-keys.ts'
export { signingKeyFromSecret, type SigningKey } from './signing-key.ts'
export {
  TOKEN_ISSUER,
  createTokenIssuer,
  createTokenVerifier,
  type TokenClaims,
  type IssuedToken,
  type TokenVerifier,
} from './tokens.ts'
export { createRevocationWatch, type RevocationWatch } from './revocations.ts'
export { DEFAULT_AUTH_LIMITS, parseAuthLimits, type AuthLimits } from './limits.ts'
export { createAuthService, refusedKeyId, type AuthService, type Caller, type Admission } from './auth-service.ts'
export {
  createMemoryRateLimiter,
  createRedisRateLimiter,
  type RateLimiter,
  type RateLimitRule,
  type RateLimitDecision,
} from './rate-limit.ts'
export { authorizationToken } from './presented-token.ts'
