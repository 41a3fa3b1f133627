import type { ErrorDefinition } from './error-definition.ts'
import { AUTH_ERRORS } from './error-codes/auth.ts'
import { HTTP_ERRORS } from './error-codes/http.ts'
import { HYPERION_ERRORS } from './error-codes/hyperion.ts'
import { INGEST_ERRORS } from './error-codes/ingest.ts'
import { PORTAL_ERRORS } from './error-codes/portal.ts'
import { PUSH_ERRORS } from './error-codes/push.ts'
import { STATE_ERRORS } from './error-codes/state.ts'
import { STREAM_ERRORS } from './error-codes/stream.ts'
import { WEBHOOK_ERRORS } from './error-codes/webhooks.ts'

/**
 * Every error code Antler raises, with its HTTP status, message and `details`: the one place codes are defined.
 * `AntlerError` takes its code from here, so a code missing here does not compile; docs/ERRORS.md mirrors it (its
 * test reads this object). The tables are split by area only to keep files short; a code is in exactly one.
 */
export const ERROR_REGISTRY = {
  ...HTTP_ERRORS,
  ...STATE_ERRORS,
  ...STREAM_ERRORS,
  ...AUTH_ERRORS,
  ...PUSH_ERRORS,
  ...INGEST_ERRORS,
  ...WEBHOOK_ERRORS,
  ...PORTAL_ERRORS,
  ...HYPERION_ERRORS,
} as const

/** Every error code (the wire's `code`). */
export type ErrorCode = keyof typeof ERROR_REGISTRY

/** What a code is raised with (its details, or more where the message needs more). */
export type ErrorArgs<C extends ErrorCode> =
  (typeof ERROR_REGISTRY)[C] extends ErrorDefinition<infer Args, object> ? Args : never

/** The wire `details` of a code. */
export type ErrorDetails<C extends ErrorCode> = ReturnType<(typeof ERROR_REGISTRY)[C]['details']>

/** The registry's entries, typed for generic use (the docs test, the error class). */
export function errorDefinitions(): [ErrorCode, ErrorDefinition<never, object>][] {
  return Object.entries(ERROR_REGISTRY) as [ErrorCode, ErrorDefinition<never, object>][]
}
