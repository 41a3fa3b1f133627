import type { FastifyRequest } from 'fastify'
import {
  getOperationAST,
  GraphQLError,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
} from 'graphql'
import type { WebSocket } from 'ws'
import { AntlerError } from '../../antelope/index.ts'
import type { AuthService } from '../../auth/index.ts'
import {
  graphqlWireError,
  GraphqlRequestError,
  type GraphqlContext,
  type GraphqlRuntime,
  type PayloadEncoding,
  type SharedSubscription,
} from '../../graphql/index.ts'
import { UnexpectedError, WsTooMuchStreamError } from '../errors.ts'
import { documentedFrame, errorPayload, readFrame } from './graphql-frames.ts'
import { tokenForAdmission } from '../plugins/auth.ts'
import { newTraceId } from '../plugins/errors.ts'
import { wireError } from '../wire-error.ts'

/** How long one frame may wait to be written to the client before the connection is ended (dfuse: 10 s). */
export const WRITE_TIMEOUT_MS = 10_000

/** How long a restarted operation waits for the one it replaces to end. */
const RESTART_WAIT_MS = 2_000

/** Operations one socket may run at once (dfuse's streams per connection were 12). */
export const MAX_OPERATIONS_PER_SOCKET = 32

/** The legacy Apollo subprotocol (`subscriptions-transport-ws`), which @dfuse/client speaks. */
export const LEGACY_PROTOCOL = 'graphql-ws'

/**
 * How deep an operation's selections nest, fragments followed (an inline fragment counts as a level too, so this is
 * never below mercurius's own count).
 */
