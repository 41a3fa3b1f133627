import { defineError } from '../error-definition.ts'

/**
 * Why a token was refused, in `details.reason`. dfuse answered every token failure with `auth_invalid_token_error`;
 * the reason tells the cases apart.
 */
export type InvalidTokenReason =
  'missing' | 'malformed' | 'bad_signature' | 'expired' | 'not_yet_valid' | 'revoked' | 'wrong_claims'

const TOKEN_REASON_TEXT: Record<InvalidTokenReason, string> = {
  missing: 'required authorization token not found',
  malformed: 'the token is not a well-formed JWT',
  bad_signature: 'the token was not signed by this server',
  expired: 'the token has expired',
  not_yet_valid: 'the token is not valid yet',
  revoked: 'the API key of the token was revoked',
  wrong_claims: 'the token does not carry the claims this server issues',
}

/** Why an API key was refused at issuance. */
export type InvalidApiKeyReason = 'missing' | 'malformed' | 'unknown' | 'revoked'

const API_KEY_REASON_TEXT: Record<InvalidApiKeyReason, string> = {
  missing: 'api_key is required',
  malformed: 'api_key must start with mobile_, web_ or server_',
  unknown: 'the API key is unknown',
  revoked: 'the API key was revoked',
}

/** The codes of tokens, API keys and rate limits. */
export const AUTH_ERRORS = {
  auth_invalid_token_error: defineError<{ reason: InvalidTokenReason }>({
    status: 401,
    message: (d) => `Unable to correctly decode provided token: ${TOKEN_REASON_TEXT[d.reason]}.`,
  }),
  auth_invalid_api_key_error: defineError<{ reason: InvalidApiKeyReason }>({
    status: 401,
    message: (d) => `Invalid API key: ${API_KEY_REASON_TEXT[d.reason]}.`,
  }),
  auth_origin_not_allowed_error: defineError<{ origin: string | null }>({
    status: 403,
    message: (d) =>
      d.origin === null
        ? 'This web key requires an Origin header registered with the key.'
        : `The origin ${JSON.stringify(d.origin)} is not registered with this web key.`,
  }),
  auth_too_many_ips_error: defineError<{ maximum_ip_count: number }>({
    status: 403,
    message: (d) =>
      `A web key's token may be used from at most ${d.maximum_ip_count} IP addresses; issue a token per client.`,
  }),
  auth_invalid_key_spec_error: defineError<{ field: string; reason: string }>({
    status: 400,
    message: (d) => `${d.field}: ${d.reason}`,
  }),
  rate_limit_exceeded_error: defineError<{ scope: string; limit: number; retry_after_seconds: number }>({
    status: 429,
    retryable: true,
    message: (d) => `Rate limit exceeded (${d.scope}); retry in ${d.retry_after_seconds} s.`,
  }),
  // The reason (Redis's own error text) stays in the message: it may name an internal address.
  rate_limit_backend_error: defineError<{ operation: string }, { operation: string; reason: string }>({
    status: 503,
    retryable: true,
    message: (a) => `rate limit: ${a.operation} failed: ${a.reason}`,
    details: (a) => ({ operation: a.operation }),
  }),
  rate_limit_rule_error: defineError<{ field: string }, { field: string; value: unknown }>({
    status: 500,
    message: (a) =>
      `rate limit: ${a.field} must be a non-negative integer${a.field === 'windowMs' ? ' above 0' : ''}, ` +
      `got ${String(a.value)}`,
    details: (a) => ({ field: a.field }),
  }),
} as const
