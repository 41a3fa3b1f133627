import { randomUUID } from 'node:crypto'
import type { Socket } from 'socket.io'
import {
  parseActionRequest,
  parseDeltaRequest,
  planStream,
  runStream,
  StreamRequestError,
  type BlockDocumentMemo,
  type RunningStream,
  type StreamDeps,
  type StreamRequest,
  type StreamSink,
} from '../../hyperion/index.ts'

/** The bounds of one `/stream` connection. */
export interface StreamSessionLimits {
  /** Requests one connection may run at once. Default 10. */
  readonly maxRequests: number
  /** How long the client has to acknowledge a history batch, in ms (Hyperion: 120 s). */
  readonly ackTimeoutMs: number
}

export const STREAM_SESSION_DEFAULTS: StreamSessionLimits = { maxRequests: 10, ackTimeoutMs: 120_000 }

/** A disconnected connection's replayable requests, kept for a `reconnect` from its client. */
export interface ReplayEntry {
  readonly request: StreamRequest
  /** The last block the old connection was sent; the replay starts after it. */
  readonly lastBlock: number
}

/** What every session shares. */
export interface SessionContext {
  readonly deps: StreamDeps
  readonly memo: BlockDocumentMemo
  readonly chainId: () => Promise<string>
  readonly limits: StreamSessionLimits
  /** Requests of recently disconnected sockets (by their id) that asked `replayOnReconnect`. */
  readonly replays: {
    put(socketId: string, entries: ReplayEntry[]): void
    take(socketId: string): ReplayEntry[] | undefined
  }
  /** An unexpected failure (a store read), logged once by the server. */
  readonly onUnexpected: (error: unknown) => void
}

type Ack = (answer: unknown) => void
const ackOf = (args: unknown[]): Ack | undefined => {
  const last = args.at(-1)
  return typeof last === 'function' ? (last as Ack) : undefined
}

/** Resolves once engine.io's transport has written out what it holds (or the connection closed). */
async function transportDrained(socket: Socket): Promise<void> {
  const conn = socket.conn
  // engine.io keeps packets in `writeBuffer` while its transport is busy (private in its types, stable in 6.x).
  const buffered = () => (conn as unknown as { writeBuffer: unknown[] }).writeBuffer.length
  while (conn.readyState === 'open' && (!conn.transport.writable || buffered() > 0)) {
    await new Promise<void>((resolve) => {
      const done = () => {
        conn.transport.off('drain', done)
        conn.off('close', done)
        resolve()
      }
      conn.transport.once('drain', done)
      conn.once('close', done)
    })
  }
}

/**
 * One `/stream` connection: `handshake` on connect; `action_stream_request` / `delta_stream_request` acked `{status:
 * "OK", reqUUID, currentBlockNum}` or `{status: "ERROR", message}` (every request gets an answer, whatever it holds);
 * `cancel_stream_request`; `reconnect {last_id}` replays the old connection's `replayOnReconnect` requests from where
 * it stopped (or asks the client to resend them: `resend_requests`). Unknown events are ignored.
 */
