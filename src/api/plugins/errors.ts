import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AntlerError } from '../../antelope/index.ts'
import { BadRequestError, MethodNotAllowedError, NotFoundError } from '../errors.ts'
import type { RateLimitDecision } from '../../auth/index.ts'
import { toAntlerError, wireError } from '../wire-error.ts'
import { rateHeaders } from './auth.ts'

declare module 'fastify' {
  interface FastifyReply {
    /** The error this reply answers, for metrics and the request's log line. */
    failure: AntlerError | undefined
  }
}

/**
 * The app's one decision about an error, whatever shows it: the AntlerError it stands for, its log line (an unexpected
 * error once, at error level, with the trace id the client gets), `reply.failure` (metrics, usage, the request's log
 * line), the status, and the headers its code calls for (`Retry-After`, `X-RateLimit-*`, `X-Trace-Id`). The body is
 * the renderer's ({@link ErrorRenderer}).
 */
export function resolveError(request: FastifyRequest, reply: FastifyReply, thrown: unknown): AntlerError {
  const contentEncoding = request.headers['content-encoding']
  const { error, unexpected } = toAntlerError(thrown, {
    bodyLimitBytes: request.routeOptions.bodyLimit,
    contentEncoding: typeof contentEncoding === 'string' ? contentEncoding : undefined,
  })
  if (unexpected) request.log.error({ err: thrown }, 'unexpected error')
  else if (error.status >= 500) request.log.warn({ code: error.code, reason: error.message }, 'request failed')
  reply.failure = error
  const retryAfter = error.details.retry_after_seconds
  if (typeof retryAfter === 'number') reply.header('retry-after', String(retryAfter))
  // A limiter's refusal (calls or issuance) carries its decision: the X-RateLimit-* headers too.
  const decision = (thrown as { decision?: RateLimitDecision } | undefined)?.decision
  if (decision) rateHeaders(reply, decision)
  // Also set here: errors Fastify raises before any hook runs (a malformed URL) have no header yet.
  reply.code(error.status).header('x-trace-id', String(request.id))
  return error
}

/**
 * How an error is shown, once {@link resolveError} set the reply up (status and headers): the standard error object
 * here; the portal shows its pages ({@link errorHandlerWith}).
 */
export type ErrorRenderer = (request: FastifyRequest, reply: FastifyReply, error: AntlerError) => FastifyReply

/** The standard error object `{code, trace_id, message, details?}` as the JSON body. */
export const renderErrorObject: ErrorRenderer = (request, reply, error) =>
  reply.header('content-type', 'application/json; charset=utf-8').send(wireError(error, String(request.id)))

/** Answers any error: the app's decisions ({@link resolveError}), shown by `render` (the standard error object). */
export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  thrown: unknown,
  render: ErrorRenderer = renderErrorObject,
): FastifyReply {
  return render(request, reply, resolveError(request, reply, thrown))
}

/** The error handler of a scope that shows errors its own way: the app's decisions, `render`'s body. */
export const errorHandlerWith =
  (render: ErrorRenderer) =>
  (thrown: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply =>
    sendError(request, reply, thrown, render)

/** A route path as a pattern over request paths (`:param` and `*`), for telling 404 from 405. */
function pathPattern(url: string): RegExp {
  const escaped = url
    .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
    .replace(/:[A-Za-z0-9_]+/g, '[^/]+')
    .replace(/\*/g, '.*')
  return new RegExp(`^${escaped}/?$`)
}

/**
 * The one error handler (docs/ERRORS.md): every error of every route, unknown routes and wrong
 * methods answer `{code, trace_id, message, details?}`, the trace id also in `X-Trace-Id` and in
 * the request's log line. No stack, no framework shape.
 */
export const errorsPlugin = fp(async (app: FastifyInstance) => {
  const routes: { pattern: RegExp; method: string }[] = []
  app.decorateReply('failure', undefined)
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat())
      if (method !== 'HEAD' && method !== 'OPTIONS') routes.push({ pattern: pathPattern(route.url), method })
  })
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-trace-id', String(request.id))
    // Node's own check of this answers an empty 400, so the server lets it through (app.ts) to be refused here (RFC
    // 9112 §3.2).
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined)
      return done(BadRequestError({ reason: 'the Host header is missing' }))
    done()
  })
  app.setErrorHandler((error, request, reply) => sendError(request, reply, error))
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]
    const allowed = [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))]
    if (allowed.length > 0) reply.header('allow', allowed.join(', '))
    return sendError(
      request,
      reply,
      allowed.length > 0 ? MethodNotAllowedError({ method: request.method, allowed }) : NotFoundError({ path }),
    )
  })
})
