import type { Subscription } from '../../live/index.ts'
import { actionHistory, deltaHistory, type HistoryChunk } from './history.ts'
import { followLive, type BlockDocumentMemo } from './live.ts'
import type { StreamPlan } from './plan.ts'
import type { StreamRequest } from './request.ts'
import type { StreamDeps, StreamSink, TraceType } from './types.ts'

/** A running request: where it got to (for a replay after reconnecting) and how to stop it. */
export interface RunningStream {
  /** The last block whose documents were all handed out (0 before any). */
  readonly lastBlock: number
  cancel(): void
}

/**
 * Runs one accepted request: its history in acknowledged batches (the next read only after the client acks the last
 * batch), then `history_end`, then the live feed until cancelled, `read_until` passed or the connection gone.
 * `onEnd` is called once: with no error when the request finished (history only) or was cancelled, with the error
 * when it failed (an unacknowledged batch, a slow live client, a failed read).
 */
export function runStream(args: {
  deps: StreamDeps
  memo: BlockDocumentMemo
  chainId: string
  reqUUID: string
  request: StreamRequest
  plan: StreamPlan
  sink: StreamSink
  onEnd: (error?: unknown) => void
}): RunningStream {
  const { deps, request, plan, sink, reqUUID } = args
  const type: TraceType = request.kind === 'action' ? 'action_trace' : 'delta_trace'
  let cancelled = false
  let ended = false
  let lastBlock = 0
  let subscription: Subscription | undefined
  const end = (error?: unknown) => {
    if (ended) return
    ended = true
    subscription?.close()
    args.onEnd(error)
  }
  const stopped = () => cancelled || ended || !sink.open

  const replayHistory = async () => {
    if (!plan.history) return
    const chunks: AsyncGenerator<HistoryChunk> =
      request.kind === 'action' ? actionHistory(deps, request, plan.history) : deltaHistory(deps, request, plan.history)
    for await (const chunk of chunks) {
      if (stopped()) return
      await sink.historyBatch({ reqUUID, type, mode: 'history', messages: chunk.docs, filtered: chunk.filtered })
    }
  }

  const run = async () => {
    await replayHistory()
    if (stopped()) return
    if (plan.history) lastBlock = plan.history.to
    sink.message({ type: 'history_end', reqUUID, mode: 'history', message: { lastBlock: plan.history?.to ?? 0 } })
    const window = plan.live
    if (!window) return end()
    subscription = followLive(
      deps,
      args.memo,
      request,
      window,
      {
        documents: (docs, blockNum) => {
          for (const doc of docs) sink.live(type, reqUUID, doc)
          lastBlock = blockNum
        },
        fork: (event) => sink.fork({ chain_id: args.chainId, reqUUID, ...event }),
        flush: () => sink.drain(),
        finished: () => end(),
      },
      end,
    )
    if (stopped()) subscription.close()
  }
  run().catch(end)

  return {
    get lastBlock() {
      return lastBlock
    },
    cancel() {
      cancelled = true
      end()
    },
  }
}
