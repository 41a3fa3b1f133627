import type { Store } from '../store/index.ts'
import type { SearchPosition } from './cursor.ts'
import { forkPointOf, type ForkStore } from './fork.ts'
import type { PageBounds } from './page.ts'
import type { BlockRange } from './range.ts'

/** What turning a range and a cursor into sequence bounds reads. */
export type BoundsStore = ForkStore & Pick<Store, 'firstSeqFromBlock' | 'executionsOfActions'>

/** Where a cursor stands against the store's chain, read with the page's first snapshot. */
export interface CursorState {
  readonly position: SearchPosition
  /** Its block is no longer the stored block at its number (or the chain is now shorter). */
  readonly forked: boolean
}

/** The last sequence of blocks up to `blockNum` (the sequence before the next block's first action). */
async function lastSeqThrough(store: BoundsStore, blockNum: number): Promise<number> {
  const next = await store.firstSeqFromBlock(blockNum + 1)
  return next === undefined ? Number.MAX_SAFE_INTEGER : next - 1
}

/**
 * The first and last global sequence of the transaction holding the cursor's action (the action alone when it is not
 * found).
 */
async function transactionSpan(store: BoundsStore, cursor: SearchPosition): Promise<{ first: number; last: number }> {
  const execution = (await store.executionsOfActions([cursor.seq])).get(cursor.seq)
  if (!execution || execution.blockNum !== cursor.blockNum) return { first: cursor.seq, last: cursor.seq }
  // In execution order: consecutive sequences.
  return {
    first: execution.actions[0].globalSequence,
    last: execution.actions[execution.actions.length - 1].globalSequence,
  }
}

/**
 * The sequence bounds of a page. Without a cursor, the range's blocks. A cursor replaces the low
 * bound (ascending) or the high bound (descending), as dfuse's did: the page starts right after
 * the cursor's transaction, in either direction, so a cursor made by an ascending page resumes a
 * descending one and the other way round. A cursor whose block was forked out resumes on the
 * store's chain without skipping a match of it: ascending, from the fork point (the first block
 * where the cursor's chain and the store's differ: their matches are new to the caller; not below
 * the range's low bound); descending, from the end of the block now at the cursor's number (or
 * the searchable head).
 * Undefined: nothing can match (an empty range, no action in it).
 */
export async function pageBounds(
  store: BoundsStore,
  range: BlockRange,
  cursor: CursorState | undefined,
  lib: number,
): Promise<PageBounds | undefined> {
  if (range.high < 1) return undefined
  if (cursor === undefined) {
    if (range.low > range.high) return undefined
    return seqBounds(store, range.sort === 'asc' ? 'forward' : 'backward', range.low, range.high)
  }
  const at = cursor.position
  if (range.sort === 'asc') {
    if (cursor.forked) {
      // Not below the range asked: what lies under it was never the caller's.
      const low = Math.max(await forkPointOf(store, at, lib), range.low)
      return low > range.high ? undefined : seqBounds(store, 'forward', low, range.high)
    }
    if (at.blockNum > range.high) return undefined
    // Independent reads, together (round trips on PostgreSQL).
    const [{ last }, toSeq] = await Promise.all([transactionSpan(store, at), lastSeqThrough(store, range.high)])
    return { direction: 'forward', fromSeq: last + 1, toSeq, low: at.blockNum, high: range.high }
  }
  const high = Math.min(at.blockNum, range.virtualHead)
  if (range.low > high) return undefined
  if (cursor.forked || at.blockNum > range.virtualHead) return seqBounds(store, 'backward', range.low, high)
  const [toSeq, { first }] = await Promise.all([store.firstSeqFromBlock(range.low), transactionSpan(store, at)])
  if (toSeq === undefined) return undefined
  return { direction: 'backward', fromSeq: first - 1, toSeq, low: range.low, high }
}

/** The sequences of blocks [low, high] in the direction of travel; undefined when no action is stored from `low` on. */
async function seqBounds(
  store: BoundsStore,
  direction: 'forward' | 'backward',
  low: number,
  high: number,
): Promise<PageBounds | undefined> {
  const [first, last] = await Promise.all([store.firstSeqFromBlock(low), lastSeqThrough(store, high)])
  if (first === undefined) return undefined
  return direction === 'forward'
    ? { direction, fromSeq: first, toSeq: last, low, high }
    : { direction, fromSeq: last, toSeq: first, low, high }
}
