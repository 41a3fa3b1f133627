import type { BlockRows } from './record-rows.ts'

/** A row version tuple of blockRows: code, tbl, scope, pk, block_num, payer, value. */
type RowVersion = BlockRows['rowVersions'][number]

/**
 * How one write's row versions (each block's, in block order) are stored. Only a key's first change in the write
 * closes a version already in the store (`firstChanges`); a version the write itself supersedes is written closed
 * (`validTo`: the block of the key's next change, null for the write's last), so it never enters the current-version
 * indexes only to leave them again a block later. Block-by-block writes would leave the same rows.
 */
export interface RowVersionPlan {
  /** Each row's key: code, table, scope and pk joined. */
  readonly keys: readonly string[]
  /** The places of each key's first change in the write, in order. */
  readonly firstChanges: readonly number[]
  /** Each row's valid_to: the next change's block within the write, or null (current). */
  readonly validTo: readonly (number | null)[]
}

export function planRowVersions(rows: readonly RowVersion[]): RowVersionPlan {
  const validTo: (number | null)[] = new Array<number | null>(rows.length).fill(null)
  const keys = rows.map(
    (row) => `${row[0] as string}\u0000${row[1] as string}\u0000${row[2] as string}\u0000${row[3] as string}`,
  )
  const latest = new Map<string, number>()
  const firstChanges: number[] = []
  for (let i = 0; i < rows.length; i++) {
    const previous = latest.get(keys[i])
    if (previous === undefined) firstChanges.push(i)
    else validTo[previous] = rows[i][4] as number
    latest.set(keys[i], i)
  }
  return { keys, firstChanges, validTo }
}
