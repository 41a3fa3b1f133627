import WebSocket from 'ws'
import { ABI } from '@wharfkit/antelope'
import { AntlerError, type BlockRef } from '../antelope/index.ts'
import { decodeResult, encodeRequest, type BlocksResult, type StatusResult } from './codec.ts'
import { ShipProtocolError, ShipReaderClosedError, ShipUnavailableError } from './errors.ts'

export { ShipProtocolError, ShipUnavailableError } from './errors.ts'

/** How a reader connects, what it asks for and how it recovers. */
export interface ShipReaderConfig {
  readonly url: string
  /** First block wanted on the first connection. */
  readonly startBlockNum: number
  /** Exclusive end; default: stream forever. */
  readonly endBlockNum?: number
  readonly irreversibleOnly?: boolean
  readonly fetchBlock?: boolean
  readonly fetchTraces?: boolean
  readonly fetchDeltas?: boolean
  /**
   * Spring: send `get_status_request_v1`/`get_blocks_request_v1` asking for `finality_data` (a Leap node refuses v1).
   */
  readonly fetchFinalityData?: boolean
  /** Credits granted at once; consumed results are acked, so at most this many wait in memory. */
  readonly maxMessagesInFlight?: number
  /** Largest accepted message, bytes (nodeos results can be many MB). */
  readonly maxPayload?: number
  readonly reconnect?: { readonly minDelayMs?: number; readonly maxDelayMs?: number; readonly maxAttempts?: number }
  /**
   * What the consumer holds above LIB, sent as `have_positions` on every (re)connect so the server
   * rewinds to a fork point it missed while disconnected.
   */
  readonly havePositions?: () => readonly BlockRef[]
  /** Where to resume after a reconnect; default: one past the last block yielded. */
  readonly resumeFrom?: () => number
  readonly onEvent?: (event: ShipReaderEvent) => void
  /**
   * Called on every connection once the ABI (parsed JSON) and status are in, before the blocks
   * request is sent (`resumeFrom` is read after it returns): a throw stops the reader with that
   * error, so a consumer can refuse a node before it receives a single block.
   */
  readonly onHandshake?: (handshake: {
    readonly abi: unknown
    readonly status: StatusResult
    readonly startBlockNum: number
  }) => void
}

export type ShipReaderEvent =
  | { readonly type: 'connected'; readonly url: string; readonly status: StatusResult }
  | { readonly type: 'disconnected'; readonly reason: string }
  | { readonly type: 'reconnecting'; readonly attempt: number; readonly delayMs: number; readonly reason?: string }

/** A SHiP session that survives disconnects; blocks are pulled, and pulled blocks are acked in groups. */
export interface ShipReader {
  /** Resolves with the first connection's status (chain id, head, LIB, retained range). */
  readonly ready: Promise<StatusResult>
  /** The protocol ABI text the server sent. */
  abiText(): string | undefined
  /** Block results in order; ends at `endBlockNum` or `close()`, throws on protocol errors. */
  blocks(): AsyncIterableIterator<BlocksResult>
  close(): Promise<void>
}

type Waiter = { resolve: () => void }

