import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import cors from '@fastify/cors'
import compress from '@fastify/compress'
import swagger from '@fastify/swagger'
import websocket from '@fastify/websocket'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Logger } from 'pino'
import { traceIdSource } from '../antelope/index.ts'
import type { AuthService } from '../auth/index.ts'
import type { PushService } from '../push/index.ts'
import type { StateService } from '../state/index.ts'
import type { LifecycleService } from '../lifecycle/index.ts'
import type { SearchService } from '../search/index.ts'
import type { LiveHub } from '../live/index.ts'
import type { GraphqlRuntime } from '../graphql/index.ts'
import type { SnapshotSource } from '../store/index.ts'
import type { WebhookService } from '../webhooks/index.ts'
import formbody from '@fastify/formbody'
import { InvalidJsonError, ServiceUnavailableError } from './errors.ts'
import { authPlugin } from './plugins/auth.ts'
import { errorsPlugin, sendError } from './plugins/errors.ts'
import { metricsPlugin } from './plugins/metrics.ts'
import { ingestMetricsPlugin, type IngestMeter } from './plugins/ingest-metrics.ts'
import { keyUsagePlugin } from './plugins/key-usage.ts'
import type { UsageMeter } from '../accounts/index.ts'
import { authIssueRoutes } from './routes/auth-issue.ts'
import { chainPassthroughRoutes } from './routes/chain-passthrough.ts'
import { guaranteedPushInterceptor, isGuaranteedPush } from './routes/guaranteed-push.ts'
import { healthRoutes, type HealthSource } from './routes/health.ts'
import { openApiRoutes } from './routes/openapi.ts'
import { stateRoutes } from './routes/state.ts'
import { transactionRoutes } from './routes/transactions.ts'
import { searchRoutes } from './routes/search.ts'
import { streamUpgradeRoutes } from './routes/stream-upgrades.ts'
import { graphqlRoutes } from './routes/graphql.ts'
import { graphqlProtoRoutes } from './routes/graphql-proto.ts'
import { graphiqlRoutes } from './routes/graphiql.ts'
import { webhookRoutes } from './routes/webhooks.ts'
import { portalRoutes, type PortalServices } from './portal/index.ts'
import { hyperionRoutes } from './hyperion/index.ts'
import { attachHyperionStream } from './hyperion/stream.ts'
import type { HyperionServices } from '../hyperion/index.ts'
import { createStreamHandlers, type StreamServices } from './stream/handlers.ts'
import { ErrorObject } from './schemas.ts'
import { clientErrorHandler, wsClientErrorHandler } from './client-errors.ts'

/** The API's settings (the API flags, docs/OPERATIONS.md), validated by the CLI. */
export interface ApiConfig {
  /** `--no-auth`: no token anywhere (local development only). */
  readonly noAuth: boolean
  /** `--open-chain-api`: the passthrough without a token. */
  readonly openChainApi: boolean
  /** The chain API behind `/v1/chain/*`; undefined when the API runs without one. */
  readonly chainApi: string | undefined
  readonly chainTimeoutMs: number
  /** Largest JSON body of the API's own routes. */
  readonly bodyLimitBytes: number
  /** Largest body forwarded to the chain (transactions carrying a wasm). */
  readonly chainBodyLimitBytes: number
  /** Honour X-Forwarded-For (behind a reverse proxy) for the per-IP limits. */
  readonly trustProxy: boolean
  /** Hyperion's routes need a token (`--hyperion-token`); else they are public with a per-IP limit. */
  readonly hyperionToken: boolean
}

/** What the routes use. */
export interface ApiServices {
  readonly auth: AuthService
  readonly health: HealthSource
  readonly push: PushService | undefined
  readonly state: StateService
  readonly lifecycle: LifecycleService
  /** What `/v1/stream` reads besides the services: blocks, the step log and its payloads, ABIs. */
  readonly streamStore: StreamServices['store']
  readonly search: SearchService
  readonly snapshots: SnapshotSource
  /** The live hub: one tail of the step log fanned out to every stream subscription. */
  readonly live: LiveHub
  /** The GraphQL schema and its services (HTTP and WebSocket here; gRPC beside the app). */
  readonly graphql: GraphqlRuntime
  /** Webhook subscriptions (`/v1/webhooks`); absent: the routes are not served. */
  readonly webhooks?: WebhookService
  /** The management portal (`/portal`); absent: not served. */
  readonly portal?: PortalServices
  /** Per-key usage of every transport (the portal's figures and `/metrics`); absent: counted for `/metrics` only. */
  readonly usage?: UsageMeter
  /** What Hyperion's API reads (docs/HYPERION.md); absent: not served. */
  readonly hyperion?: HyperionServices
  /** The in-process indexer's progress for `/metrics`; absent where none runs (`antler api`). */
  readonly ingest?: IngestMeter
}

