import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import {
  authorizationToken,
  type Admission,
  type AuthService,
  type RateLimitDecision,
  type TokenClaims,
} from '../../auth/index.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Served without a token (the public routes: docs/ARCHITECTURE.md, "Public routes, CORS and tokens"). */
    public?: boolean
    /**
     * A public route that still needs a token for some requests (a guaranteed push on an open passthrough, a token
     * offered at a GraphQL upgrade).
     */
    tokenWhen?: (request: FastifyRequest) => boolean
  }
  interface FastifyRequest {
    /** The claims of the request's token; undefined on public routes and with `--no-auth`. */
    auth: TokenClaims | undefined
  }
}

/** How many Authorization headers a request carries (Node keeps only the first in `headers`). */
function authorizationCount(rawHeaders: readonly string[]): number {
  let count = 0
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === 'authorization') count++
  return count
}

/**
 * The token a request presents: `Authorization: Bearer <jwt>` (or the bare token, the one rule of every transport),
 * else `?token=` (browsers cannot set headers on a WebSocket). A header of another shape counts as malformed
 * unless the query carries a token (dfuse's fallback). Repeated Authorization headers or `token`
 * parameters are malformed: which one a proxy in front of this server honoured is anyone's guess.
 */
export function presentedToken(request: FastifyRequest): { token: string | undefined; malformed: boolean } {
  const header = request.headers.authorization
  const query = (request.query as Record<string, unknown> | undefined)?.token
  if (authorizationCount(request.raw.rawHeaders) > 1 || Array.isArray(query))
    return { token: undefined, malformed: true }
  // The one Bearer rule of every transport (src/auth/presented-token.ts).
  const fromHeader = typeof header === 'string' ? authorizationToken([header]) : undefined
  if (fromHeader !== undefined && fromHeader !== 'malformed') return { token: fromHeader, malformed: false }
  const fromQuery = typeof query === 'string' && query !== '' ? query : undefined
  return { token: fromQuery, malformed: fromHeader === 'malformed' && fromQuery === undefined }
}

/** Whether a request offers a token at all (a malformed one included). */
export const offersToken = (request: FastifyRequest): boolean => {
  const { token, malformed } = presentedToken(request)
  return token !== undefined || malformed || request.headers.authorization !== undefined
}

/** The token a request presents, as admission takes it: `'malformed'` for one that is not well presented. */
export function tokenForAdmission(request: FastifyRequest): string | undefined {
  const { token, malformed } = presentedToken(request)
  return malformed ? 'malformed' : token
}

/** Admits a request's token from its IP and Origin: the claims and the limit it was counted against. */
export const admitRequest = (auth: AuthService, request: FastifyRequest): Promise<Admission> =>
  auth.admit({ token: tokenForAdmission(request), caller: { ip: request.ip, origin: request.headers.origin } })

/** `X-RateLimit-*` of a limiter decision, on an admitted call or (from the error handler) on a refusal. */
export function rateHeaders(reply: FastifyReply, rate: RateLimitDecision): void {
  reply.header('x-ratelimit-limit', String(rate.limit))
  reply.header('x-ratelimit-remaining', String(rate.remaining))
  reply.header('x-ratelimit-reset', String(Math.ceil(rate.resetAtMs / 1000)))
}

/**
 * Token admission for every route that is not public: verified (cached), origin and
 * IP rules, per-(key, IP) limit, `X-RateLimit-*` headers. WebSocket upgrades pass through the same
 * hook before the upgrade, so a refused token is an HTTP 401 with the standard error object.
 */
export const authPlugin = fp(async (app: FastifyInstance, opts: { auth: AuthService; noAuth: boolean }) => {
  app.decorateRequest('auth', undefined)
  // A callback hook, not an async one: public routes (most of the cheap ones) pass without a promise.
  app.addHook('onRequest', (request, reply, done) => {
    if (opts.noAuth || request.method === 'OPTIONS' || request.is404) return done()
    const config = request.routeOptions.config
    if (config.public && !config.tokenWhen?.(request)) return done()
    let admitted: Promise<Admission>
    try {
      admitted = admitRequest(opts.auth, request)
    } catch (error) {
      return done(error as Error)
    }
    admitted.then((admission) => {
      request.auth = admission.claims
      rateHeaders(reply, admission.rate)
      done()
    }, done)
  })
})
