import type { FastifyError } from 'fastify'
import { AntlerError } from '../antelope/index.ts'
import {
  BadRequestError,
  ClientClosedError,
  InvalidJsonError,
  MissingBodyError,
  RequestTooLargeError,
  RequestValidationError,
  UnexpectedError,
  UnsupportedContentEncodingError,
  UnsupportedMediaTypeError,
} from './errors.ts'

/** The one error shape of every REST and WebSocket error (docs/ERRORS.md). */
export interface WireError {
  code: string
  trace_id: string
  message: string
  details?: Record<string, unknown>
}

interface ValidationItem {
  instancePath?: string
  params?: Record<string, unknown>
  message?: string
}

/** Fastify/Ajv validation items → dfuse's `{ "<param>": ["<sentence>", …] }`. */
function validationErrors(context: string | undefined, items: readonly ValidationItem[]): Record<string, string[]> {
  const out: Record<string, string[]> = {}
  for (const item of items) {
    const path = (item.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.')
    const missing = typeof item.params?.missingProperty === 'string' ? item.params.missingProperty : undefined
    const extra = typeof item.params?.additionalProperty === 'string' ? item.params.additionalProperty : undefined
    const field = missing ?? extra ?? (path || context || 'request')
    const sentence = missing
      ? `The ${field} field is required.`
      : extra
        ? `The ${field} field is not accepted here.`
        : `The ${field} field ${item.message ?? 'is invalid'}.`
    ;(out[field] ??= []).push(sentence)
  }
  return out
}

/**
 * Any error thrown while serving a request → the AntlerError it stands for. Errors raised on
 * purpose keep their code; Fastify's own (validation, body parsing, URL) and its plugins' (request
 * decompression) get theirs from the registry; anything else is `unexpected_error`, with a fixed
 * message (the caller logs the cause). `request` tells what those errors do not carry: the route's
 * body limit and the request's Content-Encoding.
 */
export function toAntlerError(
  error: unknown,
  request: { bodyLimitBytes?: number; contentEncoding?: string } = {},
): { error: AntlerError; unexpected: boolean } {
  if (error instanceof AntlerError) return { error, unexpected: false }
  const e = error as FastifyError & { validation?: ValidationItem[]; validationContext?: string }
  if (Array.isArray(e?.validation))
    return {
      error: RequestValidationError({ errors: validationErrors(e.validationContext, e.validation) }),
      unexpected: false,
    }
  switch (e?.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { error: InvalidJsonError({ reason: 'the body does not parse as JSON' }), unexpected: false }
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { error: MissingBodyError(), unexpected: false }
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { error: RequestTooLargeError({ limitBytes: request.bodyLimitBytes ?? 0 }), unexpected: false }
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { error: UnsupportedMediaTypeError({ contentType: 'unknown' }), unexpected: false }
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { error: BadRequestError({ reason: 'Content-Length does not match the body' }), unexpected: false }
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_INVALID_URL':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return { error: BadRequestError({ reason: 'the URL is malformed' }), unexpected: false }
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return { error: BadRequestError({ reason: 'a path segment is too long' }), unexpected: false }
    case 'FST_CP_ERR_INVALID_CONTENT':
      return {
        error: BadRequestError({ reason: 'the body does not decode with its Content-Encoding' }),
        unexpected: false,
      }
    case 'FST_CP_ERR_INVALID_CONTENT_ENCODING':
      return {
        error: UnsupportedContentEncodingError({ contentEncoding: request.contentEncoding ?? 'unknown' }),
        unexpected: false,
      }
  }
  // Node's own: the client closed the connection while its body was being read (no one reads the answer).
  if (e?.code === 'ECONNRESET' && e.message === 'aborted') return { error: ClientClosedError(), unexpected: false }
  if (e instanceof SyntaxError)
    return { error: InvalidJsonError({ reason: 'the body does not parse as JSON' }), unexpected: false }
  return { error: UnexpectedError(), unexpected: true }
}

/** The wire body of an error: `details` only when it has keys. */
export function wireError(error: AntlerError, traceId: string): WireError {
  const body: WireError = { code: error.code, trace_id: traceId, message: error.message }
  if (Object.keys(error.details).length > 0) body.details = error.details
  return body
}
