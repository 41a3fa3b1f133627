import { defineError } from '../error-definition.ts'

/**
 * The codes of Hyperion's routes (`/v2/*`, `/v1/history/*`, `/v1/trace_api/*`). They are shown in Hyperion's shape
 * (`{statusCode, error, message}`, docs/HYPERION.md) like every other error on those routes; the message is
 * Hyperion's own sentence where it has one, so clients that match on it keep working.
 */
export const HYPERION_ERRORS = {
  hyperion_bad_request_error: defineError<{ message: string }>({
    status: 400,
    message: (d) => d.message,
  }),
  // Hyperion answers 500 for "not found" (an exception in its handler); Antler says 404: a missing thing is not a
  // server fault (docs/HYPERION.md, Errors).
  hyperion_not_found_error: defineError<{ message: string }>({
    status: 404,
    message: (d) => d.message,
  }),
} as const
