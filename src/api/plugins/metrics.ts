import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

/** The API's Prometheus metrics (one registry per app, no global state). */
export interface ApiMetrics {
  readonly registry: Registry
  readonly tokensIssued: Counter<'type'>
  readonly limitsHit: Counter<'scope'>
  /** Requests answered since start (for the CLI's status line). */
  requestsServed(): number
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: ApiMetrics
  }
}

/** Requests and errors by route and code, latency by route, tokens issued, limits hit; served at `/metrics`. */
export const metricsPlugin = fp(async (app: FastifyInstance) => {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, prefix: 'antler_' })
  const requests = new Counter({
    name: 'antler_http_requests_total',
    help: 'HTTP requests by route, method, status and error code',
    labelNames: ['route', 'method', 'status', 'code'],
    registers: [registry],
  })
  const latency = new Histogram({
    name: 'antler_http_request_duration_seconds',
    help: 'HTTP request latency by route',
    labelNames: ['route'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60],
    registers: [registry],
  })
  const tokensIssued = new Counter({
    name: 'antler_tokens_issued_total',
    help: 'JWTs issued by key type',
    labelNames: ['type'],
    registers: [registry],
  })
  const limitsHit = new Counter({
    name: 'antler_rate_limits_hit_total',
    help: 'Calls refused by a rate limit, by limit',
    labelNames: ['scope'],
    registers: [registry],
  })
  let served = 0
  app.decorate('metrics', { registry, tokensIssued, limitsHit, requestsServed: () => served })
  // The labelled series of each (route, method, status, code), looked up once: prom-client hashes the labels on every
  // inc() or observe() given as an object, which cost as much as the rest of a cheap request's bookkeeping.
  const counted = new Map<string, Counter.Internal>()
  const timed = new Map<string, Histogram.Internal<'route'>>()
  app.addHook('onResponse', (request, reply, done) => {
    served++
    const route = request.routeOptions.url ?? 'unknown'
    const code = reply.failure?.code ?? ''
    if (code === 'rate_limit_exceeded_error') limitsHit.inc({ scope: String(reply.failure?.details.scope) })
    const status = reply.statusCode
    const key = `${route} ${request.method} ${status} ${code}`
    let counter = counted.get(key)
    if (!counter) counted.set(key, (counter = requests.labels({ route, method: request.method, status, code })))
    counter.inc()
    let histogram = timed.get(route)
    if (!histogram) timed.set(route, (histogram = latency.labels({ route })))
    histogram.observe(reply.elapsedTime / 1000)
    const url = request.url
    const query = url.indexOf('?')
    request.log.info(
      {
        method: request.method,
        route,
        url: query === -1 ? url : url.slice(0, query),
        status,
        ms: Math.round(reply.elapsedTime * 100) / 100,
        code: code || undefined,
      },
      'request',
    )
    done()
  })
  app.get(
    '/metrics',
    { config: { public: true }, schema: { hide: true, response: { 200: { type: 'string' } } } },
    async (_request, reply) => {
      reply.header('content-type', registry.contentType)
      return registry.metrics()
    },
  )
})
