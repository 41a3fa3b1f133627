import { join } from 'node:path'
import { Server, ServerCredentials } from '@grpc/grpc-js'
import { HealthImplementation, protoPath as healthProtoPath } from 'grpc-health-check'
import type { Logger } from 'pino'
import { buildApp, recentAnswer, type IngestMeter } from '../api/index.ts'
import {
  createApiKeyService,
  createAuthService,
  createMemoryRateLimiter,
  createRedisRateLimiter,
  createRevocationWatch,
  signingKeyFromSecret,
} from '../auth/index.ts'
import { createPushService } from '../push/index.ts'
import { createStateService } from '../state/index.ts'
import { createLifecycleService } from '../lifecycle/index.ts'
import { createSearchService } from '../search/index.ts'
import { createLiveHub, type LiveHub } from '../live/index.ts'
import {
  addGraphqlGrpcService,
  createGraphqlRuntime,
  GRAPHQL_GRPC_SERVICE,
  type GraphqlRuntime,
} from '../graphql/index.ts'
import type { Store } from '../store/index.ts'
import { createWebhooks, parseAllowCidrs } from '../webhooks/index.ts'
import {
  createAccountsService,
  createUsageMeter,
  createUsageRecorder,
  prepareSetupToken,
  SETUP_TOKEN_FILE,
} from '../accounts/index.ts'
import type { ApiFlags } from './api-options.ts'
import { followStepNotifications } from './step-notifications.ts'

/** A serving API: its bound addresses (real ports, never 0) and how to stop it. */
export interface RunningApi {
  readonly api: string
  readonly grpc: string
  /** Requests answered so far. */
  requests(): number
  /** The portal's one-time setup token while no account exists (given `setupTokenDir`), to print. */
  readonly setup?: { readonly token: string; readonly file: string }
  close(): Promise<void>
}

/** The chain's head block, from get_info, asked at most once per `ttlMs`. */
function chainHeadCache(chainApi: string | undefined, ttlMs = 2000): () => Promise<number | undefined> {
  if (!chainApi) return async () => undefined
  return recentAnswer(ttlMs, async () => {
    try {
      const response = await fetch(`${chainApi}/v1/chain/get_info`, {
        method: 'POST',
        signal: AbortSignal.timeout(2000),
      })
      return response.ok ? ((await response.json()) as { head_block_num?: number }).head_block_num : undefined
    } catch {
      return undefined
    }
  })
}

/** How long a request to the chain API (the passthrough, Hyperion's chain reads) may take. */
const CHAIN_TIMEOUT_MS = 30_000

/** How long a stopping gRPC server waits for its calls to end before it cuts them. */
const GRPC_SHUTDOWN_GRACE_MS = 5_000

/**
 * The gRPC server: GraphQL over gRPC (`antler.graphql.v1.GraphQL/Execute`, also under dfuse's service names; each
 * call admitted with the token of its `authorization` metadata unless `noAuth`), `grpc.health.v1.Health` (the
 * server and the GraphQL service SERVING) and server reflection (both services). close() ends the open GraphQL calls
 * (`UNAVAILABLE`), then waits for the server to stop (cutting what is left after a grace period).
 */
