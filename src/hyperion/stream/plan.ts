import type { BlockPosition, StreamRequest } from './request.ts'
import { StreamRequestError } from './request.ts'
import type { StreamStore } from './types.ts'

/** A request resolved against the store when it is accepted. */
export interface StreamPlan {
  /** The head when accepted (the ack's `currentBlockNum`). */
  readonly head: number
  /** Irreversible blocks replayed from the store (acknowledged batches), inclusive; absent: no history. */
  readonly history: { readonly from: number; readonly to: number } | undefined
  /** The step log followed after history; absent: the request ends after `history_end`. */
  readonly live:
    | {
        /** Follow every step after this one: the step that applied the last block history covers (or head). */
        readonly afterSeq: number
        /** Blocks below it are not sent (a start above LIB). */
        readonly floor: number
        /** Blocks above it are not sent (`read_until`); undefined: no end. */
        readonly until: number | undefined
      }
    | undefined
}

type PlanStore = Pick<StreamStore, 'position' | 'blockByNum' | 'blockByTime' | 'stepsOfBlock'>

/** A start or end as a block number: 0 stays 0 (off), a negative one counts back from head, a time finds its block. */
async function resolvePosition(
  store: PlanStore,
  position: BlockPosition,
  head: number,
  side: 'start' | 'end',
): Promise<number> {
  if ('block' in position) return position.block < 0 ? Math.max(1, head + position.block) : position.block
  const block = await store.blockByTime({ timeMs: position.timeMs, comparator: side === 'start' ? 'gte' : 'lte' })
  // A start after the last block waits for the next one; an end before the first block ends at once.
  if (block) return block.num
  return side === 'start' ? head + 1 : -1
}

/** The last step that applied block `num` (where the log continues from the state after it); 0 when none. */
async function applyStepOf(store: PlanStore, num: number): Promise<number> {
  if (num <= 0) return 0
  const block = await store.blockByNum(num)
  const steps = block ? await store.stepsOfBlock(block.id) : []
  return steps.filter((s) => s.type === 'new' || s.type === 'redo').at(-1)?.seq ?? 0
}

/**
 * History covers the irreversible blocks from the start up to LIB (they cannot change: no fork can withdraw what a
 * batch held); the live feed follows the step log from the step that applied LIB's block, so blocks above LIB come as
 * live messages, a fork among them as a `fork_event`, and nothing is skipped or sent twice at the switch. Without a
 * start the stream is live from head.
 */
export async function planStream(store: PlanStore, request: StreamRequest): Promise<StreamPlan> {
  const position = await store.position()
  if (!position) throw new StreamRequestError('the store holds no block yet')
  const head = position.head.blockNum
  const lib = Math.min(position.lib, head)
  const start = await resolvePosition(store, request.startFrom, head, 'start')
  const untilAsked = await resolvePosition(store, request.readUntil, head, 'end')
  const until = untilAsked === 0 ? undefined : Math.max(0, untilAsked)
  if (start > 0 && until !== undefined && start > until) throw new StreamRequestError('start_from is after read_until')
  const historyTo = Math.min(lib, until ?? lib)
  const history = start > 0 && start <= historyTo ? { from: start, to: historyTo } : undefined
  const liveNeeded = !request.ignoreLive && (until === undefined || until > lib || (start === 0 && until > head))
  if (!liveNeeded) return { head, history, live: undefined }
  if (start === 0) return { head, history, live: { afterSeq: await applyStepOf(store, head), floor: 0, until } }
  return { head, history, live: { afterSeq: await applyStepOf(store, lib), floor: Math.max(start, lib + 1), until } }
}
