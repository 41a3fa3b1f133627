import { blockFromRow, rowChangeFromRow } from './row-mapping.ts'
import type { BlockRecord, RowChange, TransactionHistory } from './types.ts'

/** Answers the batch reads (port.ts BatchReader) assemble the same way on both adapters. */

type DbRow = Record<string, unknown>

/** Rows of blocks by number. */
export const blocksByNum = (rows: readonly DbRow[]): Map<number, BlockRecord> =>
  new Map(rows.map((r) => [Number(r.num), blockFromRow(r)]))

/** Row changes by the block of column `at`, in the rows' order: an entry for each of `nums` (empty: none). */
export function rowChangesByBlock(nums: readonly number[], rows: readonly DbRow[]): Map<number, RowChange[]> {
  const out = new Map<number, RowChange[]>(nums.map((n) => [n, []]))
  for (const r of rows) out.get(Number(r.at))?.push(rowChangeFromRow(r))
  return out
}

/** A `forked_transactions` row as the block a transaction was forked out of. */
export const forkedOutFromRow = (r: DbRow): TransactionHistory['forkedOut'][number] => ({
  blockNum: Number(r.block_num),
  blockId: r.block_id as string,
})
