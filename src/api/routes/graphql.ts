import type { IncomingMessage } from 'node:http'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import mercurius from 'mercurius'
import type { WebSocket } from 'ws'
import type { AuthService } from '../../auth/index.ts'
import { graphqlWireError, type GraphqlRuntime } from '../../graphql/index.ts'
import { admitRequest, offersToken, rateHeaders } from '../plugins/auth.ts'
import { toAntlerError, wireError } from '../wire-error.ts'
import { asRefusal, checkGraphqlRequest, flattenErrors, type MercuriusErrors } from './graphql-request.ts'
import { guardGraphqlSocket, LEGACY_PROTOCOL } from './graphql-socket.ts'

/** Bytes a GraphQL WebSocket may hold unsent before its subscriptions end as too slow (as `/v1/stream`). */
export const GRAPHQL_MAX_BUFFERED_BYTES = 16 * 1024 * 1024
/** Nesting a query may reach (createdActions and creatorAction recurse). */
const MAX_QUERY_DEPTH = 16

/**
 * GraphQL over HTTP and WebSocket, served by mercurius on the runtime's schema:
 * - `POST /graphql` (a JSON body whatever its Content-Type) and `GET /graphql?query=`: always 200 with
 *   `{data, errors}`, as dfuse answered; a refused token is an error with `extensions.code` `Unauthenticated`, and
 *   each call counts against the key's limits (`X-RateLimit-*` headers);
 * - the WebSocket upgrade of `/graphql`, in the legacy `graphql-ws` subprotocol (@dfuse/client) or the modern
 *   `graphql-transport-ws`, chosen by the client's `Sec-WebSocket-Protocol`; admission and dfuse's protocol details
 *   are in graphql-socket.ts.
 * Registered in its own context: the routes are public to the auth hook, which this plugin replaces.
 */
export const graphqlRoutes: FastifyPluginAsync<{
  runtime: GraphqlRuntime
  auth: AuthService
  noAuth: boolean
}> = async (app, opts) => {
  const log = (error: unknown, traceId: string) =>
    app.log.error({ err: error, trace_id: traceId }, 'graphql: unexpected error')
  // Whatever fails before execution (a refused token, a body that is not JSON) is a GraphQL error too, with 200.
  app.setErrorHandler((error, _request, reply) => {
    const refused = asRefusal(error as Error)
    if (refused !== error) return reply.code(200).send({ data: null, errors: [graphqlWireError(refused)] })
    const { error: known, unexpected } = toAntlerError(error)
    if (unexpected) app.log.error({ err: error }, 'graphql: unexpected error before execution')
    return reply.code(200).send({ data: null, errors: [graphqlWireError(known)] })
  })
  // Bodies are JSON whatever their Content-Type (app.ts): mercurius would read application/graphql as raw query text.
  app.addHook('onRequest', async (request) => {
    if (request.headers['content-type']?.toLowerCase().startsWith('application/graphql'))
      request.headers['content-type'] = 'application/json'
  })
  app.addHook('preValidation', async (request) => {
    if (request.routeOptions.url === '/graphql') await checkGraphqlRequest(request)
  })
  // Each /graphql socket is guarded before mercurius reads it: @fastify/websocket emits `connection` right before it
  // calls the route's handler, with the raw request, which the upgrade's Fastify request was kept under.
  const upgrading = new WeakMap<IncomingMessage, FastifyRequest>()
  app.addHook('onRequest', async (request, reply) => {
    if (!request.ws || request.routeOptions.url !== '/graphql') return
    upgrading.set(request.raw, request)
    // A token offered at the upgrade is checked there: a bad one is an HTTP 401 with the error object, no socket.
    if (opts.noAuth || !offersToken(request)) return
    try {
      await admitRequest(opts.auth, request)
    } catch (error) {
      upgrading.delete(request.raw)
      const refused = toAntlerError(error).error
      return reply.code(refused.status).send(wireError(refused, String(request.id)))
    }
  })
  const errorFormatter = (execution: MercuriusErrors) => ({
    statusCode: 200,
    response: {
      data: execution.data ?? null,
      errors: flattenErrors(execution.errors).map((e) => graphqlWireError(asRefusal(e), log)),
    },
  })
  // Subscriptions over the WebSocket run in the socket guard: one execution and serialization per live step and shape.
  const subscriptions = {
    name: 'websocket',
    encode: (result: MercuriusErrors) =>
      JSON.stringify(result.errors?.length ? errorFormatter(result).response : result),
  }
  const socketContext = (socket: WebSocket) =>
    opts.runtime.context({
      backlog: {
        bufferedBytes: () => socket.bufferedAmount,
        maxBufferedBytes: GRAPHQL_MAX_BUFFERED_BYTES,
        // The error frame could not get through a socket that does not read: the close tells the client.
        abort: () => socket.terminate(),
      },
    })
  app.websocketServer.on('connection', (socket: WebSocket, raw: IncomingMessage) => {
    const request = upgrading.get(raw)
    if (!request) return
    upgrading.delete(raw)
    guardGraphqlSocket(socket, request, {
      auth: opts.auth,
      noAuth: opts.noAuth,
      runtime: opts.runtime,
      subscriptions,
      context: () => socketContext(socket),
      maxDepth: MAX_QUERY_DEPTH,
    })
  })

  await app.register(mercurius, {
    schema: opts.runtime.schema,
    path: '/graphql',
    graphiql: false,
    jit: 0,
    queryDepth: MAX_QUERY_DEPTH,
    additionalRouteOptions: { config: { public: true } },
    context: async (request: FastifyRequest, reply: FastifyReply) => {
      if (!opts.noAuth) {
        const admission = await admitRequest(opts.auth, request)
        rateHeaders(reply, admission.rate)
      }
      return opts.runtime.context()
    },
    errorFormatter,
    subscription: {
      fullWsTransport: true,
      // A client that names no subprotocol speaks dfuse's (legacy Apollo) one.
      wsDefaultSubprotocol: LEGACY_PROTOCOL,
      context: socketContext,
    },
  } as never)
}
