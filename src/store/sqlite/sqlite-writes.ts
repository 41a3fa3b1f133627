import type Database from 'better-sqlite3'
import type { BlockRef } from '../../antelope/index.ts'
import { failpoint, writtenBlocks } from '../failpoints.ts'
import { authText, detailsText, pkText, ramText, sequenceRanges, trxIdKey } from '../row-mapping.ts'
import { postingChunks, truncateChunk, type PostingChunk } from '../search/postings.ts'
import { BLOCKS_ABOVE, INSERT_APPLY_STEP, INSERT_STEP, SET_META } from '../shared-sql.ts'
import { runSync, type SyncSqlRunner } from '../sql-routine.ts'
import type { ActionRecord, BlockBatch, StorePosition } from '../types.ts'
import { undoFrom, type UndoDialect } from '../undo.ts'
import { writeVersionChanges } from '../version-writes.ts'
import { assertLinks, writeSteps } from '../write-steps.ts'
import type { createSqliteBlockContent } from './sqlite-block-content.ts'
import { chunkFromRow, type PostingRow } from './sqlite-postings.ts'

/** The driver binds Buffers only; a view over the same memory avoids a copy per blob. */
const bufferView = (u: Uint8Array) => Buffer.from(u.buffer, u.byteOffset, u.byteLength)

const POSTINGS_FROM = 'SELECT term_key, last_seq, first_seq, entries FROM postings WHERE last_seq >= ?'
/** INDEXED BY: to skip sorting for DISTINCT, the planner would walk the whole table in key order. */
const ROW_KEYS_FROM =
  'SELECT DISTINCT code, tbl, scope, pk FROM row_versions INDEXED BY row_versions_block WHERE block_num >= ?'
/** A key's last version below the cut, reopened if the cut closed it (UndoDialect.reopenRows). */
const REOPEN_ROW = `UPDATE row_versions SET valid_to = NULL WHERE code = @code AND tbl = @tbl AND scope = @scope AND pk = @pk AND valid_to >= @cut AND block_num =
  (SELECT block_num FROM row_versions WHERE code = @code AND tbl = @tbl AND scope = @scope AND pk = @pk AND block_num < @cut ORDER BY block_num DESC LIMIT 1)`

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
    insertBlock: db.prepare(
      'INSERT INTO blocks VALUES (@num, @id, @previous, @ts, @producer, @trx_count, @action_count, @first_seq, @header)',
    ),
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
    insertRow: db.prepare('INSERT INTO row_versions VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?)'),
    insertApplyStep: db.prepare(INSERT_APPLY_STEP),
  }
  const insertPosting = (c: PostingChunk) =>
    s.insertPosting.run(c.termKey, c.lastSeq, c.firstSeq, bufferView(c.entries))

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

  const insertAction = (a: ActionRecord, trxIndex: number) =>
    s.insertAction.run(
      a.globalSequence,
      a.blockNum,
      trxIndex,
      a.actionOrdinal,
      a.creatorActionOrdinal,
      a.receiver,
      a.account,
      a.name,
      authText(a.authorization),
      bufferView(a.data),
      bufferView(a.returnValue),
      a.actDigest,
      a.recvSequence,
      ramText(a.ramDeltas),
      detailsText(a.trace),
    )

  /** Writes one block of `write` (all of it is needed only to name it at a failpoint). */
  const apply = (batch: BlockBatch, cursor: WriteCursor, write: readonly BlockBatch[]) => {
    const b = batch.block
    assertLinks(cursor.head, b)
    const ranges = sequenceRanges(batch)
    s.insertBlock.run({
      num: b.num,
      id: b.id,
      previous: b.previous,
      ts: b.timestampMs,
      producer: b.producer,
      trx_count: b.transactionCount,
      action_count: b.actionCount,
      first_seq: ranges.blockFirstSeq,
      header: detailsText(b.header),
    })
    const trxIndex = new Map<string, number>()
    for (const t of batch.transactions) {
      const range = ranges.trx.get(t.id)
      trxIndex.set(t.id, t.blockIndex)
      s.insertTrx.run(
        t.blockNum,
        t.blockIndex,
        t.id,
        trxIdKey(t.id),
        t.status,
        t.cpuUsageUs,
        t.netUsageWords,
        t.scheduled ? 1 : 0,
        range?.firstSeq ?? null,
        range?.count ?? 0,
        detailsText(t.details),
      )
    }
    for (const a of batch.actions) insertAction(a, trxIndex.get(a.trxId) ?? -1)
    if (cursor.applied.length === 0) failpoint?.('between-statements', writtenBlocks(write))
    for (const r of batch.rows) {
      const pk = pkText(r.primaryKey)
      const firstBlock = s.closeRow.get(b.num, r.code, r.table, r.scope, pk) as number | undefined
      const value = r.value === undefined ? null : bufferView(r.value)
      s.insertRow.run(r.code, r.table, r.scope, pk, b.num, r.payer, value, firstBlock ?? b.num)
    }
    runSync(writeVersionChanges(sql, b.num, batch))
    cursor.head = { blockNum: b.num, blockId: b.id }
    cursor.applied.push({ num: b.num, id: b.id })
  }

  // Writes run as IMMEDIATE transactions: they read before writing, and a deferred one would fail
  // at once (SQLITE_BUSY, no busy wait) when another process (`antler keys`) committed in between.
  const applyMany = db.transaction((batches: readonly BlockBatch[], lib: number) => {
    const cursor = startWrite()
    for (const batch of batches) apply(batch, cursor, batches)
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
