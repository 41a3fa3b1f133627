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

/**
 * Tuples in a table's column order, `types` the columns' SQL types, kept column by column as they are added (no tuple
 * outlives its add): `columns` is insertColumns' form of them all.
 */
export function columnsOf(types: readonly string[]): { add(row: readonly unknown[]): void; readonly columns: Columns } {
  const values = types.map((): unknown[] => [])
  return {
    add(row) {
      for (let i = 0; i < values.length; i++) values[i].push(row[i])
    },
    columns: types.map((type, i) => [type, values[i]] as const),
  }
}

export const insertChunks = (c: Queryable, chunks: readonly PostingChunk[]) =>
  insertColumns(c, 'postings', [
    ['bigint', chunks.map((x) => x.termKey)],
    ['bigint', chunks.map((x) => x.lastSeq)],
    ['bigint', chunks.map((x) => x.firstSeq)],
    ['bytea', chunks.map((x) => x.entries)],
  ])
