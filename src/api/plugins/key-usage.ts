import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { createUsageMeter, type UsageMeter, type UsageOutcome } from '../../accounts/index.ts'
import { refusedKeyId } from '../../auth/index.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** What the answer served, set by the routes that serve items (search results, table rows); 1 otherwise. */
    documents: number
    /** The key a request used when it has no token (token issuance). */
    usageKeyId: string | undefined
    /**
     * Set by a route that counts its own usage through the meter (GraphQL over HTTP counts by the outcome of the
     * operation, not the HTTP status; a WebSocket upgrade counts its stream requests and messages): the response is
     * not counted again here.
     */
    usageCounted: boolean
  }
  interface FastifyInstance {
    /** The per-key usage meter every transport reports to (portal usage and `/metrics`). */
    usage: UsageMeter
  }
}

/**
 * An answer's status and error code as a key's usage counts it; undefined for a server error (not the caller's doing,
 * not counted). REST responses and `/v1/stream` requests count alike.
 */
export function outcomeOf(status: number, code: string | undefined): UsageOutcome | undefined {
  if (status < 400) return 'ok'
  if (status === 429) return 'rateLimited'
  if (status >= 500) return undefined
  return code?.startsWith('auth_') ? 'authFailures' : 'clientErrors'
}

/** A response as a key's usage counts it (outcomeOf its status and error code). */
export const usageOutcome = (reply: FastifyReply): UsageOutcome | undefined =>
  outcomeOf(reply.statusCode, reply.failure?.code)

/**
 * Per-key usage of REST: every response of a known key (a token's, a key's at issuance, a refusal that named its key)
 * counted by outcome with the documents it served, through the meter (portal usage and `/metrics` from the same
 * place). Other transports report to the same meter (`app.usage`). Without one given, a meter without a recorder is
 * made (a read-only SQLite store cannot keep usage): only `/metrics` counts.
 */
export const keyUsagePlugin = fp(async (app: FastifyInstance, opts: { meter?: UsageMeter }) => {
  app.decorateRequest('documents', 0)
  app.decorateRequest('usageKeyId', undefined)
  app.decorateRequest('usageCounted', false)
  const meter = opts.meter ?? createUsageMeter(undefined)
  meter.register(app.metrics.registry)
  app.decorate('usage', meter)
  app.addHook('onResponse', (request, reply, done) => {
    if (request.usageCounted) return done()
    const keyId = request.auth?.aki ?? request.usageKeyId ?? refusedKeyId(reply.failure)
    const outcome = keyId === undefined ? undefined : usageOutcome(reply)
    if (keyId !== undefined && outcome !== undefined) {
      meter.request(keyId, outcome, Math.max(1, request.documents))
      if (outcome === 'ok') meter.used(keyId)
    }
    done()
  })
})