export function createShipReader(config: ShipReaderConfig): ShipReader {
  const credits = config.maxMessagesInFlight ?? 10
  const minDelay = config.reconnect?.minDelayMs ?? 250
  const maxDelay = config.reconnect?.maxDelayMs ?? 10_000
  const maxAttempts = config.reconnect?.maxAttempts ?? Infinity
  const endBlockNum = config.endBlockNum ?? 0xffffffff
  // Consumed results are acked a quarter of the credits at a time (an ack frame per block cost 3%
  // of catch-up); the server still holds at least three quarters of its credits, so it never waits.
  const ackEvery = Math.max(1, Math.floor(credits / 4))

  const queue: BlocksResult[] = []
  let waiter: Waiter | undefined
  let failure: AntlerError | undefined
  let closed = false
  let finished = false
  let socket: WebSocket | undefined
  let abiText: string | undefined
  let abiJson: unknown
  /** Whether the current connection delivered a blocks result (only then does the back-off start over). */
  let delivered = false
  let lastYielded: number | undefined
  /** Results delivered on this connection and not acked yet; `consumed` of them were handled. */
  let unacked = 0
  let consumed = 0
  let resolveReady!: (s: StatusResult) => void
  let rejectReady!: (e: unknown) => void
  const ready = new Promise<StatusResult>((res, rej) => {
    resolveReady = res
    rejectReady = rej
  })
  ready.catch(() => undefined)

  const wake = () => {
    const w = waiter
    waiter = undefined
    w?.resolve()
  }

  const fail = (error: AntlerError) => {
    failure ??= error
    rejectReady(error)
    socket?.terminate()
    wake()
  }

  const send = (bytes: Uint8Array) => {
    if (socket?.readyState === WebSocket.OPEN) socket.send(bytes)
  }

  const nextStart = () => config.resumeFrom?.() ?? (lastYielded === undefined ? config.startBlockNum : lastYielded + 1)

  function connectOnce(): Promise<'closed' | 'ended'> {
    return new Promise((resolve) => {
      let phase: 'abi' | 'status' | 'blocks' = 'abi'
      const ws = new WebSocket(config.url, {
        perMessageDeflate: false,
        maxPayload: config.maxPayload ?? 256 * 1024 * 1024,
      })
      socket = ws
      ws.binaryType = 'nodebuffer'
      let settled = false
      const settle = (how: 'closed' | 'ended') => {
        if (!settled) {
          settled = true
          resolve(how)
        }
      }
      ws.on('error', (err) => {
        if (phase === 'abi') config.onEvent?.({ type: 'disconnected', reason: err.message })
      })
      ws.on('close', (_code, reason) => {
        if (phase !== 'abi')
          config.onEvent?.({ type: 'disconnected', reason: reason.toString() || 'connection closed' })
        settle('closed')
      })
      ws.on('message', (data: Buffer, isBinary: boolean) => {
        if (failure || closed) return
        if (phase === 'abi') {
          if (isBinary) return fail(ShipProtocolError('first message must be the ABI as text'))
          try {
            abiText = data.toString('utf8')
            abiJson = JSON.parse(abiText)
            ABI.from(abiJson as Parameters<typeof ABI.from>[0])
          } catch (error) {
            return fail(ShipProtocolError('the protocol ABI does not parse', error))
          }
          phase = 'status'
          send(encodeRequest({ kind: 'status', v1: config.fetchFinalityData ?? false }))
          return
        }
        if (!isBinary) return fail(ShipProtocolError('unexpected text message after the ABI'))
        let message
        try {
          message = decodeResult(new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
        } catch (error) {
          return fail(ShipProtocolError(error instanceof Error ? error.message : String(error), error))
        }
        if (message.kind === 'status') {
          if (phase !== 'status') return
          phase = 'blocks'
          resolveReady(message.status)
          config.onEvent?.({ type: 'connected', url: config.url, status: message.status })
          try {
            config.onHandshake?.({ abi: abiJson, status: message.status, startBlockNum: nextStart() })
          } catch (error) {
            return fail(
              error instanceof AntlerError
                ? error
                : ShipProtocolError(error instanceof Error ? error.message : String(error), error),
            )
          }
          const start = nextStart()
          if (start >= endBlockNum) {
            finished = true
            wake()
            ws.close()
            return settle('ended')
          }
          unacked = 0
          consumed = 0
          send(
            encodeRequest({
              kind: 'blocks',
              request: {
                v1: config.fetchFinalityData ?? false,
                startBlockNum: start,
                endBlockNum,
                maxMessagesInFlight: credits,
                havePositions: (config.havePositions?.() ?? []).filter((p) => p.blockNum < start),
                irreversibleOnly: config.irreversibleOnly ?? false,
                fetchBlock: config.fetchBlock ?? true,
                fetchTraces: config.fetchTraces ?? true,
                fetchDeltas: config.fetchDeltas ?? true,
                fetchFinalityData: config.fetchFinalityData ?? false,
              },
            }),
          )
          return
        }
        if (phase !== 'blocks') return fail(ShipProtocolError('blocks result before the blocks request'))
        queue.push(message.result)
        delivered = true
        unacked++
        wake()
      })
    })
  }

  async function run(): Promise<void> {
    let attempt = 0
    while (!closed && !failure && !finished) {
      delivered = false
      const outcome = await connectOnce()
      if (closed || failure || finished || outcome === 'ended') break
      // A connection that delivered a result resets the back-off; one that only handshook (or
      // never opened) doubles the delay, up to maxDelayMs.
      if (delivered) attempt = 0
      attempt++
      if (attempt > maxAttempts) return fail(ShipUnavailableError(config.url, maxAttempts))
      const delayMs = Math.min(maxDelay, minDelay * 2 ** Math.min(attempt - 1, 16))
      config.onEvent?.({ type: 'reconnecting', attempt, delayMs })
      // Unconsumed results of the old session are dropped: the new request resumes after the last yielded block.
      queue.length = 0
      await new Promise((r) => setTimeout(r, delayMs))
    }
    wake()
  }
  void run()

  async function* iterate(): AsyncIterableIterator<BlocksResult> {
    for (;;) {
      if (failure) throw failure
      const next = queue.shift()
      if (next) {
        if (next.thisBlock) lastYielded = next.thisBlock.blockNum
        yield next
        // The consumer asked for more: the previous block is handled, its credit can go back.
        if (consumed < unacked && ++consumed >= ackEvery) {
          send(encodeRequest({ kind: 'ack', numMessages: consumed }))
          unacked -= consumed
          consumed = 0
        }
        if (lastYielded !== undefined && lastYielded + 1 >= endBlockNum) return
        continue
      }
      if (closed || finished) return
      await new Promise<void>((resolve) => (waiter = { resolve }))
    }
  }

  return {
    ready,
    abiText: () => abiText,
    blocks: iterate,
    async close() {
      closed = true
      rejectReady(ShipReaderClosedError())
      wake()
      const ws = socket
      if (ws && ws.readyState !== WebSocket.CLOSED) {
        await new Promise<void>((resolve) => {
          ws.once('close', () => resolve())
          ws.close()
          setTimeout(() => {
            ws.terminate()
            resolve()
          }, 2000).unref()
        })
      }
    },
  }
}
