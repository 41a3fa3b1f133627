import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { WebSocket } from 'ws'
import type { AuthService } from '../../auth/index.ts'
import { AntlerError } from '../../antelope/index.ts'
import { UpgradeRequiredError } from '../errors.ts'
import { offersToken } from '../plugins/auth.ts'
import { newTraceId } from '../plugins/errors.ts'
import { wireError } from '../wire-error.ts'
import { serveStreamConnection, type ConnectionLimits } from '../stream/connection.ts'
import type { StreamHandlers } from '../stream/handlers.ts'

/** A plain GET of a WebSocket endpoint: 400 ws_upgrade_failed_error (@fastify/websocket would answer an empty 404). */
async function requireUpgrade(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (request.ws) return
  reply.header('upgrade', 'websocket')
  throw UpgradeRequiredError()
}

/**
 * The WebSocket endpoints' upgrades: `/v1/stream` needs a token at the upgrade (`?token=`, or the
 * Authorization header), refused with HTTP 401 before any upgrade; `/graphql` takes it at the
 * upgrade or in `connection_init` (what @dfuse/client sends). A token is checked once per
 * connection: its expiry never closes an open socket.
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
    (socket: WebSocket) => {
      serveStreamConnection(socket, opts.streams, opts.limits)
    },
  )

  app.get(
    '/graphql',
    {
      websocket: true,
      preHandler: requireUpgrade,
      config: { public: true, tokenWhen: offersToken },
      schema: { summary: 'GraphQL over WebSocket (upgrade; token at the upgrade or in connection_init)', hide: true },
    },
    (socket: WebSocket, request: FastifyRequest) => {
      let admitted = opts.noAuth || request.auth !== undefined
      // Messages are handled one after another: a `start` sent right after `connection_init` (as
      // subscriptions-transport-ws clients do, without waiting for the ack) waits for the admission.
      let previous: Promise<void> = Promise.resolve()
      socket.on('message', (data: Buffer, isBinary: boolean) => {
        previous = previous.then(async () => {
          let message: { type?: unknown; id?: unknown; payload?: { Authorization?: unknown; authorization?: unknown } }
          try {
            message = JSON.parse(isBinary ? '' : data.toString('utf8'))
          } catch {
            socket.close(4400, 'invalid message')
            return
          }
          if (message?.type === 'connection_init') {
            if (!admitted) {
              const raw = message.payload?.Authorization ?? message.payload?.authorization
              const token = typeof raw === 'string' ? raw.replace(/^bearer\s+/i, '') : undefined
              try {
                await opts.auth.admit({ token, caller: { ip: request.ip, origin: request.headers.origin } })
                admitted = true
              } catch (error) {
                const e = error instanceof AntlerError ? error : new AntlerError('unexpected_error')
                socket.send(JSON.stringify({ type: 'connection_error', payload: wireError(e, newTraceId()) }))
                return
              }
            }
            socket.send(JSON.stringify({ type: 'connection_ack' }))
          } else if (message?.type === 'pong' || message?.type === 'ka') return
          else if (!admitted)
            socket.send(JSON.stringify({ type: 'connection_error', payload: { message: 'authentication required' } }))
          else if (message?.type === 'connection_terminate') socket.close(1000)
          else if (typeof message?.id === 'string')
            socket.send(
              JSON.stringify({
                type: 'error',
                id: message.id,
                payload: { message: 'GraphQL operations are not served by this version yet' },
              }),
            )
        })
      })
    },
  )
}
