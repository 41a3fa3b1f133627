import type { FastifyRequest } from 'fastify'
import { GraphQLError } from 'graphql'
import type { WebSocket } from 'ws'
import type { GraphqlRuntime, PayloadEncoding } from '../../graphql/index.ts'
import { readFrame, serveFrames, SocketConnection } from './graphql-ws-connection.ts'
import { standardRefusal, type OperationFrames } from './graphql-ws-operations.ts'

/** The legacy Apollo subprotocol (`subscriptions-transport-ws`), which @dfuse/client speaks. */
export const LEGACY_PROTOCOL = 'graphql-ws'

/** How often an admitted connection is sent `ka` (keep-alive), as Apollo's server did. */
const KEEP_ALIVE_MS = 20_000

/** dfuse's frames: `data` results, and `error` frames carrying one error object (not an array). */
const legacyFrames = (runtime: GraphqlRuntime): OperationFrames => ({
  resultPrefix: (id) => `{"type":"data","id":${JSON.stringify(id)},"payload":`,
  error: (id, errors) => ({ type: 'error', id, payload: errors[0] }),
  complete: (id) => ({ type: 'complete', id }),
  // A refused token in an operation's error frame is the standard error object, as dfuse sent it.
  refusal: (error) => standardRefusal(runtime, error),
})

/**
 * A `/graphql` socket in the legacy protocol, as a state machine:
 * - connecting: `connection_init` is admitted (`connection_ack`, then `ka` every KEEP_ALIVE_MS) or refused
 *   (`connection_error` with the standard error object; the socket stays open for another `connection_init`);
 *   `start` is refused with an error frame;
 * - admitted: `start` runs an operation (a `start` reusing a running id stops that one first and waits for its end,
 *   without its `complete`: @dfuse/client restarts a stream so), `stop` stops one, `connection_init` admits again;
 * - always: `pong` and `ka` are dropped (@dfuse/client sends them), `connection_terminate` closes the socket, and any
 *   other frame (not JSON, not an object, an unknown type, no id) is answered with an error frame.
 */
export function serveLegacySocket(
  socket: WebSocket,
  request: FastifyRequest,
  runtime: GraphqlRuntime,
  encoding: PayloadEncoding<string>,
): void {
  const connection = new SocketConnection(socket, runtime, request, legacyFrames(runtime), encoding)
  const { operations } = connection
  let keepAlive: NodeJS.Timeout | undefined
  socket.on('close', () => clearInterval(keepAlive))

  serveFrames(connection, async (text) => {
    const frame = readFrame(text)
    if (frame instanceof GraphQLError) return connection.refuseFrame(null, frame)
    switch (frame.type) {
      case 'connection_init': {
        const refusal = await connection.init(frame.payload)
        if (refusal) return operations.write({ type: 'connection_error', payload: refusal })
        await operations.write({ type: 'connection_ack' })
        if (!keepAlive) {
          keepAlive = setInterval(() => void operations.write({ type: 'ka' }), KEEP_ALIVE_MS)
          keepAlive.unref()
        }
        return operations.write({ type: 'ka' })
      }
      case 'start': {
        if (typeof frame.id !== 'string') return connection.refuseFrame(null, 'a start frame needs an id')
        if (!connection.admitted)
          return connection.refuseFrame(frame.id, 'send connection_init before starting an operation')
        if (operations.has(frame.id)) await operations.replace(frame.id)
        return operations.start(frame.id, frame.payload, connection.token)
      }
      case 'stop':
        return operations.stop(String(frame.id))
      case 'pong':
      case 'ka':
        return
      case 'connection_terminate':
        return socket.close(1000)
      default:
        return connection.refuseFrame(frame.id, `unknown frame type ${JSON.stringify(frame.type)}`)
    }
  })
}