async function startGrpc(args: {
  host: string
  port: number
  graphql: GraphqlRuntime
}): Promise<{ address: string; close(): Promise<void> }> {
  const server = new Server({ 'grpc.max_receive_message_length': 1024 * 1024 })
  // Admission, the usage meter and the error log are the runtime's (the same as HTTP's and the WebSocket's).
  const graphql = addGraphqlGrpcService(server, { execution: args.graphql, reflectedProtos: [healthProtoPath] })
  new HealthImplementation({ '': 'SERVING', [GRAPHQL_GRPC_SERVICE]: 'SERVING' }).addToServer(server)
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${args.host}:${args.port}`, ServerCredentials.createInsecure(), (error, p) =>
      error ? reject(error) : resolve(p),
    ),
  )
  return {
    address: `${args.host}:${bound}`,
    close: async () => {
      graphql.close()
      await new Promise<void>((resolve) => {
        const cut = setTimeout(() => server.forceShutdown(), GRPC_SHUTDOWN_GRACE_MS)
        server.tryShutdown(() => {
          clearTimeout(cut)
          resolve()
        })
      })
    },
  }
}

/**
 * How often a hub woken by the store's notifications still reads it by itself: a guard against a listening connection
 * that died without an error. A lost connection is polled every 200 ms instead (step-notifications.ts).
 */
const LISTENING_SAFETY_POLL_MS = 10_000

/**
 * The live hub of an API that shares no process with the indexer: woken by the store's step notifications where it
 * has them (PostgreSQL LISTEN/NOTIFY: a replica learns of a block as it commits), polling every 200 ms only while
 * they cannot arrive; polling every 200 ms where the store has none (SQLite).
 */
async function followStore(
  store: Store,
  logger: Logger,
): Promise<{ live: LiveHub; stopListening: (() => Promise<void>) | undefined }> {
  // The hub logs its failed reads itself (it retries): the first of a kind in full, repeats as a count.
  if (!store.listenForSteps) return { live: createLiveHub({ source: store, log: logger }), stopListening: undefined }
  const live = createLiveHub({ source: store, log: logger, pollIntervalMs: LISTENING_SAFETY_POLL_MS })
  const notifications = await followStepNotifications({
    listen: store.listenForSteps.bind(store),
    wake: () => live.wake(),
    logger,
  })
  return { live, stopListening: () => notifications.stop() }
}

/**
 * Builds and starts the API on an open store: auth (keys, a signing key derived from the store's secret, revocations,
 * rate limits in memory or Redis), the guaranteed push when a chain API is given, the Fastify app on `--port` and the
 * gRPC server (GraphQL over gRPC, health, reflection) on `--grpc-port`. Streams read `live` when given (woken by an
 * indexer in the same process; close() closes it too), else a hub polling the store.
 */
export async function startApi(args: {
  flags: ApiFlags
  host: string
  store: Store
  storeKind: 'sqlite' | 'postgres'
  chainApi: string | undefined
  logger: Logger
  live?: LiveHub
  /** The in-process indexer's error once it stopped (`dev`, `serve`): `/readyz` reports it. */
  indexerFailure?: () => { readonly code?: string; readonly message: string } | undefined
  /** The in-process indexer's progress (`dev`, `serve`): `/metrics` exports its pace. */
  ingest?: IngestMeter
  /** The store was opened read-only (`antler api`). */
  storeReadOnly?: boolean
  /**
   * Where the portal's setup token is written while no account exists (`dev`, `serve`: the process that owns the
   * store; API replicas make none, so only one token is ever printed).
   */
  setupTokenDir?: string
}): Promise<RunningApi> {
  const { flags, store, logger } = args
  const chainApi = args.chainApi?.replace(/\/+$/, '')
  const limiter = flags.redis
    ? await createRedisRateLimiter({ url: flags.redis, prefix: 'antler:rl:' })
    : createMemoryRateLimiter()
  const revocations = await createRevocationWatch({
    store,
    log: logger,
  })
  const keys = createApiKeyService({ store })
  const auth = createAuthService({
    keys,
    signingKey: await signingKeyFromSecret(await store.secret('jwt_signing_key')),
    revocations,
    limiter,
    limits: flags.rateLimits,
    ttlSeconds: flags.tokenTtl,
    requireOrigin: flags.requireOrigin,
  })
  const push = chainApi ? createPushService({ chainApi, store, log: logger }) : undefined
  // Streams' live hub: given when the indexer shares the process (it wakes the hub), else following the store.
  const { live, stopListening } = args.live
    ? { live: args.live, stopListening: undefined }
    : await followStore(store, logger)
  const lifecycle = createLifecycleService({ store })
  const cursorKey = await store.secret('cursor_key')
  const search = createSearchService({ store, lifecycle, cursorKey })
  // The portal writes accounts, sessions and usage: not on a read-only SQLite connection (as webhooks).
  const portalWrites = !(args.storeReadOnly && args.storeKind === 'sqlite')
  const recorder = portalWrites
    ? createUsageRecorder({
        store,
        log: logger,
      })
    : undefined
  // Every transport's usage (REST, GraphQL, gRPC, streams, webhook deliveries) through one meter.
  const usage = createUsageMeter(recorder)
  // One GraphQL execution layer for every transport: its admission (none with --no-auth), usage meter and error log.
  const graphql = createGraphqlRuntime({
    search,
    store,
    live,
    cursorKey,
    admit: flags.auth ? (admission) => auth.admit(admission) : undefined,
    usage,
    onUnexpected: (error, traceId) => logger.error({ err: error, trace_id: traceId }, 'graphql: unexpected error'),
  })
  // A read-only SQLite connection cannot write subscriptions: webhooks on `antler api` need PostgreSQL.
  const webhooks =
    args.storeReadOnly && args.storeKind === 'sqlite'
      ? undefined
      : createWebhooks({
          store,
          graphql,
          allow: flags.webhookAllowCidr ?? parseAllowCidrs('none'),
          retries: flags.webhookRetries,
          disableAfterMs: flags.webhookDisableAfter,
          limits: {
            maxSubscriptionsPerKey: flags.webhookMaxSubscriptions,
            deliveriesPerSecondPerKey: flags.webhookDeliveryRate,
          },
          stepStamp: () => live.lastSeq,
          // Each delivered message is a document of the subscription's key.
          onDelivered: ({ ownerKeyId }) => usage.documents(ownerKeyId, 1),
          log: logger,
        })
  const accounts = portalWrites ? createAccountsService({ store }) : undefined
  const state = createStateService({ store })
  const app = await buildApp({
    config: {
      noAuth: !flags.auth,
      openChainApi: flags.openChainApi,
      chainApi,
      chainTimeoutMs: CHAIN_TIMEOUT_MS,
      bodyLimitBytes: 1024 * 1024,
      chainBodyLimitBytes: 8 * 1024 * 1024,
      trustProxy: flags.trustProxy,
      hyperionToken: flags.hyperionToken,
    },
    services: {
      auth,
      push,
      state,
      lifecycle,
      search,
      snapshots: store,
      streamStore: store,
      live,
      graphql,
      webhooks: webhooks?.service,
      usage,
      hyperion: { store, search, state, lifecycle, live, chainApi, chainTimeoutMs: CHAIN_TIMEOUT_MS },
      portal: accounts && {
        accounts,
        keys,
        store,
        refreshRevocations: () => revocations.refresh(),
        limits: flags.rateLimits,
        webhooks: webhooks?.service,
        ...(args.setupTokenDir ? { setupFile: join(args.setupTokenDir, SETUP_TOKEN_FILE) } : {}),
      },
      ...(args.ingest ? { ingest: args.ingest } : {}),
      health: {
        storeKind: args.storeKind,
        store,
        positionStamp: () => live.lastSeq,
        chainHead: chainHeadCache(chainApi),
        readiness: { maxLagBlocks: flags.maxLagBlocks, indexerFailure: args.indexerFailure },
      },
    },
    logger,
  })
  await app.listen({ host: args.host, port: flags.port })
  const address = app.server.address()
  const port = typeof address === 'object' && address ? address.port : flags.port
  const setup = accounts && args.setupTokenDir ? await prepareSetupToken(store, args.setupTokenDir) : undefined
  const grpc = await startGrpc({ host: args.host, port: flags.grpcPort, graphql })
  return {
    api: `http://${args.host}:${port}`,
    grpc: grpc.address,
    requests: () => app.metrics.requestsServed(),
    ...(setup ? { setup } : {}),
    async close() {
      revocations.close()
      await Promise.all([app.close(), grpc.close()])
      await webhooks?.close()
      await recorder?.close()
      await stopListening?.()
      await live.close()
      await limiter.close()
    },
  }
}
