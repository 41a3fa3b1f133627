import type Database from 'better-sqlite3'
import type { BlockRef } from '../../antelope/index.ts'
import { failpoint, writtenBlocks } from '../failpoints.ts'
import { blockRows, type BlockRows } from '../record-rows.ts'
import { planRowVersions } from '../row-version-plan.ts'
import { postingChunks, truncateChunk, type PostingChunk } from '../search/postings.ts'
import { BLOCKS_ABOVE, INSERT_APPLY_STEP, INSERT_STEP, SET_META } from '../common-sql.ts'
import { runSync, type SyncSqlRunner } from '../sql-routine.ts'
import type { BlockBatch, StorePosition } from '../types.ts'
import { undoFrom, type UndoDialect } from '../undo.ts'
import { writeVersionChanges } from '../version-writes.ts'
import { assertLinks, writeSteps } from '../write-steps.ts'
import type { createSqliteBlockContent } from './sqlite-block-content.ts'
import { chunkFromRow, type PostingRow } from './sqlite-postings.ts'

const POSTINGS_FROM = 'SELECT term_key, last_seq, first_seq, entries FROM postings WHERE last_seq >= ?'
/** INDEXED BY: to skip sorting for DISTINCT, the planner would walk the whole table in key order. */
const ROW_KEYS_FROM =
  'SELECT DISTINCT code, tbl, scope, pk FROM row_versions INDEXED BY row_versions_block WHERE block_num >= ?'
/** A key's last version below the cut, reopened if the cut closed it (UndoDialect.reopenRows). */
const REOPEN_ROW = `UPDATE row_versions SET valid_to = NULL WHERE code = @code AND tbl = @tbl AND scope = @scope AND pk = @pk AND valid_to >= @cut AND block_num =
  (SELECT block_num FROM row_versions WHERE code = @code AND tbl = @tbl AND scope = @scope AND pk = @pk AND block_num < @cut ORDER BY block_num DESC LIMIT 1)`

type Row = BlockRows['rowVersions'][number]

/**
 * Where a write stands: the head it links to, LIB and the blocks above it before the write (read
 * once), and the blocks it applied.
 */
interface WriteCursor {
  head: BlockRef | undefined
  readonly startLib: number
  readonly reversible: { num: number; id: string }[]
  readonly applied: { num: number; id: string }[]
}

/** The writes of a SQLite store: each a synchronous transaction, atomic on disk. */
export interface SqliteWriter {
  applyBlocks(batches: readonly BlockBatch[], lib: number): void
  /** Undoes from `blockNum` up; returns the head it undid (undefined: nothing to undo). */
  undoFrom(blockNum: number): number | undefined
}

