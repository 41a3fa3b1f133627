import { AntlerError, type InvalidApiKeyReason, type InvalidTokenReason } from '../antelope/index.ts'

export type { InvalidApiKeyReason, InvalidTokenReason }

/** A missing, malformed, forged, expired or revoked-key token (401). */
export function AuthInvalidTokenError(args: { reason: InvalidTokenReason }): AntlerError {
  return new AntlerError('auth_invalid_token_error', { reason: args.reason })
}

/** An unknown, malformed or revoked API key at issuance (401). */
export function AuthInvalidApiKeyError(args: { reason: InvalidApiKeyReason }): AntlerError {
  return new AntlerError('auth_invalid_api_key_error', { reason: args.reason })
}

/**
 * A web key (or its token) used from an Origin it was not registered for, or with no Origin under `--require-origin`
 * (403).
 */
export function AuthOriginNotAllowedError(args: { origin: string | undefined }): AntlerError {
  return new AntlerError('auth_origin_not_allowed_error', { origin: args.origin ?? null })
}

/** A web key's token used from more distinct IPs than web tokens allow (403). */
export function AuthTooManyIpsError(args: { maxIps: number }): AntlerError {
  return new AntlerError('auth_too_many_ips_error', { maximum_ip_count: args.maxIps })
}

/** A rate limit refused the call (429, with `Retry-After`). */
export function RateLimitExceededError(args: { scope: string; limit: number; retryAfterSeconds: number }): AntlerError {
  return new AntlerError('rate_limit_exceeded_error', {
    scope: args.scope,
    limit: args.limit,
    retry_after_seconds: args.retryAfterSeconds,
  })
}

/** `antler keys` was given a bad type, name or origin (400). */
export function InvalidApiKeySpecError(args: { field: string; reason: string }): AntlerError {
  return new AntlerError('auth_invalid_key_spec_error', { field: args.field, reason: args.reason })
}