function selectionDepth(document: DocumentNode, set: SelectionSetNode | undefined, seen = new Set<string>()): number {
  if (!set) return 0
  let deepest = 0
  for (const selection of set.selections) {
    if (selection.kind === Kind.FRAGMENT_SPREAD) {
      const name = selection.name.value
      if (seen.has(name)) continue
      const fragment = document.definitions.find(
        (d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === name,
      )
      deepest = Math.max(deepest, selectionDepth(document, fragment?.selectionSet, new Set(seen).add(name)))
    } else deepest = Math.max(deepest, selectionDepth(document, selection.selectionSet, seen))
  }
  return deepest + 1
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
 * - subscriptions: run here, not by mercurius (which executes and serializes every event per subscriber): an event's
 *   payload comes from the shared subscriptions (one execution and one serialization per live step and query shape),
 *   and only the frame's envelope (`id`) is written per subscriber; each frame waits for the previous one's write, as
 *   mercurius's did (a slow socket slows its own subscriptions; the write timeout and the backlog bound end it).
 * Frames are handled in arrival order.
 */
export function guardGraphqlSocket(
  socket: WebSocket,
  request: FastifyRequest,
  opts: {
    auth: AuthService
    noAuth: boolean
    runtime: GraphqlRuntime
    subscriptions: PayloadEncoding<string>
    /** The context of this socket's operations (its backlog bound). */
    context: () => GraphqlContext
    /** Deeper subscriptions are left to mercurius, which refuses them. */
    maxDepth: number
  },
): void {
  // No subprotocol named: mercurius speaks the legacy one (routes/graphql.ts).
  const legacy = socket.protocol === LEGACY_PROTOCOL || socket.protocol === ''
  const caller = { ip: request.ip, origin: request.headers.origin }
  let token = tokenForAdmission(request)
  let admitted = false
  const running = new Set<string>()
  /** Operations being stopped for a restart: their closing frame is not sent, and the restart waits for it. */
  const restarting = new Map<string, () => void>()
  /** The subscriptions this guard runs itself, by operation id: stopping one ends its events. */
  const subscriptions = new Map<string, { stop(): void }>()
  const emit = socket.emit.bind(socket) as (event: string, ...args: unknown[]) => boolean
  const send = socket.send.bind(socket) as (data: string, cb?: (error?: Error) => void) => void

  const sendFrame = (frame: Record<string, unknown>) => {
    if (socket.readyState === socket.OPEN) send(JSON.stringify(frame))
  }
  const refusal = (error: unknown) => {
    const known = error instanceof AntlerError ? error : UnexpectedError()
    return wireError(known, newTraceId())
  }

  const operationError = (id: unknown, errors: readonly unknown[]) =>
    sendFrame({ type: 'error', id, payload: errorPayload(legacy, errors) })

  /** The operation's request checked as every transport checks it (limits, syntax, the schema): document or errors. */
  function checkOperation(payload: unknown): { errors: unknown[] } | { document: DocumentNode } {
    const p = payload as { query?: unknown; operationName?: unknown } | null | undefined
    if (!p || typeof p !== 'object' || typeof p.query !== 'string')
      return { errors: [graphqlWireError(new GraphQLError('the payload must be an object with a query string'))] }
    try {
      return {
        document: opts.runtime.prepare({ query: p.query, operationName: (p.operationName as string) ?? undefined }, [
          'query',
          'subscription',
        ]).document,
      }
    } catch (error) {
      if (error instanceof GraphqlRequestError) return { errors: error.errors.map((e) => graphqlWireError(e)) }
      throw error
    }
  }

  /** Writes a frame already serialized; resolves once it is written (or failed). */
  const sendText = (text: string) =>
    new Promise<void>((resolve) => {
      if (socket.readyState !== socket.OPEN) return resolve()
      socket.send(text, () => resolve())
    })

  /** An operation's last frame, through the outgoing path (it leaves `running`; a restart swallows it). */
  const closing = (frame: Record<string, unknown>) => {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(frame))
    else running.delete(String(frame.id))
  }

  /** Runs subscription `id` until its events end, it is stopped, or it fails; then its closing frame. */
  async function runSubscription(id: string, document: DocumentNode, payload: Record<string, unknown>): Promise<void> {
    const dataFrame = `{"type":"${legacy ? 'data' : 'next'}","id":${JSON.stringify(id)},"payload":`
    let started: SharedSubscription<string> | undefined
    let stopped = false
    const entry = {
      stop() {
        stopped = true
        void started?.events.return?.()
      },
    }
    subscriptions.set(id, entry)
    try {
      const variables = payload.variables
      const request = {
        query: payload.query as string,
        variables: variables && typeof variables === 'object' ? (variables as Record<string, unknown>) : undefined,
        operationName: typeof payload.operationName === 'string' ? payload.operationName : undefined,
      }
      const operation = getOperationAST(document, request.operationName)!
      const subscribed = await opts.runtime.subscribe(
        { request, document, operation },
        opts.context(),
        opts.subscriptions,
      )
      if (!('events' in subscribed)) {
        const errors = (subscribed.errors ?? []).map((e: unknown) => graphqlWireError(e))
        closing({ type: 'error', id, payload: errorPayload(legacy, errors) })
        return
      }
      started = subscribed
      if (stopped || socket.readyState !== socket.OPEN) await started.events.return?.()
      for (;;) {
        if (stopped) break
        const next = await started.events.next()
        if (next.done || stopped) break
        const text = await started.payload(next.value)
        if (stopped) break
        await sendText(`${dataFrame}${text}}`)
      }
      closing({ type: 'complete', id })
    } catch (error) {
      closing({ type: 'error', id, payload: errorPayload(legacy, [graphqlWireError(error)]) })
    } finally {
      if (subscriptions.get(id) === entry) subscriptions.delete(id)
    }
  }

  /** Stops the running operation `id` and waits until it has ended (its closing frame is swallowed). */
  async function restart(id: string): Promise<void> {
    const ended = new Promise<void>((resolve) => restarting.set(id, resolve))
    const own = subscriptions.get(id)
    if (own) own.stop()
    else emit('message', Buffer.from(JSON.stringify({ type: 'stop', id })), false)
    await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, RESTART_WAIT_MS))])
    restarting.delete(id)
  }

  /** Whether mercurius gets the frame. */
  async function admit(read: ReturnType<typeof readFrame>): Promise<boolean> {
    // Not JSON: mercurius answers it. JSON that is not an object would throw inside mercurius and close the socket.
    if (read === 'not-json') return true
    if (read === 'not-object') {
      operationError(null, [graphqlWireError(new GraphQLError('a frame must be a JSON object'))])
      return false
    }
    const { frame } = read
    if (frame.type === 'stop' || frame.type === 'complete') {
      running.delete(String(frame.id))
      const own = subscriptions.get(String(frame.id))
      if (own) {
        own.stop()
        return false
      }
    }
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
        operationError(frame.id, [legacy ? refusal(error) : graphqlWireError(error)])
        return false
      }
    }
    const checked = checkOperation(frame.payload)
    if ('errors' in checked) {
      operationError(frame.id, checked.errors)
      return false
    }
    if (legacy && running.has(frame.id)) await restart(frame.id)
    if (running.size >= MAX_OPERATIONS_PER_SOCKET && !running.has(frame.id)) {
      const error = WsTooMuchStreamError({ actual: running.size, maximum: MAX_OPERATIONS_PER_SOCKET })
      operationError(frame.id, [graphqlWireError(error)])
      return false
    }
    running.add(frame.id)
    const payload = frame.payload as Record<string, unknown>
    const operation = getOperationAST(checked.document, (payload.operationName as string) ?? undefined)
    if (operation?.operation !== 'subscription') return true
    if (selectionDepth(checked.document, operation.selectionSet) > opts.maxDepth) return true
    void runSubscription(frame.id, checked.document, payload)
    return false
  }
  const stopAll = () => {
    for (const own of subscriptions.values()) own.stop()
  }
  socket.on('close', stopAll)
  socket.on('error', stopAll)

  let queue: Promise<void> = Promise.resolve()
  socket.emit = ((event: string, ...args: unknown[]) => {
    if (event !== 'message') return emit(event, ...args)
    const [data, isBinary] = args as [Buffer, boolean]
    queue = queue.then(async () => {
      if (await admit(readFrame(data))) emit('message', data, isBinary)
    })
    return true
  }) as typeof socket.emit

  // Outgoing: errors in the documented shape (one object per legacy `error` frame); ended operations leave `running`.
  socket.send = ((data: string, cb?: (error?: Error) => void) => {
    const read = data.includes('"complete"') || data.includes('"error"') ? readFrame(data) : undefined
    const frame = read && typeof read === 'object' ? read.frame : undefined
    if (frame && (frame.type === 'error' || frame.type === 'complete')) {
      const id = String(frame.id)
      running.delete(id)
      const ended = restarting.get(id)
      if (ended) {
        restarting.delete(id)
        ended()
        return cb?.()
      }
    }
    // A frame not written within the write timeout (a client that stopped reading): the connection ends, as dfuse's.
    const stalled = setTimeout(() => socket.terminate(), WRITE_TIMEOUT_MS)
    stalled.unref()
    return send(documentedFrame(data, legacy), (error) => {
      clearTimeout(stalled)
      cb?.(error)
    })
  }) as typeof socket.send
}
