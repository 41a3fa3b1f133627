import { AntlerError } from '../antelope/index.ts'

/**
 * Why a token was refused, in `details.reason`. dfuse answered every token failure with
 * `auth_invalid_token_error`; the reason tells the cases apart.
 */
export type InvalidTokenReason =
  'missing' | 'malformed' | 'bad_signature' | 'expired' | 'not_yet_valid' | 'revoked' | 'wrong_claims'

const REASON_TEXT: Record<InvalidTokenReason, string> = {
  missing: 'required authorization token not found',
  malformed: 'the token is not a well-formed JWT',
  bad_signature: 'the token was not signed by this server',
  expired: 'the token has expired',
  not_yet_valid: 'the token is not valid yet',
  revoked: 'the API key of the token was revoked',
  wrong_claims: 'the token does not carry the claims this server issues',
}

/** A missing, malformed, forged, expired or revoked-key token (401). */
export function AuthInvalidTokenError(args: { reason: InvalidTokenReason }): AntlerError {
  return new AntlerError({
    code: 'auth_invalid_token_error',
    status: 401,
    message: `Unable to correctly decode provided token: ${REASON_TEXT[args.reason]}.`,
    details: { reason: args.reason },
  })
}

/** Why an API key was refused at issuance. */
export type InvalidApiKeyReason = 'missing' | 'malformed' | 'unknown' | 'revoked'

/** An unknown, malformed or revoked API key at issuance (401). */
export function AuthInvalidApiKeyError(args: { reason: InvalidApiKeyReason }): AntlerError {
  const text = {
    missing: 'api_key is required',
    malformed: 'api_key must start with mobile_, web_ or server_',
    unknown: 'the API key is unknown',
    revoked: 'the API key was revoked',
  }[args.reason]
  return new AntlerError({
    code: 'auth_invalid_api_key_error',
    status: 401,
    message: `Invalid API key: ${text}.`,
    details: { reason: args.reason },
  })
}

/**
 * A web key (or its token) used from an Origin it was not registered for, or with no Origin under `--require-origin`
 * (403).
 */
export function AuthOriginNotAllowedError(args: { origin: string | undefined }): AntlerError {
  return new AntlerError({
    code: 'auth_origin_not_allowed_error',
    status: 403,
    message:
      args.origin === undefined
        ? 'This web key requires an Origin header registered with the key.'
        : `The origin ${JSON.stringify(args.origin)} is not registered with this web key.`,
    details: { origin: args.origin ?? null },
  })
}

/** A web key's token used from more distinct IPs than web tokens allow (403). */
export function AuthTooManyIpsError(args: { maxIps: number }): AntlerError {
  return new AntlerError({
    code: 'auth_too_many_ips_error',
    status: 403,
    message: `A web key's token may be used from at most ${args.maxIps} IP addresses; issue a token per client.`,
    details: { maximum_ip_count: args.maxIps },
  })
}

/** A rate limit refused the call (429, with `Retry-After`). */
export function RateLimitExceededError(args: { scope: string; limit: number; retryAfterSeconds: number }): AntlerError {
  return new AntlerError({
    code: 'rate_limit_exceeded_error',
    status: 429,
    message: `Rate limit exceeded (${args.scope}); retry in ${args.retryAfterSeconds} s.`,
    details: { scope: args.scope, limit: args.limit, retry_after_seconds: args.retryAfterSeconds },
    retryable: true,
  })
}

/** `antler keys` was given a bad type, name or origin (400). */
export function InvalidApiKeySpecError(args: { field: string; reason: string }): AntlerError {
  return new AntlerError({
    code: 'auth_invalid_key_spec_error',
    status: 400,
    message: `${args.field}: ${args.reason}`,
    details: args,
  })
}
