import type { LiveHub, LiveStep } from '../../live/index.ts'
import type { BlockRecord, Step, Store } from '../../store/index.ts'
import type { Listener } from './connection.ts'

/** A step of the log with what its block held (undefined past the store's retention of forked-out content). */
export type FeedItem = Pick<LiveStep, 'step' | 'payload'>

/** The live hub as streams use it: every step after `afterSeq`, in order, exactly once. */
export type StepFeed = Pick<LiveHub, 'subscribe'>

/** What a stream reads from the store to start. */
export type FeedStore = Pick<Store, 'position' | 'blockByNum' | 'stepsOfBlock' | 'stepPayloads'>

/** Blocks replayed per store read while a stream catches up from a past block. */
const REPLAY_BATCH = 100

const isApply = (step: Step) => step.type === 'new' || step.type === 'redo'

/**
 * Every block from `fromBlock` on, then live: the irreversible blocks `fromBlock..LIB` are read
 * from the store (they cannot change), then the step log is followed from the step that made LIB's
 * block what it is: apply steps (`mode: 'apply'`: new, undo, redo, irreversible as they come) or
 * only irreversible steps (`mode: 'irreversible'`). Replayed blocks arrive as `new` (or
 * `irreversible`) items with synthetic step numbers (seq 0). No block is skipped or repeated at the
 * switch. `onItems` is awaited, so a slow consumer slows its own replay.
 */
export function followFrom(
  args: { store: FeedStore; feed: StepFeed; fromBlock: number; mode: 'apply' | 'irreversible' },
  onItems: (items: readonly FeedItem[]) => void | Promise<void>,
  onError: (error: unknown) => void,
): Listener {
  const { store, feed, fromBlock, mode } = args
  let closed = false
  let live: Listener | undefined
  const replay = async (first: number, last: number) => {
    for (let from = first; from <= last && !closed; from += REPLAY_BATCH) {
      const blocks: BlockRecord[] = []
      for (let num = from; num < Math.min(from + REPLAY_BATCH, last + 1); num++) {
        const block = await store.blockByNum(num)
        if (block) blocks.push(block)
      }
      const steps: Step[] = blocks.map((b) => ({
        seq: 0,
        type: mode === 'apply' ? 'new' : 'irreversible',
        blockNum: b.num,
        blockId: b.id,
      }))
      const payloads = await store.stepPayloads(steps)
      if (!closed && steps.length) await onItems(steps.map((step, i) => ({ step, payload: payloads[i] })))
    }
  }
  const run = async () => {
    const position = await store.position()
    const head = position?.head.blockNum ?? 0
    const lib = position ? Math.min(position.lib, head) : 0
    // Applied mode starting above LIB: the stored blocks up to head, then the log after head's
    // apply step, unfiltered (a fork may re-apply a block below the start: it comes after the start).
    const fromHead = mode === 'apply' && fromBlock > lib && fromBlock <= head
    const last = fromHead ? head : lib
    await replay(fromBlock, last)
    if (closed) return
    const lastBlock = last > 0 ? await store.blockByNum(last) : undefined
    const lastSteps = lastBlock ? await store.stepsOfBlock(lastBlock.id) : []
    const anchor = (
      mode === 'apply' ? lastSteps.filter(isApply) : lastSteps.filter((s) => s.type === 'irreversible')
    ).at(-1)
    const afterSeq = anchor?.seq ?? 0
    // Only a start above head (or at LIB's anchor, for blocks it replayed) skips blocks below it.
    const floor = fromHead ? 0 : Math.max(fromBlock, last + 1)
    live = feed.subscribe({
      afterSeq,
      onSteps: (items) => {
        const wanted = items.filter((item) =>
          mode === 'irreversible'
            ? item.step.type === 'irreversible' && item.step.blockNum >= fromBlock
            : item.step.type === 'irreversible' || item.step.blockNum >= floor,
        )
        return wanted.length ? onItems(wanted) : undefined
      },
      onError,
    })
    if (closed) live.close()
  }
  run().catch((error: unknown) => {
    if (!closed) onError(error)
  })
  return {
    close() {
      closed = true
      live?.close()
    },
  }
}

/**
 * The step log after the state a read saw at `headId` (its head block): the last step that applied
 * that block id is where the log continues from that state, so a fork that later undoes blocks the
 * read included is delivered as its undo steps. Without a head (an empty store) the log is followed
 * from its start.
 */
export function followAfterHead(
  args: { store: FeedStore; feed: StepFeed; headId: string | undefined },
  onItems: (items: readonly FeedItem[]) => void | Promise<void>,
  onError: (error: unknown) => void,
): Listener {
  let closed = false
  let live: Listener | undefined
  const run = async () => {
    const steps = args.headId ? await args.store.stepsOfBlock(args.headId) : []
    const afterSeq = steps.filter(isApply).at(-1)?.seq ?? 0
    if (closed) return
    live = args.feed.subscribe({ afterSeq, onSteps: onItems, onError })
  }
  run().catch((error: unknown) => {
    if (!closed) onError(error)
  })
  return {
    close() {
      closed = true
      live?.close()
    },
  }
}
