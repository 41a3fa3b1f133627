import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { GraphQLError } from 'graphql'
import type { WebSocket } from 'ws'
import { AntlerError } from '../../antelope/index.ts'
import type { GraphqlRuntime } from '../../graphql/index.ts'
import { offersToken, tokenForAdmission } from '../plugins/auth.ts'
import { toAntlerError, wireError } from '../wire-error.ts'
import { answerGraphqlHttp } from './graphql-http.ts'
import { serveLegacySocket, LEGACY_PROTOCOL } from './graphql-ws-legacy.ts'
import { serveModernSocket, MODERN_PROTOCOL } from './graphql-ws-modern.ts'
import { socketEncoding } from './graphql-ws-operations.ts'

/**
 * Fastify's refusals of a request before the handler (its body: not JSON, too large, badly encoded) as the error a
 * GraphQL answer carries: the registry's error when there is one, else a plain GraphQLError (the caller's mistake,
 * `InvalidArgument`); anything else stays unexpected.
 */
function asRefusal(error: Error & { code?: unknown }): unknown {
  if (error instanceof GraphQLError || error instanceof AntlerError) return error
  const known = toAntlerError(error)
  if (!known.unexpected) return known.error
  return typeof error.code === 'string' && error.code.startsWith('FST_ERR_') ? new GraphQLError(error.message) : error
}

/**
 * GraphQL over HTTP and WebSocket, thin adapters over the runtime's execution layer (src/graphql: parse, validate,
 * admit, execute, count usage):
 * - `POST /graphql` (a JSON body whatever its Content-Type) and `GET /graphql?query=`: always 200 with
 *   `{data, errors}`, as dfuse answered (graphql-http.ts); whatever fails before the handler (a body that is not JSON,
 *   too large) is a GraphQL error too;
 * - the WebSocket upgrade of `GET /graphql`, in the legacy `graphql-ws` subprotocol (@dfuse/client; also when none is
 *   named) or `graphql-transport-ws`, chosen by the client's `Sec-WebSocket-Protocol` (graphql-ws-legacy.ts,
 *   graphql-ws-modern.ts). A token offered at the upgrade is checked there: a bad one is an HTTP 401 with the standard
 *   error object, no socket.
 * Registered in its own context: the routes are public to the auth hook (they admit tokens themselves).
 */
export const graphqlRoutes: FastifyPluginAsync<{ runtime: GraphqlRuntime }> = async (app, opts) => {
  const { runtime } = opts
  app.setErrorHandler((error, request, reply) => {
    request.usageCounted = true
    const wire = runtime.wireError(asRefusal(error as Error), String(request.id))
    return reply.code(200).send({ data: null, errors: [wire] })
  })
  app.addHook('onRequest', async (request, reply) => {
    if (!request.ws) return
    request.usageCounted = true
    if (!offersToken(request)) return
    try {
      await runtime.admit(tokenForAdmission(request), { ip: request.ip, origin: request.headers.origin })
    } catch (error) {
      const { error: refused, unexpected } = toAntlerError(error)
      if (unexpected) runtime.onUnexpected(error, String(request.id))
      return reply.code(refused.status).send(wireError(refused, String(request.id)))
    }
  })
  const encoding = socketEncoding(runtime)
  const config = { public: true }
  app.route({
    method: 'GET',
    url: '/graphql',
    config,
    handler: (request: FastifyRequest, reply: FastifyReply) =>
      answerGraphqlHttp(runtime, request, reply, request.query),
    wsHandler: (socket: WebSocket, request: FastifyRequest) => {
      // No subprotocol named: dfuse's (legacy) one.
      if (socket.protocol === MODERN_PROTOCOL) serveModernSocket(socket, request, runtime, encoding)
      else if (socket.protocol === LEGACY_PROTOCOL || socket.protocol === '')
        serveLegacySocket(socket, request, runtime, encoding)
      else socket.close(4406, 'unsupported subprotocol')
    },
  })
  app.post('/graphql', { config }, (request, reply) => answerGraphqlHttp(runtime, request, reply, request.body))
}
