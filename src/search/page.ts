import type { ActionRecord, SearchDirection, SearchExpr, Store } from '../store/index.ts'

/** What collecting a page reads: the engine and the matches' transactions. */
export type PageStore = Pick<Store, 'searchActions' | 'executionsOfActions'>

/** The matching actions of one transaction, in the order the search walks (ascending or descending sequence). */
export interface RowDraft {
  readonly trxId: string
  readonly blockNum: number
  readonly actions: ActionRecord[]
  /** Every action of the transaction's execution, in execution order (the matches' indexes, the lifecycle). */
  readonly execution: readonly ActionRecord[]
}

/**
 * Where a page is read: global sequences from `fromSeq` to `toSeq` (inclusive, in the direction of travel) within
 * blocks [low, high].
 */
export interface PageBounds {
  readonly direction: SearchDirection
  readonly fromSeq: number
  readonly toSeq: number | undefined
  readonly low: number
  readonly high: number
}

/** Matches asked of the engine at most per call, once the first call (the page's size plus one) was not enough. */
const MAX_BATCH = 2_000

/**
 * Up to `limit` transactions with their matching actions, grouped as the search walks them (a
 * transaction's actions are consecutive in global-sequence order), and whether a match follows
 * the last one within the bounds. The engine is asked for `limit + 1` matches first (a page of
 * one match per transaction, plus the one telling whether more follow), then for twice as many
 * each time a transaction had several: it never walks the lists further than the page needs.
 */
export async function collectRows(
  store: PageStore,
  query: SearchExpr,
  bounds: PageBounds,
  limit: number,
): Promise<{ rows: RowDraft[]; more: boolean }> {
  const forward = bounds.direction === 'forward'
  const rows: RowDraft[] = []
  if (!forward && bounds.fromSeq < 0) return { rows, more: false }
  let at = bounds.fromSeq
  let batch = limit + 1
  for (;;) {
    const matches = await store.searchActions({
      query,
      direction: bounds.direction,
      fromSeq: at,
      toSeq: bounds.toSeq,
      limit: batch,
    })
    if (matches.length === 0) return { rows, more: false }
    // An action missing here was removed by a fork after the engine read its posting: the page's
    // consistency check (service.ts) sees that fork and reads the page again.
    const executions = await store.executionsOfActions(matches.map((m) => m.seq))
    for (const { seq } of matches) {
      const execution = executions.get(seq)
      // An execution's actions are consecutive sequences.
      const action = execution?.actions[seq - execution.actions[0].globalSequence]
      if (!execution || action?.globalSequence !== seq) continue
      if (forward ? action.blockNum > bounds.high : action.blockNum < bounds.low) return { rows, more: false }
      if (forward ? action.blockNum < bounds.low : action.blockNum > bounds.high) continue
      const last = rows[rows.length - 1]
      if (last && last.trxId === action.trxId && last.blockNum === action.blockNum) {
        last.actions.push(action)
        continue
      }
      if (rows.length === limit) return { rows, more: true }
      rows.push({ trxId: action.trxId, blockNum: action.blockNum, actions: [action], execution: execution.actions })
    }
    if (matches.length < batch) return { rows, more: false }
    at = forward ? matches[matches.length - 1].seq + 1 : matches[matches.length - 1].seq - 1
    if (!forward && at < 0) return { rows, more: false }
    batch = Math.min(batch * 2, MAX_BATCH)
  }
}
