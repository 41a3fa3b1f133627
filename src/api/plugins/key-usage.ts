import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { Counter } from 'prom-client'
import type { UsageOutcome, UsageRecorder } from '../../accounts/index.ts'
import { refusedKeyId } from '../../auth/index.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** What the answer served, set by the routes that serve items (search results, table rows); 1 otherwise. */
    documents: number
    /** The key a request used when it has no token (token issuance). */
    usageKeyId: string | undefined
  }
}

/** A response as a key's usage counts it; undefined for a server error (not the caller's doing, not counted). */
export function usageOutcome(reply: FastifyReply): UsageOutcome | undefined {
  const status = reply.statusCode
  if (status < 400) return 'ok'
  if (status === 429) return 'rateLimited'
  if (status >= 500) return undefined
  return reply.failure?.code.startsWith('auth_') ? 'authFailures' : 'clientErrors'
}

/**
 * Per-key usage: every response of a known key (a token's, a key's at issuance, a refusal that named its key) counted
 * by outcome with the documents it served, into the portal's usage (the recorder) and `/metrics`
 * (`antler_key_requests_total{key_id,outcome}`, `antler_key_documents_total{key_id}`) from the same place, so the two
 * agree. Without a recorder (a read-only SQLite store cannot keep usage) only `/metrics` counts.
 */
export const keyUsagePlugin = fp(async (app: FastifyInstance, opts: { recorder?: UsageRecorder }) => {
  app.decorateRequest('documents', 0)
  app.decorateRequest('usageKeyId', undefined)
  const requests = new Counter({
    name: 'antler_key_requests_total',
    help: 'Requests by API key and outcome (ok, clientErrors, authFailures, rateLimited), as the portal counts them',
    labelNames: ['key_id', 'outcome'],
    registers: [app.metrics.registry],
  })
  const documents = new Counter({
    name: 'antler_key_documents_total',
    help: 'Documents served by API key (search results, table rows; 1 per other answer), as the portal counts them',
    labelNames: ['key_id'],
    registers: [app.metrics.registry],
  })
  // Labelled series looked up once each (prom-client hashes an object's labels on every inc: see metrics.ts).
  const requestSeries = new Map<string, Counter.Internal>()
  const documentSeries = new Map<string, Counter.Internal>()
  const series = (map: Map<string, Counter.Internal>, key: string, make: () => Counter.Internal) =>
    map.get(key) ?? map.set(key, make()).get(key)!
  app.addHook('onResponse', (request, reply, done) => {
    const keyId = request.auth?.aki ?? request.usageKeyId ?? refusedKeyId(reply.failure)
    const outcome = keyId === undefined ? undefined : usageOutcome(reply)
    if (keyId !== undefined && outcome !== undefined) {
      const served = outcome === 'ok' ? Math.max(1, request.documents) : 0
      opts.recorder?.count(keyId, outcome, served)
      series(requestSeries, `${keyId} ${outcome}`, () => requests.labels({ key_id: keyId, outcome })).inc()
      if (served > 0) series(documentSeries, keyId, () => documents.labels({ key_id: keyId })).inc(served)
      if (outcome === 'ok') opts.recorder?.used(keyId)
    }
    done()
  })
})
