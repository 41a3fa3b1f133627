import type pg from 'pg'
import { pkText } from '../row-mapping.ts'
import type { BlockBatch } from '../types.ts'
import type { Columns } from './column-insert.ts'

/** A row version a write inserts, with its key (code, table, scope, pk joined) to find its earlier versions. */
interface RowVersion {
  key: string
  code: string
  tbl: string
  scope: string
  pk: string
  blockNum: number
  validTo: number | null
  payer: string
  value: Buffer | null
}

/**
 * Closes each key's pre-write current version at the block of its first change in the write (parameters: the first
 * changes, column by column); returns each closed version's first block, by the change's place in the arrays.
 */
const CLOSE_CURRENT = `UPDATE row_versions v SET valid_to = k.block_num FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[]) WITH ORDINALITY AS k(code, tbl, scope, pk, block_num, i)
  WHERE v.code = k.code AND v.tbl = k.tbl AND v.scope = k.scope AND v.pk = k.pk AND v.valid_to IS NULL RETURNING k.i, v.first_block`

/** The versions a write of `batches` inserts, each but a key's last closed by the next, and each key's first change. */
function versionsOf(batches: readonly BlockBatch[]): { versions: RowVersion[]; firstChanges: RowVersion[] } {
  const versions: RowVersion[] = []
  const latest = new Map<string, number>()
  const firstChanges: RowVersion[] = []
  for (const { block: b, rows } of batches) {
    for (const r of rows) {
      const pk = pkText(r.primaryKey)
      const key = `${r.code}\u0000${r.table}\u0000${r.scope}\u0000${pk}`
      const value = r.value === undefined ? null : Buffer.from(r.value)
      const v = {
        key,
        code: r.code,
        tbl: r.table,
        scope: r.scope,
        pk,
        blockNum: b.num,
        validTo: null,
        payer: r.payer,
        value,
      }
      const previous = latest.get(key)
      if (previous === undefined) firstChanges.push(v)
      else versions[previous].validTo = b.num
      latest.set(key, versions.length)
      versions.push(v)
    }
  }
  return { versions, firstChanges }
}

/**
 * Row versions of a write: each pre-write current version of a changed key is closed at the key's
 * first change, and a key changed again within the write gets its earlier versions closed here.
 * Every version keeps its key's first block: the closed version's (RETURNING), or, for a key new
 * to the store, the block of its first change in the write. `insert` writes the versions' columns.
 */
export async function writeRowVersions(
  c: pg.PoolClient,
  batches: readonly BlockBatch[],
  insert: (table: string, columns: Columns) => Promise<void>,
): Promise<void> {
  const { versions: v, firstChanges: f } = versionsOf(batches)
  if (v.length === 0) return
  const closed = await c.query<[string, string | null]>({
    text: CLOSE_CURRENT,
    values: [
      f.map((x) => x.code),
      f.map((x) => x.tbl),
      f.map((x) => x.scope),
      f.map((x) => x.pk),
      f.map((x) => x.blockNum),
    ],
    rowMode: 'array',
  })
  const firstBlock = new Map<string, number>(f.map((x) => [x.key, x.blockNum]))
  for (const [i, first] of closed.rows) if (first !== null) firstBlock.set(f[Number(i) - 1].key, Number(first))
  await insert('row_versions', [
    ['text', v.map((x) => x.code)],
    ['text', v.map((x) => x.tbl)],
    ['text', v.map((x) => x.scope)],
    ['text', v.map((x) => x.pk)],
    ['bigint', v.map((x) => x.blockNum)],
    ['bigint', v.map((x) => x.validTo)],
    ['text', v.map((x) => x.payer)],
    ['bytea', v.map((x) => x.value)],
    ['bigint', v.map((x) => firstBlock.get(x.key))],
  ])
}
