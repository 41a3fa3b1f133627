import type { WebSocket } from 'ws'
import { AntlerError, formatRfc3339, newTraceId } from '../../antelope/index.ts'
import {
  UnexpectedError,
  WsConsumerTooSlowError,
  WsStreamAlreadyExistError,
  WsStreamNotFoundError,
  WsTooMuchStreamError,
} from '../errors.ts'
import type { UsageOutcome } from '../../accounts/index.ts'
import { outcomeOf } from '../plugins/key-usage.ts'
import { wireError } from '../wire-error.ts'
import { frameReqId, parseFrame, type StreamRequest } from './envelope.ts'

/** A running stream of one request: closing it stops everything it sends. */
export interface Listener {
  close(): void
}

/** Where a request's handler sends: messages of its stream, and errors (which do not end it unless it says so). */
export interface StreamOutput {
  send(type: string, data: unknown): void
  /**
   * The same as `send` with `data` already serialized (JSON text): a message shared by every subscriber of one shape is
   * serialized once and only the envelope (`type`, `req_id`) is written per subscriber.
   */
  sendRaw(type: string, dataJson: string): void
  error(error: unknown): void
  /** True once the stream was unlistened or the connection closed: a handler stops producing. */
  readonly closed: boolean
  /**
   * Resolves once the socket's send buffer is back under a quarter of its bound (or the stream closed): a replay awaits
   * it between batches.
   */
  drain(): Promise<void>
}

/** Serves one request: sends what `fetch` asks and returns the listener when it keeps streaming. */
export type StreamHandler = (request: StreamRequest, out: StreamOutput) => Promise<Listener | undefined>

export interface ConnectionLimits {
  /** Streams running at once on one connection (dfuse's default 12). */
  readonly maxListeners: number
  /** Bytes waiting in the socket's send buffer before the client counts as too slow and is closed. */
  readonly maxBufferedBytes: number
  /** Server `ping` period (dfuse: 10 s). */
  readonly pingIntervalMs: number
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  maxListeners: 12,
  maxBufferedBytes: 16 * 1024 * 1024,
  pingIntervalMs: 10_000,
}

/** Where a connection reports: its key's usage and the errors no one expected. */
export interface ConnectionReports {
  /** Counts the connection's stream requests and, as documents, the messages its streams send (its key's usage). */
  readonly usage?: {
    request(outcome: UsageOutcome): void
    documents(count: number): void
  }
  /** Logs an error no one expected under the trace id the client got. */
  readonly onUnexpected?: (error: unknown, traceId: string) => void
}

/** How often a connection adds the messages its streams sent to its key's usage (a map update per message costs). */
const USAGE_FLUSH_MS = 1_000

/** How often a waiting replay looks at the send buffer (ws has no drain event on the WebSocket itself). */
const DRAIN_POLL_MS = 20

/** Close code for a client that fell too far behind: not 1000/1009, so `@dfuse/client` reconnects. */
const CLOSE_TOO_SLOW = 1008

/**
 * One `/v1/stream` connection: requests multiplexed by `req_id`, each served by the handler of its
 * type; replies carry the request's `req_id`. Frames are handled in arrival order. Every send
 * checks the socket's buffer: a client that does not read is closed instead of growing memory.
 */
