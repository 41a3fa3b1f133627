import type pg from 'pg'
import type { PostingChunk } from '../search/postings.ts'

export type Queryable = pg.Pool | pg.PoolClient

/** A table's rows given column by column, in the table's column order, each as `[SQL type, values]`. */
export type Columns = readonly (readonly [string, readonly unknown[]])[]

/** Inserts rows given column by column: one statement (`unnest` of one array per column) for any number of rows. */
export async function insertColumns(c: Queryable, table: string, columns: Columns): Promise<void> {
  if (columns[0][1].length === 0) return
  await c.query(
    `INSERT INTO ${table} SELECT * FROM unnest(${columns.map(([type], i) => `$${i + 1}::${type}[]`).join(', ')})`,
    columns.map(([, values]) => values),
  )
}

/** Inserts rows given as tuples in the table's column order, `types` the columns' SQL types: one statement. */
export const insertRows = (
  c: Queryable,
  table: string,
  types: readonly string[],
  rows: readonly (readonly unknown[])[],
) =>
  insertColumns(
    c,
    table,
    types.map((type, i) => [type, rows.map((row) => row[i])]),
  )

export const insertChunks = (c: Queryable, chunks: readonly PostingChunk[]) =>
  insertColumns(c, 'postings', [
    ['bigint', chunks.map((x) => x.termKey)],
    ['bigint', chunks.map((x) => x.lastSeq)],
    ['bigint', chunks.map((x) => x.firstSeq)],
    ['bytea', chunks.map((x) => Buffer.from(x.entries))],
  ])
