import type { ExecutionResult } from 'graphql'
import type { WebSocket } from 'ws'
import { AntlerError, newTraceId } from '../../antelope/index.ts'
import { refusedKeyId } from '../../auth/index.ts'
import {
  answerDocuments,
  countRequest,
  GRAPHQL_MAX_BUFFERED_BYTES,
  GraphqlRequestError,
  refusalOutcome,
  usageOutcome,
  type GraphqlContext,
  type GraphqlRuntime,
  type GraphqlWireError,
  type PayloadEncoding,
  type PreparedOperation,
} from '../../graphql/index.ts'
import { UnexpectedError, WsTooMuchStreamError } from '../errors.ts'
import { wireError, type WireError } from '../wire-error.ts'

/** How long one frame may wait to be written to the client before the connection is ended (dfuse: 10 s). */
export const WRITE_TIMEOUT_MS = 10_000

/** Operations one socket may run at once (dfuse's streams per connection were 12). */
export const MAX_OPERATIONS_PER_SOCKET = 32

/** How a subprotocol frames an operation's messages (the protocol modules: graphql-ws-legacy.ts, -modern.ts). */
export interface OperationFrames {
  /** The text of a result frame of operation `id` up to its payload (the frame closes with `}` after it). */
  resultPrefix(id: string): string
  /** An operation's error frame (`id` null: a frame that named no operation). */
  error(id: string | null, errors: readonly unknown[]): object
  complete(id: string): object
  /** How a refused token reads in an operation's error frame. */
  refusal(error: unknown): unknown
}

/**
 * The payload of a result frame, the same text in both subprotocols: `{data}`, or `{data, errors}` with the errors in
 * wire form. One encoding for every socket of the app: a live event's payload is executed and serialized once per
 * query shape (the runtime's memo), and only a frame's envelope (`id`) is written per subscriber.
 */
export const socketEncoding = (runtime: GraphqlRuntime): PayloadEncoding<string> => ({
  name: 'websocket',
  encode: (result: ExecutionResult) =>
    JSON.stringify(
      result.errors?.length
        ? { data: result.data ?? null, errors: result.errors.map((e) => runtime.wireError(e)) }
        : { data: result.data },
    ),
})

/** A refused token (or a failed admission) as the standard error object; an unexpected failure logged once. */
export function standardRefusal(runtime: GraphqlRuntime, error: unknown): WireError {
  const traceId = newTraceId()
  if (error instanceof AntlerError) return wireError(error, traceId)
  runtime.onUnexpected(error, traceId)
  return wireError(UnexpectedError(), traceId)
}

/** One running operation of a socket. */
interface Running {
  stopped: boolean
  /** Replaced by a `start` of the same id: its closing frame is not sent. */
  silent: boolean
  events?: AsyncIterator<unknown>
  readonly ended: Promise<void>
}

/**
 * The operations of one `/graphql` WebSocket, whatever its subprotocol: each started one admitted (it counts against
 * the key's limits and in its usage), prepared by the runtime, bounded in number (MAX_OPERATIONS_PER_SOCKET), then run
 * to its end: a query answers one result frame, a subscription one per event (the shared payload of its shape). Every
 * frame waits for the previous one's write; a frame not written within WRITE_TIMEOUT_MS ends the connection, and a
 * subscription above the backlog bound ends as too slow (`ws_consumer_too_slow_error`, then the connection).
 */
export class SocketOperations {
  private readonly running = new Map<string, Running>()
  private readonly context: GraphqlContext

  constructor(
    private readonly socket: WebSocket,
    private readonly runtime: GraphqlRuntime,
    private readonly frames: OperationFrames,
    private readonly encoding: PayloadEncoding<string>,
    private readonly caller: { readonly ip: string; readonly origin?: string },
  ) {
    this.context = runtime.context({
      backlog: {
        bufferedBytes: () => socket.bufferedAmount,
        maxBufferedBytes: GRAPHQL_MAX_BUFFERED_BYTES,
        // The error frame could not get through a socket that does not read: the close tells the client.
        abort: () => socket.terminate(),
      },
    })
  }

