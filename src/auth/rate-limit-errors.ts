import { AntlerError } from '../antelope/index.ts'

/**
 * The shared rate-limit state (Redis) could not be reached or answered with an error; the call should be retried later.
 */
export function RateLimitBackendError(args: { operation: string; reason: string; cause?: unknown }): AntlerError {
  return new AntlerError(
    'rate_limit_backend_error',
    { operation: args.operation, reason: args.reason },
    { cause: args.cause },
  )
}

/** A rate-limit rule, member limit or back-off rule given by the caller is not a valid number (a programming error). */
export function RateLimitRuleError(args: { field: string; value: unknown }): AntlerError {
  return new AntlerError('rate_limit_rule_error', args)
}
