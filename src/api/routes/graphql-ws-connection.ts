import type { FastifyRequest } from 'fastify'
import { GraphQLError } from 'graphql'
import type { WebSocket } from 'ws'
import { newTraceId } from '../../antelope/index.ts'
import { authorizationToken } from '../../auth/index.ts'
import type { GraphqlRuntime, PayloadEncoding } from '../../graphql/index.ts'
import { tokenForAdmission } from '../plugins/auth.ts'
import type { WireError } from '../wire-error.ts'
import { SocketOperations, standardRefusal, type OperationFrames } from './graphql-ws-operations.ts'

/** A client frame of either subprotocol, as far as a protocol module reads it. */
export interface ClientFrame {
  readonly type?: unknown
  readonly id?: unknown
  readonly payload?: unknown
}

/** A frame's text as a JSON object, or the error answering it (not JSON, or JSON that is no object). */
export function readFrame(text: string): ClientFrame | GraphQLError {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return new GraphQLError('a frame must be JSON text')
  }
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as ClientFrame)
    : new GraphQLError('a frame must be a JSON object')
}

/** The token of a `connection_init` payload (`Authorization` or `authorization`, `Bearer ` optional). */
function initToken(payload: unknown): string | undefined {
  if (!payload || typeof payload !== 'object') return undefined
  const raw = (payload as Record<string, unknown>).Authorization ?? (payload as Record<string, unknown>).authorization
  return typeof raw === 'string' && raw !== '' ? authorizationToken([raw]) : undefined
}

/**
 * What a protocol module works with on one socket: the connection's admission (the upgrade's token, replaced by the
 * one `connection_init` carries) and its operations.
 */
export class SocketConnection {
  /** The token operations are admitted with. */
  token: string | undefined
  /** Whether a `connection_init` was admitted (operations may start). */
  admitted = false
  readonly operations: SocketOperations
  private readonly caller: { readonly ip: string; readonly origin?: string }

  constructor(
    readonly socket: WebSocket,
    readonly runtime: GraphqlRuntime,
    request: FastifyRequest,
    private readonly frames: OperationFrames,
    encoding: PayloadEncoding<string>,
  ) {
    this.caller = { ip: request.ip, origin: request.headers.origin }
    this.token = tokenForAdmission(request)
    this.operations = new SocketOperations(socket, runtime, frames, encoding, this.caller)
  }

  /**
   * A `connection_init`: its token (else the upgrade's) admitted; the refusal as the standard error object (the
   * socket stays open, as dfuse left it: a later `connection_init` may bring a good token).
   */
  async init(payload: unknown): Promise<WireError | undefined> {
    this.token = initToken(payload) ?? this.token
    try {
      await this.runtime.admit(this.token, this.caller)
      this.admitted = true
      return undefined
    } catch (error) {
      return standardRefusal(this.runtime, error)
    }
  }

  /** An error frame for a frame that is not what the protocol expects (the socket stays open). */
  refuseFrame(id: unknown, message: string | GraphQLError): Promise<void> {
    const error = typeof message === 'string' ? new GraphQLError(message) : message
    return this.operations.write(this.frames.error(typeof id === 'string' ? id : null, [this.runtime.wireError(error)]))
  }
}

/**
 * Feeds a socket's frames to `receive` one at a time, in arrival order (binary frames read as text), and stops the
 * socket's operations when it closes. A failure no one expected is logged once and ends the connection.
 */
export function serveFrames(connection: SocketConnection, receive: (text: string) => Promise<void>): void {
  const { socket, operations, runtime } = connection
  let queue = Promise.resolve()
  socket.on('message', (data: Buffer | ArrayBuffer | Buffer[]) => {
    const text = Array.isArray(data) ? Buffer.concat(data).toString() : Buffer.from(data as Buffer).toString()
    queue = queue.then(() =>
      receive(text).catch((error: unknown) => {
        runtime.onUnexpected(error, newTraceId())
        socket.terminate()
      }),
    )
  })
  socket.on('close', () => operations.stopAll())
  socket.on('error', () => operations.stopAll())
}
