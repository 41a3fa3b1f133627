import type { BlockDecoderSource, DecoderSource } from '../../lifecycle/index.ts'
import type { LiveHub } from '../../live/index.ts'
import type { Store } from '../../store/index.ts'
import type { HyperionActionDocument } from '../action-documents.ts'
import type { HyperionDeltaDocument } from '../delta-documents.ts'

/** What a stream reads: positions and steps, the search postings and executions (actions), row changes (deltas). */
export type StreamStore = Pick<
  Store,
  | 'position'
  | 'blockByNum'
  | 'blockByTime'
  | 'stepsOfBlock'
  | 'searchActions'
  | 'firstSeqFromBlock'
  | 'executionsOfActions'
  | 'blocksByNums'
  | 'transactionHistories'
  | 'rowChangesOfBlocks'
  | 'chainId'
>

export interface StreamDeps {
  readonly store: StreamStore
  readonly live: Pick<LiveHub, 'subscribe'>
  /** Decoders of one block's ABIs (live blocks, delta history). */
  readonly decoders: DecoderSource
  /** Decoders of many blocks' ABIs in one read (a history batch's executions). */
  readonly blockDecoders: BlockDecoderSource
}

export type StreamDocument = HyperionActionDocument | HyperionDeltaDocument
export type TraceType = 'action_trace' | 'delta_trace'

/** A history batch (`message` event, acknowledged by the client before the next one is sent). */
export interface HistoryBatch {
  readonly reqUUID: string
  readonly type: TraceType
  readonly mode: 'history'
  readonly messages: readonly StreamDocument[]
  /** Documents of this stretch that answered the request but not its `filters`. */
  readonly filtered: number
}

/** Hyperion's documented fork notice, sent when blocks a request has been sent are undone. */
export interface ForkEvent {
  readonly chain_id: string
  /** The first and last block numbers undone. */
  readonly starting_block: number
  readonly ending_block: number
  /** The id of the block that replaced `starting_block` on the new chain. */
  readonly new_id: string
  /** The undone blocks (Antler: `{block_num, block_id}` each). */
  readonly forkedBlocks: readonly { readonly block_num: number; readonly block_id: string }[]
  /** The request it concerns (Antler's addition: one event per request). */
  readonly reqUUID: string
}

/** Where a request's output goes (the socket.io session implements it). */
export interface StreamSink {
  /** False once the connection is gone: the request stops. */
  readonly open: boolean
  /** Sends a history batch and resolves when the client acknowledges it (rejects when it does not in time). */
  historyBatch(batch: HistoryBatch): Promise<void>
  /** A plain `message` event (history_end, a history error). */
  message(payload: object): void
  /** A live `message`: `{type, mode: "live", targets: [reqUUID], message: <JSON bytes of the document>}`. */
  live(type: TraceType, reqUUID: string, doc: StreamDocument): void
  fork(event: ForkEvent): void
  /** Resolves once the transport has flushed what it holds (so a client that reads nothing stops its live feed). */
  drain(): Promise<void>
}