export function serveStreamConnection(
  socket: WebSocket,
  handlers: Readonly<Record<Exclude<StreamRequest['type'], 'unlisten'>, StreamHandler>>,
  limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS,
  reports: ConnectionReports = {},
): void {
  const usage = reports.usage
  /** Messages sent by this connection's streams and not yet added to its key's usage. */
  let unreported = 0
  const reportDocuments = () => {
    if (unreported > 0) usage?.documents(unreported)
    unreported = 0
  }
  const usageTimer = usage ? setInterval(reportDocuments, USAGE_FLUSH_MS) : undefined
  usageTimer?.unref()
  const listeners = new Map<string, { listener?: Listener; output: { closed: boolean } }>()
  let open = true

  // Sends of one turn (a step's messages to every stream of the socket) leave in one write: the TCP socket is corked
  // at the first and uncorked once the turn's promise callbacks have run.
  const tcp = (socket as unknown as { _socket?: { cork(): void; uncork(): void } })._socket
  let corked = false
  const batch = () => {
    if (corked || !tcp) return
    corked = true
    tcp.cork()
    setImmediate(() => {
      corked = false
      tcp.uncork()
    })
  }
  const write = (message: Record<string, unknown> | string) => {
    if (!open || socket.readyState !== socket.OPEN) return
    if (socket.bufferedAmount > limits.maxBufferedBytes) {
      const error = WsConsumerTooSlowError({
        bufferedBytes: socket.bufferedAmount,
        limitBytes: limits.maxBufferedBytes,
      })
      // The error goes out ahead of the close; the buffer is already over its bound once.
      socket.send(JSON.stringify({ type: 'error', data: wireError(error, newTraceId()) }))
      shutdown()
      socket.close(CLOSE_TOO_SLOW, 'consumer too slow')
      return
    }
    batch()
    socket.send(typeof message === 'string' ? message : JSON.stringify(message))
  }
  const errorMessage = (error: unknown, reqId: string | undefined) => {
    const known = error instanceof AntlerError ? error : UnexpectedError()
    const traceId = newTraceId()
    if (known !== error) reports.onUnexpected?.(error, traceId)
    write({ type: 'error', ...(reqId ? { req_id: reqId } : {}), data: wireError(known, traceId) })
  }
  const shutdown = () => {
    if (!open) return
    open = false
    clearInterval(ping)
    clearInterval(usageTimer)
    reportDocuments()
    for (const entry of listeners.values()) {
      entry.output.closed = true
      entry.listener?.close()
    }
    listeners.clear()
  }

  const unlisten = (request: StreamRequest) => {
    const target = request.data.req_id
    if (typeof target !== 'string') throw WsStreamNotFoundError({ reqId: String(target ?? '') })
    const entry = listeners.get(target)
    if (!entry) throw WsStreamNotFoundError({ reqId: target })
    listeners.delete(target)
    entry.output.closed = true
    entry.listener?.close()
    write({ type: 'unlistened', ...(request.reqId ? { req_id: request.reqId } : {}), data: { success: true } })
  }

  const start = async (request: StreamRequest) => {
    if (listeners.has(request.reqId)) throw WsStreamAlreadyExistError({ reqId: request.reqId })
    if (listeners.size >= limits.maxListeners)
      throw WsTooMuchStreamError({ actual: listeners.size, maximum: limits.maxListeners })
    const state = { closed: false }
    const entry: { listener?: Listener; output: { closed: boolean } } = { output: state }
    listeners.set(request.reqId, entry)
    const reqId = request.reqId
    // `{"type":…,"req_id":…,"data":` as JSON.stringify writes the envelope of `send`.
    const envelope = (type: string) =>
      `{"type":${JSON.stringify(type)}${reqId ? `,"req_id":${JSON.stringify(reqId)}` : ''},"data":`
    const output: StreamOutput = {
      send: (type, data) => {
        if (state.closed) return
        unreported++
        write({ type, ...(reqId ? { req_id: reqId } : {}), data })
      },
      sendRaw: (type, dataJson) => {
        if (state.closed) return
        unreported++
        write(`${envelope(type)}${dataJson}}`)
      },
      error: (error) => {
        if (!state.closed) errorMessage(error, reqId)
      },
      get closed() {
        return state.closed || !open
      },
      drain: async () => {
        while (!state.closed && open && socket.bufferedAmount > limits.maxBufferedBytes / 4)
          await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS))
      },
    }
    try {
      const listener = await handlers[request.type as Exclude<StreamRequest['type'], 'unlisten'>](request, output)
      if (state.closed || !open) listener?.close()
      else if (listener) entry.listener = listener
      else listeners.delete(reqId)
    } catch (error) {
      if (listeners.get(reqId) === entry) listeners.delete(reqId)
      throw error
    }
  }

  let queue: Promise<void> = Promise.resolve()
  socket.on('message', (data: Buffer, isBinary: boolean) => {
    queue = queue.then(async () => {
      let reqId: string | undefined
      try {
        try {
          reqId = frameReqId(JSON.parse(isBinary ? 'null' : data.toString('utf8')))
        } catch {
          reqId = undefined
        }
        const frame = parseFrame(data, isBinary)
        if (frame.pong) return
        if (frame.request.type === 'unlisten') unlisten(frame.request)
        else {
          await start(frame.request)
          usage?.request('ok')
        }
      } catch (error) {
        // A refused request counts as a REST answer of its status would (a server failure is not counted).
        const outcome = error instanceof AntlerError ? outcomeOf(error.status, error.code) : undefined
        if (outcome) usage?.request(outcome)
        errorMessage(error, reqId)
      }
    })
  })
  const ping = setInterval(() => write({ type: 'ping', data: formatRfc3339(Date.now()) }), limits.pingIntervalMs)
  ping.unref()
  socket.on('close', shutdown)
  socket.on('error', shutdown)
}