/** JSON bodies whatever their Content-Type: @dfuse/client posts JSON as text/plain. */
function parseJsonBody(_request: unknown, body: string, done: (error: Error | null, value?: unknown) => void): void {
  if (body === '') return done(null, undefined)
  try {
    done(null, JSON.parse(body))
  } catch {
    done(InvalidJsonError({ reason: 'the body does not parse as JSON' }))
  }
}

/** How long a WebSocket client gets to answer the server's close frame at shutdown before its socket is cut. */
const SOCKET_CLOSE_GRACE_MS = 1_000

/**
 * At close, every WebSocket (`/v1/stream`, `/graphql`) gets a close frame 1001 (going away): clients see a server that
 * stops, not a dropped connection. Those that do not answer it within a second are cut (ws would wait 30 s).
 */
function closeSockets(this: FastifyInstance, done: () => void): void {
  const server = this.websocketServer
  for (const client of server.clients) client.close(1001, 'server shutting down')
  const cut = setTimeout(() => {
    for (const client of server.clients) client.terminate()
  }, SOCKET_CLOSE_GRACE_MS)
  server.close(() => {
    clearTimeout(cut)
    done()
  })
}

/** Builds the API (no listening: the CLI listens, tests inject). */
export async function buildApp(args: {
  config: ApiConfig
  services: ApiServices
  logger: Logger
}): Promise<FastifyInstance> {
  // pino's Logger is a FastifyBaseLogger; the cast keeps the app's type the plain FastifyInstance.
  const { config, services } = args
  const app = Fastify({
    loggerInstance: args.logger as unknown as FastifyBaseLogger,
    // One log line per request comes from the metrics plugin (with the trace id), not Fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'trace_id' }),
    genReqId: traceIdSource(),
    requestIdHeader: false,
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    // Requests arriving while the server closes get the standard error object (the hook below), not Fastify's 503
    // shape.
    return503OnClosing: false,
    clientErrorHandler,
    // Fastify answers a malformed URL in its own shape unless this takes it.
    frameworkErrors: (error, request, reply) => sendError(request, reply, error),
    // Node answers an HTTP/1.1 request without Host with an empty 400; the errors plugin answers it instead.
    // 64 KiB of request headers (Node's default is 16): a GET of /v0/state/tables/scopes with its
    // 1,500 twelve-character scopes has a ~23 KB request line.
    http: { requireHostHeader: false, maxHeaderSize: 64 * 1024 },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1000 },
    // Fastify's Ajv drops the fields a schema with `additionalProperties: false` does not name; such a schema means
    // "no other field" (a misspelt `{"pause": true}` must not pass as a no-op), so it refuses them instead:
    // request_validation_error naming the field (src/api/wire-error.ts). Fastify's other defaults stay.
    ajv: { customOptions: { removeAdditional: false } },
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.addSchema(ErrorObject)
  await app.register(errorsPlugin)
  // At close (SIGTERM): requests still arriving on open connections get 503 and the connection is closed after the
  // answer; waits in progress (guaranteed pushes) end at once with the same 503 (`stopping`).
  let closing = false
  const stopping = new AbortController()
  app.addHook('preClose', async () => {
    closing = true
    stopping.abort()
  })
  app.addHook('onRequest', (_request, reply, done) => {
    if (!closing) return done()
    reply.header('connection', 'close')
    done(ServiceUnavailableError({ reason: 'shutting down' }))
  })
  await app.register(metricsPlugin)
  await app.register(ingestMetricsPlugin, { health: services.health, ingest: services.ingest })
  await app.register(keyUsagePlugin, { meter: services.usage })
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Antler API',
        version: '0.1.0',
        description: 'dfuse-compatible chain data API for Antelope chains',
      },
    },
  })
  // Public routes answer any page (`*`); the others echo the caller's Origin (docs/API.md, CORS): tokens
  // travel in a header, never a cookie, and a web key's origin rules are enforced by the auth hook.
  const corsBase = {
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'OPTIONS'],
    allowedHeaders: ['X-Requested-With', 'Content-Type', 'Authorization', 'X-Eos-Push-Guarantee'],
    exposedHeaders: ['X-Trace-Id', 'Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'],
    maxAge: 86400,
    // A bare OPTIONS (no Origin or Access-Control-Request-Method) gets the same 204, not the plugin's text/plain 400.
    strictPreflight: false,
  }
  const publicCors = { ...corsBase, origin: '*' }
  const callerCors = { ...corsBase, origin: true }
  await app.register(cors, {
    hook: 'onRequest',
    delegator: (request, callback) => {
      const config = request.routeOptions.config
      // The portal's pages and their JSON are for its own origin only: no CORS headers at all.
      if (config?.portal) return callback(null, { origin: false })
      const isPublic = config?.public === true && !config.tokenWhen
      callback(null, isPublic ? publicCors : callerCors)
    },
  })
  await app.register(compress, { global: true, threshold: 1024 })
  await app.register(websocket, { options: { maxPayload: 1024 * 1024 }, preClose: closeSockets })
  app.websocketServer.on('wsClientError', wsClientErrorHandler)
  await app.register(authPlugin, { auth: services.auth, noAuth: config.noAuth })
  if (config.noAuth)
    app.log.warn(
      'auth is off (--no-auth): every route is open to anyone who can reach this port; for local development only',
    )

  await app.register(async (json) => {
    json.removeContentTypeParser(['application/json', 'text/plain'])
    json.addContentTypeParser('*', { parseAs: 'string' }, parseJsonBody)
    await json.register(authIssueRoutes, { auth: services.auth })
    await json.register(healthRoutes, { health: services.health })
    await json.register(openApiRoutes)
    const streams = createStreamHandlers({
      store: services.streamStore,
      feed: services.live,
      state: services.state,
      lifecycle: services.lifecycle,
    })
    await json.register(streamUpgradeRoutes, { auth: services.auth, noAuth: config.noAuth, streams })
  })
  await app.register(async (graphql) => {
    graphql.removeContentTypeParser(['application/json', 'text/plain'])
    graphql.addContentTypeParser('*', { parseAs: 'string' }, parseJsonBody)
    await graphql.register(graphqlRoutes, { runtime: services.graphql })
    await graphql.register(graphqlProtoRoutes)
    await graphql.register(graphiqlRoutes)
  })
  // The REST reads: JSON bodies whatever their Content-Type (bin_to_json), form bodies for the multi-table POSTs.
  await app.register(async (rest) => {
    rest.removeContentTypeParser(['application/json', 'text/plain'])
    rest.addContentTypeParser('*', { parseAs: 'string' }, parseJsonBody)
    await rest.register(formbody, { bodyLimit: config.bodyLimitBytes })
    await rest.register(stateRoutes, { state: services.state })
    await rest.register(transactionRoutes, { lifecycle: services.lifecycle })
    await rest.register(searchRoutes, { search: services.search })
    if (services.webhooks) await rest.register(webhookRoutes, { webhooks: services.webhooks })
  })
  await app.register(chainPassthroughRoutes, {
    chainApi: config.chainApi,
    timeoutMs: config.chainTimeoutMs,
    bodyLimitBytes: config.chainBodyLimitBytes,
    open: config.openChainApi,
    tokenWhen: isGuaranteedPush,
    intercept: services.push
      ? guaranteedPushInterceptor(services.push, config.chainBodyLimitBytes, stopping.signal)
      : undefined,
  })
  if (services.portal) await app.register(portalRoutes, services.portal)
  const hyperion = services.hyperion
  if (hyperion)
    await app.register(async (scope) => {
      scope.removeContentTypeParser(['application/json', 'text/plain'])
      scope.addContentTypeParser('*', { parseAs: 'string' }, parseJsonBody)
      await scope.register(hyperionRoutes, { hyperion, auth: services.auth, requireToken: config.hyperionToken })
    })
  // Hyperion's socket.io `/stream` on the same port (closed with the app).
  if (hyperion)
    attachHyperionStream(app, {
      hyperion,
      auth: services.auth,
      requireToken: config.hyperionToken,
      noAuth: config.noAuth,
      trustProxy: config.trustProxy,
    })
  return app
}
