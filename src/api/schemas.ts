import { Type } from '@fastify/type-provider-typebox'

/** The standard error object, registered once and referenced by every route's error responses. */
export const ErrorObject = Type.Object(
  {
    code: Type.String({ description: 'stable snake_case code, see docs/ERRORS.md' }),
    trace_id: Type.String({ description: 'unique per request; also in the X-Trace-Id header' }),
    message: Type.String(),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { $id: 'ErrorObject' },
)

const ref = Type.Unsafe({ $ref: 'ErrorObject#' })

/** The error responses every route declares next to its 2xx answer. */
export const errorResponses = { '4xx': ref, '5xx': ref }