export function serveStreamSession(socket: Socket, context: SessionContext): void {
  const running = new Map<string, { request: StreamRequest; stream: RunningStream }>()
  let closed = false

  const sink: StreamSink = {
    get open() {
      return !closed && socket.connected
    },
    async historyBatch(batch) {
      // Hyperion's client answers `{status: true}`; any answer lets the next batch go.
      await socket.timeout(context.limits.ackTimeoutMs).emitWithAck('message', batch)
    },
    message: (payload) => void socket.emit('message', payload),
    live: (type, reqUUID, doc) =>
      void socket.emit('message', {
        type,
        mode: 'live',
        targets: [reqUUID],
        // Hyperion sends the document's JSON text as bytes; clients parse it.
        message: Buffer.from(JSON.stringify(doc)),
      }),
    fork: (event) => void socket.emit('fork_event', event),
    drain: () => transportDrained(socket),
  }

  const start = async (request: StreamRequest, reqUUID: string): Promise<number> => {
    const plan = await planStream(context.deps.store, request)
    const chainId = await context.chainId()
    const type = request.kind === 'action' ? 'action_trace' : 'delta_trace'
    const stream = runStream({
      deps: context.deps,
      memo: context.memo,
      chainId,
      reqUUID,
      request,
      plan,
      sink,
      onEnd: (error) => {
        running.delete(reqUUID)
        if (error === undefined || closed) return
        const code = (error as { code?: unknown }).code
        if (code === 'stream_consumer_too_slow_error') {
          socket.emit('stream_error', { reqUUID, code, message: (error as Error).message })
          socket.disconnect(true)
          return
        }
        const timedOut = error instanceof Error && /timed out|timeout/i.test(error.message)
        if (!timedOut) context.onUnexpected(error)
        socket.emit('message', {
          reqUUID,
          type,
          mode: 'history',
          messages: [],
          error: timedOut
            ? `history batch not acknowledged within ${context.limits.ackTimeoutMs} ms: the request stopped`
            : 'the request failed on the server',
        })
      },
    })
    running.set(reqUUID, { request, stream })
    return plan.head
  }

  const onRequest =
    (parse: (body: unknown) => StreamRequest) =>
    async (...args: unknown[]) => {
      const ack = ackOf(args)
      const answer = (value: unknown) => {
        try {
          ack?.(value)
        } catch {
          // A client's ack that cannot be sent (gone) is not the server's failure.
        }
      }
      try {
        if (running.size >= context.limits.maxRequests)
          throw new StreamRequestError(`at most ${context.limits.maxRequests} requests per connection`)
        const request = parse(args.length > 1 || !ack ? args[0] : undefined)
        const reqUUID = randomUUID()
        const head = await start(request, reqUUID)
        answer({ status: 'OK', reqUUID, currentBlockNum: head })
      } catch (error) {
        if (!(error instanceof StreamRequestError)) context.onUnexpected(error)
        answer({ status: 'ERROR', message: error instanceof StreamRequestError ? error.message : 'request failed' })
      }
    }

  socket.on('action_stream_request', onRequest(parseActionRequest))
  socket.on('delta_stream_request', onRequest(parseDeltaRequest))
  socket.on('cancel_stream_request', (...args: unknown[]) => {
    const ack = ackOf(args)
    const body = args[0]
    const id = typeof body === 'object' && body !== null ? (body as { reqUUID?: unknown }).reqUUID : undefined
    const entry = typeof id === 'string' ? running.get(id) : undefined
    entry?.stream.cancel()
    try {
      ack?.({ status: entry ? 'OK' : 'NOT_FOUND' })
    } catch {
      // gone
    }
  })
  socket.on('reconnect', async (...args: unknown[]) => {
    const ack = ackOf(args)
    const body = args[0]
    const lastId = typeof body === 'object' && body !== null ? (body as { last_id?: unknown }).last_id : undefined
    const entries = typeof lastId === 'string' && lastId.length <= 64 ? context.replays.take(lastId) : undefined
    if (!entries) {
      socket.emit('resend_requests')
      return ack?.({ status: 'NOT_FOUND' })
    }
    const reqUUIDs: string[] = []
    for (const { request, lastBlock } of entries) {
      if (running.size >= context.limits.maxRequests) break
      const resumed: StreamRequest = lastBlock > 0 ? { ...request, startFrom: { block: lastBlock + 1 } } : request
      const reqUUID = randomUUID()
      try {
        await start(resumed, reqUUID)
        reqUUIDs.push(reqUUID)
      } catch (error) {
        if (!(error instanceof StreamRequestError)) context.onUnexpected(error)
      }
    }
    ack?.({ status: 'OK', reqUUIDs })
  })
  socket.on('disconnect', () => {
    closed = true
    const replayable: ReplayEntry[] = []
    for (const { request, stream } of running.values()) {
      if (request.replayOnReconnect) replayable.push({ request, lastBlock: stream.lastBlock })
      stream.cancel()
    }
    running.clear()
    if (replayable.length) context.replays.put(socket.id, replayable)
  })
}
