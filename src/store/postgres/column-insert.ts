import type pg from 'pg'
import type { PostingChunk } from '../search/postings.ts'

export type Queryable = pg.Pool | pg.PoolClient

/** A table's rows given column by column, in the table's column order, each as `[SQL type, values]`. */
export type Columns = readonly (readonly [string, readonly unknown[]])[]

/**
 * One column's values as a JSON array of the texts PostgreSQL reads them from (bytea as `\x` hex): JSON.stringify
 * escapes in native code, where pg's array literals escape element by element in JavaScript (in the ingest profile
 * that, and the garbage it left, cost more than the rest of the PostgreSQL write path's JavaScript).
 */
function jsonColumn(type: string, values: readonly unknown[]): string {
  if (type !== 'bytea') return JSON.stringify(values)
  return JSON.stringify(
    values.map((v) =>
      v === null || v === undefined
        ? null
        : `\\x${Buffer.from((v as Uint8Array).buffer, (v as Uint8Array).byteOffset, (v as Uint8Array).byteLength).toString('hex')}`,
    ),
  )
}

/** A column's array in SQL from its JSON parameter `$n`, in the JSON array's order. */
const columnArray = (type: string, n: number) =>
  `ARRAY(SELECT e::${type} FROM json_array_elements_text($${n}::json) WITH ORDINALITY AS t(e, o) ORDER BY o)`

/**
 * Inserts rows given column by column: one statement (`unnest` of one array per column, each sent as one JSON text,
 * jsonColumn) for any number of rows.
 */
export async function insertColumns(c: Queryable, table: string, columns: Columns): Promise<void> {
  if (columns[0][1].length === 0) return
  await c.query(
    `INSERT INTO ${table} SELECT * FROM unnest(${columns.map(([type], i) => columnArray(type, i + 1)).join(', ')})`,
    columns.map(([type, values]) => jsonColumn(type, values)),
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
