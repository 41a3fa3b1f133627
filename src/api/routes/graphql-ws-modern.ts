import type { FastifyRequest } from 'fastify'
import { GraphQLError } from 'graphql'
import type { WebSocket } from 'ws'
import type { GraphqlRuntime, PayloadEncoding } from '../../graphql/index.ts'
import { readFrame, serveFrames, SocketConnection } from './graphql-ws-connection.ts'
import type { OperationFrames } from './graphql-ws-operations.ts'

/** The `graphql-ws` library's subprotocol. */
export const MODERN_PROTOCOL = 'graphql-transport-ws'

/** The protocol's frames: `next` results, `error` frames carrying an array of errors. */
const modernFrames = (runtime: GraphqlRuntime): OperationFrames => ({
  resultPrefix: (id) => `{"type":"next","id":${JSON.stringify(id)},"payload":`,
  error: (id, errors) => ({ type: 'error', id, payload: errors }),
  complete: (id) => ({ type: 'complete', id }),
  refusal: (error) => runtime.wireError(error),
})

/**
 * A `/graphql` socket in `graphql-transport-ws`, as a state machine:
 * - connecting: `connection_init` is admitted (`connection_ack`) or refused (`connection_error` with the standard
 *   error object, as on the legacy protocol: the socket stays open); `subscribe` is refused with an error frame;
 * - admitted: `subscribe` runs an operation (an id already running is refused), `complete` stops one;
 * - always: `ping` is answered `pong`, `pong` is dropped, and any other frame (not JSON, not an object, an unknown
 *   type, no id) is answered with an error frame: the socket serves on (where the graphql-ws library would close it).
 */
export function serveModernSocket(
  socket: WebSocket,
  request: FastifyRequest,
  runtime: GraphqlRuntime,
  encoding: PayloadEncoding<string>,
): void {
  const connection = new SocketConnection(socket, runtime, request, modernFrames(runtime), encoding)
  const { operations } = connection

  serveFrames(connection, async (text) => {
    const frame = readFrame(text)
    if (frame instanceof GraphQLError) return connection.refuseFrame(null, frame)
    switch (frame.type) {
      case 'connection_init': {
        const refusal = await connection.init(frame.payload)
        return operations.write(refusal ? { type: 'connection_error', payload: refusal } : { type: 'connection_ack' })
      }
      case 'subscribe': {
        if (typeof frame.id !== 'string') return connection.refuseFrame(null, 'a subscribe frame needs an id')
        if (!connection.admitted) return connection.refuseFrame(frame.id, 'send connection_init before subscribing')
        if (operations.has(frame.id))
          return connection.refuseFrame(frame.id, `an operation with id ${frame.id} is already running`)
        return operations.start(frame.id, frame.payload, connection.token)
      }
      case 'complete':
        return operations.stop(String(frame.id))
      case 'ping':
        return operations.write({ type: 'pong' })
      case 'pong':
        return
      default:
        return connection.refuseFrame(frame.id, `unknown frame type ${JSON.stringify(frame.type)}`)
    }
  })
}
