import type { FastifyRequest } from 'fastify'
import type { WebSocket } from 'ws'
import { AntlerError } from '../../antelope/index.ts'
import type { AuthService } from '../../auth/index.ts'
import { graphqlWireError } from '../../graphql/index.ts'
import { UnexpectedError } from '../errors.ts'
import { presentedToken } from '../plugins/auth.ts'
import { newTraceId } from '../plugins/errors.ts'
import { wireError } from '../wire-error.ts'

/** How long a restarted operation waits for the one it replaces to end. */
const RESTART_WAIT_MS = 2_000

/** The legacy Apollo subprotocol (`subscriptions-transport-ws`), which @dfuse/client speaks. */
export const LEGACY_PROTOCOL = 'graphql-ws'

interface Frame {
  type?: unknown
  id?: unknown
  payload?: unknown
}

const parse = (data: Buffer | string): Frame | undefined => {
  try {
    const frame = JSON.parse(data.toString())
    return frame && typeof frame === 'object' ? (frame as Frame) : undefined
  } catch {
    return undefined
  }
}

/** The token of a `connection_init` payload (`Authorization` or `authorization`, `Bearer ` optional). */
function initToken(payload: unknown): string | undefined {
  if (!payload || typeof payload !== 'object') return undefined
  const raw = (payload as Record<string, unknown>).Authorization ?? (payload as Record<string, unknown>).authorization
  return typeof raw === 'string' && raw !== '' ? raw.replace(/^bearer\s+/i, '') : undefined
}

/**
 * Sits between a `/graphql` WebSocket and mercurius, which runs the protocol:
 * - admission: the token of `connection_init` (or the upgrade's) is checked before mercurius acknowledges the
 *   connection; a refusal answers `connection_error` with the standard error object and leaves the socket open (as
 *   dfuse did); each operation started counts against the key's limits (refused with an `error` for its id);
 * - dfuse's legacy protocol: `pong` frames are dropped (mercurius would answer them with an error), a `start` that
 *   reuses a running id stops the running one first (@dfuse/client restarts a stream that way), and `error` frames
 *   carry one error object, not an array.
 * Frames are handled in arrival order.
 */
export function guardGraphqlSocket(
  socket: WebSocket,
  request: FastifyRequest,
  opts: { auth: AuthService; noAuth: boolean },
): void {
  // No subprotocol named: mercurius speaks the legacy one (routes/graphql.ts).
  const legacy = socket.protocol === LEGACY_PROTOCOL || socket.protocol === ''
  const caller = { ip: request.ip, origin: request.headers.origin }
  const upgrade = presentedToken(request)
  let token: string | undefined = upgrade.malformed ? 'malformed' : upgrade.token
  let admitted = false
  const running = new Set<string>()
  /** Operations being stopped for a restart: their closing frame is not sent, and the restart waits for it. */
  const restarting = new Map<string, () => void>()
  const emit = socket.emit.bind(socket) as (event: string, ...args: unknown[]) => boolean
  const send = socket.send.bind(socket) as (data: string, cb?: (error?: Error) => void) => void

  const sendFrame = (frame: Record<string, unknown>) => {
    if (socket.readyState === socket.OPEN) send(JSON.stringify(frame))
  }
  const refusal = (error: unknown) => {
    const known = error instanceof AntlerError ? error : UnexpectedError()
    return wireError(known, newTraceId())
  }

  /** Stops the running operation `id` and waits until mercurius has ended it (its closing frame is swallowed). */
  async function restart(id: string): Promise<void> {
    const ended = new Promise<void>((resolve) => restarting.set(id, resolve))
    emit('message', Buffer.from(JSON.stringify({ type: 'stop', id })), false)
    await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, RESTART_WAIT_MS))])
    restarting.delete(id)
  }

  /** Whether mercurius gets the frame. */
  async function admit(frame: Frame | undefined): Promise<boolean> {
    if (!frame) return true
    if (frame.type === 'connection_init') {
      if (opts.noAuth) return (admitted = true)
      token = initToken(frame.payload) ?? token
      try {
        await opts.auth.admit({ token, caller })
        admitted = true
        return true
      } catch (error) {
        sendFrame({ type: 'connection_error', payload: refusal(error) })
        return false
      }
    }
    if (legacy && (frame.type === 'pong' || frame.type === 'ka')) return false
    const starts = frame.type === (legacy ? 'start' : 'subscribe')
    if (!starts || !admitted || typeof frame.id !== 'string') return true
    if (!opts.noAuth) {
      try {
        await opts.auth.admit({ token, caller })
      } catch (error) {
        sendFrame({ type: 'error', id: frame.id, payload: legacy ? refusal(error) : [graphqlWireError(error)] })
        return false
      }
    }
    if (legacy && running.has(frame.id)) await restart(frame.id)
    running.add(frame.id)
    return true
  }

  let queue: Promise<void> = Promise.resolve()
  socket.emit = ((event: string, ...args: unknown[]) => {
    if (event !== 'message') return emit(event, ...args)
    const [data, isBinary] = args as [Buffer, boolean]
    queue = queue.then(async () => {
      const frame = isBinary ? undefined : parse(data)
      if (frame?.type === 'stop' || frame?.type === 'complete') running.delete(String(frame.id))
      if (await admit(frame)) emit('message', data, isBinary)
    })
    return true
  }) as typeof socket.emit

  // Outgoing: the legacy protocol's terminal `error` carries one error object; ended operations leave `running`.
  socket.send = ((data: string, cb?: (error?: Error) => void) => {
    const frame = legacy ? parse(data) : undefined
    if (frame && (frame.type === 'error' || frame.type === 'complete')) {
      const id = String(frame.id)
      running.delete(id)
      const ended = restarting.get(id)
      if (ended) {
        restarting.delete(id)
        ended()
        return cb?.()
      }
      if (frame.type === 'error' && Array.isArray(frame.payload))
        return send(JSON.stringify({ ...frame, payload: frame.payload[0] ?? { message: 'error' } }), cb)
    }
    return send(data, cb)
  }) as typeof socket.send
}
