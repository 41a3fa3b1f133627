import type pg from 'pg'
import type { BlockRows } from '../record-rows.ts'

/** The row_versions columns' types, in order. */
const ROW_VERSION_TYPES = ['text', 'text', 'text', 'text', 'bigint', 'bigint', 'text', 'bytea', 'bigint']

/**
 * Closes each key's pre-write current version at the block of its first change in the write (parameters: the first
 * changes' code, tbl, scope, pk and block, column by column); returns each closed version's first block, by the
 * change's place in the arrays.
 */
const CLOSE_CURRENT = `UPDATE row_versions v SET valid_to = k.block_num FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[]) WITH ORDINALITY AS k(code, tbl, scope, pk, block_num, i)
  WHERE v.code = k.code AND v.tbl = k.tbl AND v.scope = k.scope AND v.pk = k.pk AND v.valid_to IS NULL RETURNING k.i, v.first_block`

/** A row version's key: code, table, scope and pk joined. */
const keyOf = (row: readonly unknown[]) => row.slice(0, 4).join('\u0000')

/**
 * Row versions of a write (`rows`: each block's, in block order): each pre-write current version of a changed key is
 * closed at the key's first change, and a key changed again within the write gets its earlier versions closed here.
 * Every version keeps its key's first block: the closed version's (RETURNING), or, for a key new to the store, the
 * block of its first change in the write. `insert` writes the versions as tuples of ROW_VERSION_TYPES.
 */
export async function writeRowVersions(
  c: pg.PoolClient,
  rows: readonly BlockRows['rowVersions'][number][],
  insert: (table: string, types: readonly string[], rows: readonly (readonly unknown[])[]) => Promise<void>,
): Promise<void> {
  if (rows.length === 0) return
  const validTo: (number | null)[] = rows.map(() => null)
  const latest = new Map<string, number>()
  const firstChanges: number[] = []
  rows.forEach((row, i) => {
    const key = keyOf(row)
    const previous = latest.get(key)
    if (previous === undefined) firstChanges.push(i)
    else validTo[previous] = row[4] as number
    latest.set(key, i)
  })
  const closed = await c.query<[string, string | null]>({
    text: CLOSE_CURRENT,
    values: [0, 1, 2, 3, 4].map((column) => firstChanges.map((i) => rows[i][column])),
    rowMode: 'array',
  })
  const firstBlock = new Map(firstChanges.map((i) => [keyOf(rows[i]), Number(rows[i][4])]))
  for (const [i, first] of closed.rows)
    if (first !== null) firstBlock.set(keyOf(rows[firstChanges[Number(i) - 1]]), Number(first))
  const versions = rows.map((row, i) => [...row.slice(0, 5), validTo[i], ...row.slice(5), firstBlock.get(keyOf(row))])
  await insert('row_versions', ROW_VERSION_TYPES, versions)
}