export function createSqliteWriter(
  db: Database.Database,
  sql: SyncSqlRunner,
  content: ReturnType<typeof createSqliteBlockContent>,
  position: () => StorePosition | undefined,
): SqliteWriter {
  const s = {
    insertBlock: db.prepare('INSERT INTO blocks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)'),
    insertTrx: db.prepare('INSERT INTO transactions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'),
    insertAction: db.prepare('INSERT INTO actions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'),
    insertPosting: db.prepare('INSERT INTO postings VALUES (?, ?, ?, ?)'),
    // Without INDEXED BY the planner takes the primary key and walks every version of the row: a
    // balance rewritten in every block made this the slowest statement of ingest. It returns the
    // closed version's first block, which the new version keeps (a new key's is its own block).
    closeRow: db
      .prepare(
        'UPDATE row_versions INDEXED BY row_versions_head SET valid_to = ? WHERE code = ? AND tbl = ? AND scope = ? AND pk = ? AND valid_to IS NULL RETURNING first_block',
      )
      .pluck(),
    insertRow: db.prepare('INSERT INTO row_versions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)'),
    insertApplyStep: db.prepare(INSERT_APPLY_STEP),
  }
  const insertPosting = (c: PostingChunk) => s.insertPosting.run(c.termKey, c.lastSeq, c.firstSeq, sql.bytes(c.entries))

  const startWrite = (): WriteCursor => {
    const pos = position()
    const lib = pos?.lib ?? 0
    return {
      head: pos?.head,
      startLib: lib,
      reversible: sql.rows<{ num: number; id: string }>(BLOCKS_ABOVE, [lib]),
      applied: [],
    }
  }

  /** Records the write's steps (writeSteps) and its new head and LIB. */
  const finishWrite = (cursor: WriteCursor, lib: number) => {
    const planned = writeSteps(cursor.applied, lib, cursor.startLib, cursor.reversible)
    for (const x of planned.steps) {
      if (x.type === 'apply') s.insertApplyStep.run(x.id, x.num, x.id)
      else sql.run(INSERT_STEP, [x.type, x.num, x.id])
    }
    if (cursor.head) sql.run(SET_META, ['head', `${cursor.head.blockNum}:${cursor.head.blockId}`])
    if (planned.lib > cursor.startLib) {
      sql.run(SET_META, ['lib', String(planned.lib)])
      content.prune(planned.lib)
    }
  }

  /**
   * Writes one block of `write` (all of it is needed only to name it at a failpoint); its row versions are added to
   * `rowVersions`, written for the whole write by writeRowVersions.
   */
  const apply = (batch: BlockBatch, cursor: WriteCursor, write: readonly BlockBatch[], rowVersions: Row[]) => {
    const b = batch.block
    assertLinks(cursor.head, b)
    const rows = blockRows(batch, sql)
    s.insertBlock.run(...rows.block)
    for (const t of rows.transactions) s.insertTrx.run(...t)
    for (const a of rows.actions) s.insertAction.run(...a)
    if (cursor.applied.length === 0) failpoint?.('between-statements', writtenBlocks(write))
    for (const r of rows.rowVersions) rowVersions.push(r)
    runSync(writeVersionChanges(sql, b.num, batch))
    cursor.head = { blockNum: b.num, blockId: b.id }
    cursor.applied.push({ num: b.num, id: b.id })
  }

  /**
   * A write's row versions (planRowVersions): each key's version current before the write is closed at its first
   * change, all closes before any insert (a close would otherwise match the write's own current version); every
   * version keeps its key's first block, the closed version's or that of the key's first change.
   */
  const writeRowVersions = (rows: readonly Row[]) => {
    const { keys, firstChanges, validTo } = planRowVersions(rows)
    const firstBlock = new Map<string, number>()
    for (const i of firstChanges) {
      const r = rows[i]
      const closed = s.closeRow.get(r[4], r[0], r[1], r[2], r[3]) as number | undefined
      firstBlock.set(keys[i], closed ?? (r[4] as number))
    }
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]
      s.insertRow.run(r[0], r[1], r[2], r[3], r[4], validTo[i], r[5], r[6], firstBlock.get(keys[i]))
    }
  }

  // Writes run as IMMEDIATE transactions: they read before writing, and a deferred one would fail
  // at once (SQLITE_BUSY, no busy wait) when another process (`antler keys`) committed in between.
  const applyMany = db.transaction((batches: readonly BlockBatch[], lib: number) => {
    const cursor = startWrite()
    const rowVersions: Row[] = []
    for (const batch of batches) apply(batch, cursor, batches, rowVersions)
    writeRowVersions(rowVersions)
    finishWrite(cursor, lib)
    for (const c of postingChunks(batches)) insertPosting(c)
    failpoint?.('before-commit', writtenBlocks(batches))
  })
  const undoDialect: UndoDialect = {
    sql,
    keepUndone: content.keepUndone,
    cutActions(cut) {
      sql.run('DELETE FROM actions WHERE global_seq >= ?', [cut])
      for (const row of sql.rows<PostingRow>(POSTINGS_FROM, [cut])) {
        sql.run('DELETE FROM postings WHERE term_key = ? AND last_seq = ?', [row.term_key, row.last_seq])
        const kept = truncateChunk(chunkFromRow(row), cut)
        if (kept) insertPosting(kept)
      }
    },
    reopenRows(blockNum) {
      for (const k of sql.rows<Record<string, string>>(ROW_KEYS_FROM, [blockNum]))
        sql.run(REOPEN_ROW, [{ ...k, cut: blockNum }])
    },
  }
  const undo = db.transaction((blockNum: number) => runSync(undoFrom(undoDialect, blockNum)))
  return {
    applyBlocks: (batches, lib) => applyMany.immediate(batches, lib),
    undoFrom: (blockNum) => undo.immediate(blockNum),
  }
}
