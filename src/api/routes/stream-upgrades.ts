import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { WebSocket } from 'ws'
import type { AuthService } from '../../auth/index.ts'
import { UpgradeRequiredError } from '../errors.ts'
import { serveStreamConnection, type ConnectionLimits } from '../stream/connection.ts'
import type { StreamHandlers } from '../stream/handlers.ts'

/** A plain GET of a WebSocket endpoint: 400 ws_upgrade_failed_error (@fastify/websocket would answer an empty 404). */
async function requireUpgrade(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (request.ws) return
  reply.header('upgrade', 'websocket')
  throw UpgradeRequiredError()
}

/**
 * The `/v1/stream` upgrade: it needs a token at the upgrade (`?token=`, or the Authorization header), refused with
 * HTTP 401 before any upgrade. A token is checked once per connection: its expiry never closes an open socket. (The
 * `/graphql` upgrade is routes/graphql.ts's: a token there is optional, `connection_init` may bring it.)
 */
export const streamUpgradeRoutes: FastifyPluginAsync<{
  auth: AuthService
  noAuth: boolean
  streams: StreamHandlers
  limits?: ConnectionLimits
}> = async (app, opts) => {
  app.get(
    '/v1/stream',
    {
      websocket: true,
      preHandler: requireUpgrade,
      schema: { summary: 'dfuse WebSocket stream (upgrade; token required)', hide: true },
    },
    (socket: WebSocket, request: FastifyRequest) => {
      const keyId = request.auth?.aki
      const usage = app.usage
      serveStreamConnection(socket, opts.streams, opts.limits, {
        ...(keyId === undefined
          ? {}
          : {
              usage: {
                request: (outcome) => usage.request(keyId, outcome, 0),
                documents: (count) => usage.documents(keyId, count),
              },
            }),
        onUnexpected: (error, traceId) =>
          request.log.error({ err: error, trace_id: traceId }, 'stream: unexpected error'),
      })
    },
  )
}
