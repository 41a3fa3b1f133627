import type pg from 'pg'
import type { BlockRows } from '../record-rows.ts'
import { planRowVersions } from '../row-version-plan.ts'
import { columnsOf, type Columns } from './column-insert.ts'

/** The row_versions columns' types, in order. */
const ROW_VERSION_TYPES = ['text', 'text', 'text', 'text', 'bigint', 'bigint', 'text', 'bytea', 'bigint']

/**
 * Closes each key's pre-write current version at the block of its first change in the write (parameters: the first
 * changes' code, tbl, scope, pk and block, column by column); returns each closed version's first block, by the
 * change's place in the arrays.
 */
const CLOSE_CURRENT = `UPDATE row_versions v SET valid_to = k.block_num FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[]) WITH ORDINALITY AS k(code, tbl, scope, pk, block_num, i)
  WHERE v.code = k.code AND v.tbl = k.tbl AND v.scope = k.scope AND v.pk = k.pk AND v.valid_to IS NULL RETURNING k.i, v.first_block`

/**
 * Row versions of a write (`rows`: each block's, in block order): each pre-write current version of a changed key is
 * closed at the key's first change, and a key changed again within the write gets its earlier versions closed here.
 * Every version keeps its key's first block: the closed version's (RETURNING), or, for a key new to the store, the
 * block of its first change in the write. `insert` writes the versions, column by column (ROW_VERSION_TYPES).
 */
export async function writeRowVersions(
  c: pg.PoolClient,
  rows: readonly BlockRows['rowVersions'][number][],
  insert: (columns: Columns) => Promise<void>,
): Promise<void> {
  if (rows.length === 0) return
  const { keys, firstChanges, validTo } = planRowVersions(rows)
  const closed = await c.query<[string, string | null]>({
    text: CLOSE_CURRENT,
    values: [0, 1, 2, 3, 4].map((column) => firstChanges.map((i) => rows[i][column])),
    rowMode: 'array',
  })
  const firstBlock = new Map(firstChanges.map((i) => [keys[i], Number(rows[i][4])]))
  for (const [i, first] of closed.rows)
    if (first !== null) firstBlock.set(keys[firstChanges[Number(i) - 1]], Number(first))
  const versions = columnsOf(ROW_VERSION_TYPES)
  rows.forEach((r, i) => versions.add([r[0], r[1], r[2], r[3], r[4], validTo[i], r[5], r[6], firstBlock.get(keys[i])]))
  await insert(versions.columns)
}
