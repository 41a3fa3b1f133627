import type { BlockDecoderSource, DecoderSource } from '../lifecycle/index.ts'
import type { LiveHub } from '../live/index.ts'
import type { CursorCodec, SearchService } from '../search/index.ts'
import type { Store } from '../store/index.ts'
import type { LiveMatcher } from './live-match.ts'

/** What the resolvers read of the store directly (the rest goes through the search service). */
export type GraphqlStore = Pick<
  Store,
  | 'position'
  | 'blockByNum'
  | 'blockById'
  | 'blockByTime'
  | 'transactionHistories'
  | 'rowChangesOfBlocks'
  | 'actionReceiversOfBlocks'
  | 'stepsOfBlock'
  | 'libBeforeStep'
  | 'stepPayloads'
  | 'searchActions'
  | 'actionsBySeq'
  | 'executionsOfActions'
  | 'blocksByNums'
  | 'abi'
  | 'abisAt'
>

/** The services every operation shares. */
export interface GraphqlServices {
  readonly search: SearchService
  readonly store: GraphqlStore
  readonly live: Pick<LiveHub, 'subscribe'>
  readonly decoders: DecoderSource
  /** Decoders of many blocks in one batch read (a search page's results). */
  readonly blockDecoders: BlockDecoderSource
  readonly cursors: CursorCodec
  readonly matcher: LiveMatcher
  /**
   * A live step's results per query shape, built once for every subscription of the runtime (forward-stream.ts):
   * subscribers of one shape receive the same result objects, which the runtime executes and serializes once.
   */
  readonly stepResults: <T>(payload: object, key: string, build: () => Promise<T>) => Promise<T>
}

/**
 * Bytes a client (a GraphQL WebSocket, a gRPC call) may hold unsent before its subscriptions end as too slow
 * (`ws_consumer_too_slow_error`), as `/v1/stream`.
 */
export const GRAPHQL_MAX_BUFFERED_BYTES = 16 * 1024 * 1024

/** How a transport lets a subscription see its own backlog (bounded send buffers). */
export interface TransportBacklog {
  /** Bytes written and not yet sent to the client. */
  bufferedBytes(): number
  /** Above this the client counts as too slow: its subscriptions end with `ws_consumer_too_slow_error`. */
  readonly maxBufferedBytes: number
  /**
   * Ends the client's connection when one of its subscriptions is dropped as too slow: a client that does not read
   * would never see the error (its transport waits on it before asking the stream for more).
   */
  abort?(error: unknown): void
}

/** Logs an error no one expected (a bug), once, under the trace id the client was sent. */
export type OnUnexpected = (error: unknown, traceId: string) => void

/** The context of one GraphQL operation (any transport). */
export interface GraphqlContext {
  readonly services: GraphqlServices
  readonly backlog?: TransportBacklog
  /** Where errors no one expected are logged (a subscription's stream failing, a resolver crashing). */
  readonly onUnexpected?: OnUnexpected
  /** The trace id this operation's errors carry (GraphQL over HTTP: the response's `X-Trace-Id`); else one each. */
  readonly traceId?: string
}

/** How a key's use is counted (the usage meter's shape: portal usage and `/metrics`). */
export type GraphqlUsageOutcome = 'ok' | 'clientErrors' | 'authFailures' | 'rateLimited'

/** The usage meter as the GraphQL transports report to it. */
export interface GraphqlUsage {
  /** One request (an HTTP request, a WebSocket operation, a gRPC call) by its outcome, with the documents it served. */
  request(keyId: string, outcome: GraphqlUsageOutcome, documents: number): void
  /** Documents an open subscription sent later (each data message is one). */
  documents(keyId: string, count: number): void
}
