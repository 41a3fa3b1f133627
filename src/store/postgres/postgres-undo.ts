import type pg from 'pg'
import { truncateChunk } from '../search/postings.ts'
import type { UndoDialect } from '../undo.ts'
import { insertChunks } from './column-insert.ts'
import { announceSteps } from './in-transaction.ts'
import { keepUndoneBlocks } from './postgres-block-content.ts'
import { chunkFromRow, type PostingRow } from './postgres-postings.ts'
import { createPostgresRunner } from './postgres-runner.ts'

/** The actions from a sequence (parameters: sequence, its block: the block bound spares the other partitions). */
const DELETE_ACTIONS_FROM = 'DELETE FROM actions WHERE global_seq >= $1 AND block_num >= $2'
const DELETE_POSTINGS_FROM =
  'DELETE FROM postings WHERE last_seq >= $1 RETURNING term_key, last_seq, first_seq, entries'
const ROW_KEYS_FROM = 'SELECT DISTINCT code, tbl, scope, pk FROM row_versions WHERE block_num >= $1'
/** UndoDialect.reopenRows for every key in one statement (parameters: cut, then the keys column by column). */
const REOPEN_ROWS = `UPDATE row_versions v SET valid_to = NULL FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS k(code, tbl, scope, pk)
  WHERE v.code = k.code AND v.tbl = k.tbl AND v.scope = k.scope AND v.pk = k.pk AND v.valid_to >= $1 AND v.block_num =
    (SELECT max(c.block_num) FROM row_versions c WHERE c.code = k.code AND c.tbl = k.tbl AND c.scope = k.scope AND c.pk = k.pk AND c.block_num < $1)`

/** An undo on PostgreSQL, inside the transaction of client `c`: a fixed number of round trips, whatever it undoes. */
export function createPostgresUndo(c: pg.PoolClient): UndoDialect {
  return {
    sql: createPostgresRunner(c),
    keepUndone: (ids) => keepUndoneBlocks(c, ids),
    async cutActions(cut, blockNum) {
      await c.query(DELETE_ACTIONS_FROM, [cut, blockNum])
      const cutChunks = (await c.query<PostingRow>(DELETE_POSTINGS_FROM, [cut])).rows
      await insertChunks(
        c,
        cutChunks.flatMap((row) => truncateChunk(chunkFromRow(row), cut) ?? []),
      )
    },
    async reopenRows(blockNum) {
      const keys = (await c.query<Record<'code' | 'tbl' | 'scope' | 'pk', string>>(ROW_KEYS_FROM, [blockNum])).rows
      if (keys.length === 0) return
      const columns = (['code', 'tbl', 'scope', 'pk'] as const).map((column) => keys.map((k) => k[column]))
      await c.query(REOPEN_ROWS, [blockNum, ...columns])
    },
    announce: (blockNum) => announceSteps(c, blockNum),
  }
}
