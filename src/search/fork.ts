import type { Store } from '../store/index.ts'
import type { SearchPosition } from './cursor.ts'

/** What finding a fork point reads: the step log. */
export type ForkStore = Pick<Store, 'stepsOfBlock' | 'stepsAfter'>

/** Steps read per round trip, and at most in all (a cursor's fork is found within the reversible window). */
const STEPS_PER_READ = 1_000
const MAX_STEPS_SCANNED = 200_000

/**
 * The lowest block number at which the chain a cursor was made on (the one holding its block)
 * differs from the store's chain, for a cursor whose block was forked out: every block of that
 * chain below it is still canonical, so a forward search resumes there without skipping a match
 * of the new chain.
 *
 * Read from the step log: after the cursor's block was last applied (`new` or `redo`), a block of
 * its chain at or below its number can only have left through an `undo` step; the lowest such
 * number is the fork point. The scan stops once a block at or above the cursor's number became
 * irreversible (no later undo can reach below it). Without the cursor's block in the log (a store
 * that does not hold that history), the answer is the lower of the cursor's block and the first
 * reversible block: blocks at or below LIB cannot have been replaced since LIB passed them.
 */
export async function forkPointOf(store: ForkStore, cursor: SearchPosition, lib: number): Promise<number> {
  const steps = await store.stepsOfBlock(cursor.blockId)
  const applied = steps.filter((s) => s.type === 'new' || s.type === 'redo').at(-1)
  if (!applied) return Math.max(1, Math.min(cursor.blockNum, lib + 1))
  let lowest = cursor.blockNum
  let after = applied.seq
  for (let scanned = 0; scanned < MAX_STEPS_SCANNED;) {
    const page = await store.stepsAfter(after, STEPS_PER_READ)
    for (const step of page) {
      if (step.type === 'undo' && step.blockNum < lowest) lowest = step.blockNum
      else if (step.type === 'irreversible' && step.blockNum >= cursor.blockNum) return lowest
    }
    if (page.length < STEPS_PER_READ) break
    after = page[page.length - 1].seq
    scanned += page.length
  }
  return Math.max(1, lowest)
}