  /** Writes a frame; resolves once written (or failed). The connection ends when it is not written in time. */
  write(frame: object | string): Promise<void> {
    const { socket } = this
    return new Promise((resolve) => {
      if (socket.readyState !== socket.OPEN) return resolve()
      const stalled = setTimeout(() => socket.terminate(), WRITE_TIMEOUT_MS)
      stalled.unref()
      socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame), () => {
        clearTimeout(stalled)
        resolve()
      })
    })
  }

  /** Whether operation `id` is running. */
  has(id: string): boolean {
    return this.running.has(id)
  }

  /**
   * Starts operation `id` with the token of the connection: refusals (token, request, too many operations) answer an
   * error frame for its id. Resolves once the operation runs (not when it ends), so frames stay in arrival order.
   */
  async start(id: string, payload: unknown, token: string | undefined): Promise<void> {
    const { runtime } = this
    let keyId: string | undefined
    try {
      keyId = (await runtime.admit(token, this.caller)).keyId
    } catch (error) {
      const refusal = this.frames.refusal(error)
      countRequest(runtime.usage, refusedKeyId(error), refusalOutcome(error), 0)
      return this.write(this.frames.error(id, [refusal]))
    }
    const refuse = (errors: readonly GraphqlWireError[]) => {
      countRequest(runtime.usage, keyId, usageOutcome(errors), 0)
      return this.write(this.frames.error(id, errors))
    }
    let operation: PreparedOperation
    try {
      operation = runtime.prepare(payload, ['query', 'subscription'])
    } catch (error) {
      if (!(error instanceof GraphqlRequestError)) throw error
      return refuse(error.errors.map((e) => runtime.wireError(e)))
    }
    if (this.running.size >= MAX_OPERATIONS_PER_SOCKET && !this.running.has(id))
      return refuse([
        runtime.wireError(WsTooMuchStreamError({ actual: this.running.size, maximum: MAX_OPERATIONS_PER_SOCKET })),
      ])
    let ended = () => {}
    const entry: Running = { stopped: false, silent: false, ended: new Promise((resolve) => (ended = resolve)) }
    this.running.set(id, entry)
    void this.run(id, operation, entry, keyId).finally(ended)
  }

  /** Stops operation `id` (its closing frame is still sent). */
  stop(id: string): void {
    const entry = this.running.get(id)
    if (!entry) return
    entry.stopped = true
    Promise.resolve(entry.events?.return?.()).catch((error: unknown) => this.runtime.onUnexpected(error, newTraceId()))
  }

  /** Stops operation `id` and waits until it has ended, without its closing frame (a `start` reusing its id). */
  async replace(id: string): Promise<void> {
    const entry = this.running.get(id)
    if (!entry) return
    entry.silent = true
    this.stop(id)
    await entry.ended
  }

  /** Stops every operation (the socket closed). */
  stopAll(): void {
    for (const id of [...this.running.keys()]) this.stop(id)
  }

  /** Runs a started operation to its end, then its closing frame (`complete`, or `error` when it failed). */
  private async run(id: string, operation: PreparedOperation, entry: Running, keyId: string | undefined) {
    const { runtime } = this
    let closing: object
    try {
      if (operation.operation.operation === 'subscription') closing = await this.follow(id, operation, entry, keyId)
      else {
        const result = await runtime.execute(operation, this.context)
        const errors = (result.errors ?? []).map((e) => runtime.wireError(e))
        countRequest(runtime.usage, keyId, usageOutcome(errors), answerDocuments(result))
        const payload = errors.length ? { data: result.data ?? null, errors } : { data: result.data }
        if (!entry.stopped) await this.write(`${this.frames.resultPrefix(id)}${JSON.stringify(payload)}}`)
        closing = this.frames.complete(id)
      }
    } catch (error) {
      closing = this.frames.error(id, [runtime.wireError(error)])
    }
    if (this.running.get(id) === entry) this.running.delete(id)
    if (!entry.silent) await this.write(closing)
  }

  /** A subscription's events, each as its shape's shared payload, until it ends or is stopped: its closing frame. */
  private async follow(id: string, operation: PreparedOperation, entry: Running, keyId: string | undefined) {
    const { runtime } = this
    const started = await runtime.subscribe(operation, this.context, this.encoding)
    if (!('events' in started)) {
      const errors = (started.errors ?? []).map((e) => runtime.wireError(e))
      countRequest(runtime.usage, keyId, usageOutcome(errors), 0)
      return this.frames.error(id, errors)
    }
    countRequest(runtime.usage, keyId, 'ok', 0)
    const { events } = started
    entry.events = events
    if (entry.stopped || this.socket.readyState !== this.socket.OPEN) await events.return?.()
    const prefix = this.frames.resultPrefix(id)
    for (;;) {
      if (entry.stopped) break
      const next = await events.next()
      if (next.done || entry.stopped) break
      const text = await started.payload(next.value)
      if (entry.stopped) break
      await this.write(`${prefix}${text}}`)
      if (keyId !== undefined) runtime.usage.documents(keyId, 1)
    }
    return this.frames.complete(id)
  }
}
