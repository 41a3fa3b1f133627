import { BoundedCache } from '../lifecycle/index.ts'
import type { BlockRecord, ExecutionActions, Store } from '../store/index.ts'

/** How much the page reads' cache holds at most: actions of cached executions (one entry each), and blocks. */
export interface IrreversibleReadLimits {
  readonly actions: number
  readonly blocks: number
}

/** The defaults: 100,000 actions (a token transfer's execution is 3) and 10,000 blocks. */
export const IRREVERSIBLE_READ_LIMITS: IrreversibleReadLimits = { actions: 100_000, blocks: 10_000 }

type Reads = Pick<Store, 'executionsOfActions' | 'blocksByNums'>

/**
 * What every page reads again for its matches, kept for blocks at or below LIB, where it can no longer change: the
 * execution holding each matched action (by the action's global sequence: the sequences of an irreversible block are
 * never given to another action) and the rows' blocks. `at(lib)` gives the reads of one page, with the LIB the page
 * read before any of them: only what it finds at or below that LIB is kept. A reversible block is read from the store
 * every time.
 */
export function createIrreversibleReads(store: Reads, limits: IrreversibleReadLimits = IRREVERSIBLE_READ_LIMITS) {
  const executions = new BoundedCache<number, ExecutionActions>(limits.actions, limits.actions)
  const blocks = new BoundedCache<number, BlockRecord>(limits.blocks, limits.blocks)

  return {
    executions,
    blocks,
    at(lib: number): Reads {
      return {
        async executionsOfActions(seqs) {
          const out = new Map<number, ExecutionActions>()
          const missing: number[] = []
          for (const seq of seqs) {
            const found = executions.get(seq)
            if (found) out.set(seq, found)
            else missing.push(seq)
          }
          if (missing.length === 0) return out
          const read = await store.executionsOfActions(missing)
          for (const [seq, execution] of read) {
            out.set(seq, execution)
            // Under each of its actions: the page's next matches are often the same transaction's.
            if (execution.blockNum <= lib)
              for (const a of execution.actions) executions.set(a.globalSequence, execution)
          }
          return out
        },
        async blocksByNums(nums) {
          const out = new Map<number, BlockRecord>()
          const missing: number[] = []
          for (const num of nums) {
            const found = num <= lib ? blocks.get(num) : undefined
            if (found) out.set(num, found)
            else missing.push(num)
          }
          if (missing.length === 0) return out
          for (const [num, block] of await store.blocksByNums(missing)) {
            out.set(num, block)
            if (num <= lib) blocks.set(num, block)
          }
          return out
        },
      }
    },
  }
}
