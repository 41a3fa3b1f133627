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
}

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

/** The context of one GraphQL operation (any transport). */
export interface GraphqlContext {
  readonly services: GraphqlServices
  readonly backlog?: TransportBacklog
}
