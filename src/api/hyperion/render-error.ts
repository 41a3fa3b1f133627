import { STATUS_CODES } from 'node:http'
import type { ErrorRenderer } from '../plugins/errors.ts'

/**
 * Errors on Hyperion's routes in Hyperion's shape, `{statusCode, error, message}` (what Fastify answers there, and
 * what Hyperion's clients read), decided by the app's one error path: the same status, log line, headers and
 * X-Trace-Id as every other route (docs/HYPERION.md, Errors). A parameter refused by a route's schema also carries
 * `code: "FST_ERR_VALIDATION"` and a message naming the parameter, as Hyperion's.
 */
export const renderHyperionError: ErrorRenderer = (_request, reply, error) => {
  const validation = error.code === 'request_validation_error'
  const errors = (error.details as { errors?: Record<string, string[]> }).errors
  const message = validation && errors ? Object.values(errors).flat().join(' ') || error.message : error.message
  return reply.header('content-type', 'application/json; charset=utf-8').send({
    statusCode: error.status,
    ...(validation ? { code: 'FST_ERR_VALIDATION' } : {}),
    error: STATUS_CODES[error.status] ?? 'Error',
    message,
  })
}
