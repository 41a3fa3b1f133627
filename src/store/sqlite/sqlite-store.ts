import type { BlockRef } from '../../antelope/index.ts'
import { StoreIrreversibleUndoError, StoreLinkError } from '../errors.ts'
import type { Store } from '../port.ts'
import {
  INSERT_APPLY_STEP,
  LATEST_TRANSACTION_RECORD,
  RECORD_FORKED_TRANSACTIONS,
  ROW_CHANGES_OF_BLOCK,
  TRANSACTIONS_BY_ID_PREFIX,
  TRANSACTION_RECORDS,
} from '../shared-sql.ts'
import {
  TRX_ID_OF_ACTION,
  actionFromRow,
  rowChangeFromRow,
  stepFromRow,
  type StepRow,
  authText,
  blockByTimeClause,
  detailsText,
  blockFromRow,
  prefixUpperBound,
  ramText,
  sequenceRanges,
  transactionFromRow,
  trxIdKey,
  trxIdKeyRange,
} from '../row-mapping.ts'
import { postingChunks, truncateChunk } from '../search/postings.ts'
import { searchPostings } from '../search/query.ts'
import { chunkFromRow, createSqlitePostingSource, type PostingRow } from './sqlite-postings.ts'
import type { ActionRecord, BlockBatch, Step, StepType, StorePosition, TransactionRecord } from '../types.ts'
import { writeSteps } from '../write-steps.ts'
import { failpoint, writtenBlocks } from '../failpoints.ts'
import { startCheckpointer } from './checkpointer.ts'
import { sqliteIntegrityFindings } from './integrity.ts'
import { openSqliteDatabase } from './open-database.ts'
import { createSqliteKeys } from './sqlite-keys.ts'
import { createSqliteStateReader } from './sqlite-readers.ts'
import { createSqliteBlockContent } from './sqlite-block-content.ts'
import { createSqliteBatchReaders } from './sqlite-batch-readers.ts'
import { readOnlyStore, type OpenStoreOptions } from '../read-only.ts'
import { VERSIONED_TABLES } from '../versioned-tables.ts'

const pkText = (pk: bigint) => pk.toString(16).padStart(16, '0')
/** The driver binds Buffers only; a view over the same memory avoids a copy per blob. */
const bufferView = (u: Uint8Array) => Buffer.from(u.buffer, u.byteOffset, u.byteLength)

/**
 * The embedded store: one SQLite file (WAL). Writes are synchronous transactions, so each
 * `applyBlock`/`undoFrom` is atomic on disk; the async signatures match the port. Read-only, it
 * opens an existing file of this schema version, starts no thread and refuses every write.
 */
export function openSqliteStore(path: string, options: OpenStoreOptions = {}): Store {
  const readOnly = options.readOnly ?? false
  const db = openSqliteDatabase(path, readOnly)
  // Checkpoints run on a second thread (checkpointer.ts); the writer's own, every 50,000 pages
  // (200 MB), only bounds the WAL if that thread falls behind. A WAL that grew is cut back to 64 MB.
  const checkpointer = path === ':memory:' || readOnly ? undefined : startCheckpointer(path)
  if (!readOnly) {
    db.pragma(`wal_autocheckpoint = ${checkpointer ? 50000 : 10000}`)
    db.pragma('journal_size_limit = 67108864')
  }

  const s = {
    getMeta: db.prepare('SELECT value FROM meta WHERE key = ?'),
    setMeta: db.prepare('INSERT OR REPLACE INTO meta VALUES (?, ?)'),
    insertBlock: db.prepare(
      'INSERT INTO blocks VALUES (@num, @id, @previous, @ts, @producer, @trx_count, @action_count, @first_seq, @header)',
    ),
    blockByNum: db.prepare('SELECT * FROM blocks WHERE num = ?'),
    blockById: db.prepare('SELECT * FROM blocks WHERE id = ?'),
    blocksAbove: db.prepare('SELECT num, id FROM blocks WHERE num > ? ORDER BY num'),
    blocksFrom: db.prepare('SELECT num, id FROM blocks WHERE num >= ? ORDER BY num DESC'),
    insertTrx: db.prepare('INSERT INTO transactions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'),
    trxById: db.prepare(LATEST_TRANSACTION_RECORD),
    trxByPrefix: db.prepare(TRANSACTIONS_BY_ID_PREFIX),
    insertAction: db.prepare('INSERT INTO actions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'),
    actionsInRange: db.prepare('SELECT * FROM actions WHERE global_seq >= ? AND global_seq < ? ORDER BY global_seq'),
    actionBySeq: db.prepare(`SELECT a.*, ${TRX_ID_OF_ACTION} FROM actions a WHERE a.global_seq = ?`),
    cutSeq: db.prepare('SELECT MIN(first_seq) AS seq FROM blocks WHERE num >= ?'),
    firstSeqFrom: db.prepare(
      'SELECT first_seq FROM blocks WHERE num >= ? AND first_seq IS NOT NULL ORDER BY num LIMIT 1',
    ),
    deleteActionsFrom: db.prepare('DELETE FROM actions WHERE global_seq >= ?'),
    insertPosting: db.prepare('INSERT INTO postings VALUES (?, ?, ?, ?)'),
    postingsFrom: db.prepare('SELECT term_key, last_seq, first_seq, entries FROM postings WHERE last_seq >= ?'),
    deletePosting: db.prepare('DELETE FROM postings WHERE term_key = ? AND last_seq = ?'),
    // Without INDEXED BY the planner takes the primary key and walks every version of the row: a
    // balance rewritten in every block made this the slowest statement of ingest. It returns the
    // closed version's first block, which the new version keeps (a new key's is its own block).
    closeRow: db
      .prepare(
        'UPDATE row_versions INDEXED BY row_versions_head SET valid_to = ? WHERE code = ? AND tbl = ? AND scope = ? AND pk = ? AND valid_to IS NULL RETURNING first_block',
      )
      .pluck(),
    insertRow: db.prepare('INSERT INTO row_versions VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?)'),
    // INDEXED BY: to skip sorting for DISTINCT, the planner would walk the whole table in key order.
    rowKeysFrom: db.prepare(
      'SELECT DISTINCT code, tbl, scope, pk FROM row_versions INDEXED BY row_versions_block WHERE block_num >= ?',
    ),
    // Only a key's last version below the cut can have been closed at or after it: found by one
    // backward seek, not by walking every version of the key (a balance may have millions).
    reopenRow: db.prepare(
      `UPDATE row_versions SET valid_to = NULL WHERE code = @code AND tbl = @tbl AND scope = @scope AND pk = @pk AND valid_to >= @cut AND block_num =
         (SELECT block_num FROM row_versions WHERE code = @code AND tbl = @tbl AND scope = @scope AND pk = @pk AND block_num < @cut ORDER BY block_num DESC LIMIT 1)`,
    ),
    deleteRowsFrom: db.prepare('DELETE FROM row_versions WHERE block_num >= ?'),
    closeAbi: db.prepare('UPDATE abi_versions SET valid_to = ? WHERE account = ? AND valid_to IS NULL'),
    insertAbi: db.prepare('INSERT INTO abi_versions VALUES (?, ?, NULL, ?)'),
    closePermission: db.prepare(
      'UPDATE permission_versions SET valid_to = ? WHERE owner = ? AND name = ? AND valid_to IS NULL',
    ),
    insertPermission: db.prepare('INSERT INTO permission_versions VALUES (?, ?, ?, NULL, ?, ?, ?, ?, ?)'),
    closeKeys: db.prepare(
      'UPDATE key_versions SET valid_to = ? WHERE owner = ? AND permission = ? AND valid_to IS NULL',
    ),
    insertKey: db.prepare('INSERT OR IGNORE INTO key_versions VALUES (?, ?, ?, ?, NULL)'),
    closeLink: db.prepare(
      'UPDATE link_versions SET valid_to = ? WHERE account = ? AND code = ? AND type = ? AND valid_to IS NULL',
    ),
    insertLink: db.prepare('INSERT INTO link_versions VALUES (?, ?, ?, ?, NULL, ?)'),
    insertStep: db.prepare('INSERT INTO steps (type, block_num, block_id) VALUES (?, ?, ?)'),
    insertApplyStep: db.prepare(INSERT_APPLY_STEP),
    recordForked: db.prepare(RECORD_FORKED_TRANSACTIONS),
    rowChanges: db.prepare(ROW_CHANGES_OF_BLOCK),
    trxHistory: db.prepare(TRANSACTION_RECORDS),
    forkedOut: db.prepare(
      'SELECT block_num, block_id FROM forked_transactions WHERE id = ? ORDER BY block_num, block_id',
    ),
    stepsOfBlock: db.prepare('SELECT seq, type, block_num, block_id FROM steps WHERE block_id = ? ORDER BY seq'),
    stepsAfter: db.prepare('SELECT seq, type, block_num, block_id FROM steps WHERE seq > ? ORDER BY seq LIMIT ?'),
  }
  const content = createSqliteBlockContent(db)
  const undoStatements = VERSIONED_TABLES.flatMap((t) => [
    db.prepare(`DELETE FROM ${t} WHERE block_num >= ?`),
    db.prepare(`UPDATE ${t} SET valid_to = NULL WHERE valid_to >= ?`),
  ])
  const deleteFrom = ['blocks WHERE num', 'transactions WHERE block_num'].map((w) =>
    db.prepare(`DELETE FROM ${w} >= ?`),
  )

  const postingSource = createSqlitePostingSource(db)

  const meta = (key: string) => (s.getMeta.get(key) as { value: string } | undefined)?.value
  const step = (type: StepType, num: number, id: string) => s.insertStep.run(type, num, id)

  const position = (): StorePosition | undefined => {
    const head = meta('head')
    if (!head) return undefined
    const [num, id] = head.split(':')
    return { head: { blockNum: Number(num), blockId: id }, lib: Number(meta('lib') ?? 0) }
  }

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

  const startWrite = (): WriteCursor => {
    const pos = position()
    const lib = pos?.lib ?? 0
    return {
      head: pos?.head,
      startLib: lib,
      reversible: s.blocksAbove.all(lib) as { num: number; id: string }[],
      applied: [],
    }
  }

  /** Records the write's steps (writeSteps) and its new head and LIB. */
  const finishWrite = (cursor: WriteCursor, lib: number) => {
    const planned = writeSteps(cursor.applied, lib, cursor.startLib, cursor.reversible)
    for (const x of planned.steps) {
      if (x.type === 'apply') s.insertApplyStep.run(x.id, x.num, x.id)
      else step(x.type, x.num, x.id)
    }
    if (cursor.head) s.setMeta.run('head', `${cursor.head.blockNum}:${cursor.head.blockId}`)
    if (planned.lib > cursor.startLib) {
      s.setMeta.run('lib', String(planned.lib))
      content.prune(planned.lib)
    }
  }

  /** Writes one block of `write` (all of it is needed only to name it at a failpoint). */
  const apply = (batch: BlockBatch, cursor: WriteCursor, write: readonly BlockBatch[]) => {
    const b = batch.block
    const head = cursor.head
    if (head && (b.num !== head.blockNum + 1 || b.previous !== head.blockId))
      throw StoreLinkError({ blockNum: b.num, previous: b.previous, head: head.blockNum, headId: head.blockId })
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
      s.insertRow.run(
        r.code,
        r.table,
        r.scope,
        pk,
        b.num,
        r.payer,
        r.value === undefined ? null : bufferView(r.value),
        firstBlock ?? b.num,
      )
    }
    for (const a of batch.abis) {
      s.closeAbi.run(b.num, a.account)
      s.insertAbi.run(a.account, b.num, Buffer.from(a.abi))
    }
    for (const p of batch.permissions) {
      s.closePermission.run(b.num, p.owner, p.name)
      s.insertPermission.run(
        p.owner,
        p.name,
        b.num,
        p.parent,
        p.threshold,
        JSON.stringify(p.keys),
        JSON.stringify(p.accounts),
        p.removed ? 1 : 0,
      )
      s.closeKeys.run(b.num, p.owner, p.name)
      if (!p.removed) for (const k of p.keys) s.insertKey.run(k.key, p.owner, p.name, b.num)
    }
    for (const l of batch.links) {
      s.closeLink.run(b.num, l.account, l.code, l.messageType)
      s.insertLink.run(l.account, l.code, l.messageType, b.num, l.requiredPermission ?? null)
    }
    cursor.head = { blockNum: b.num, blockId: b.id }
    cursor.applied.push({ num: b.num, id: b.id })
  }

  const insertPostings = (batches: readonly BlockBatch[]) => {
    for (const c of postingChunks(batches)) s.insertPosting.run(c.termKey, c.lastSeq, c.firstSeq, bufferView(c.entries))
  }

  // Writes run as IMMEDIATE transactions: they read before writing, and a deferred one would fail
  // at once (SQLITE_BUSY, no busy wait) when another process (`antler keys`) committed in between.
  const applyMany = db.transaction((batches: readonly BlockBatch[], lib: number) => {
    const cursor = startWrite()
    for (const batch of batches) apply(batch, cursor, batches)
    finishWrite(cursor, lib)
    insertPostings(batches)
    failpoint?.('before-commit', writtenBlocks(batches))
  })

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

  const undo = db.transaction((blockNum: number) => {
    const lib = Number(meta('lib') ?? 0)
    if (blockNum <= lib) throw StoreIrreversibleUndoError({ blockNum, lib })
    const undone = s.blocksFrom.all(blockNum) as { num: number; id: string }[]
    if (undone.length === 0) return
    content.keepUndone(undone.map((b) => b.id))
    const cut = (s.cutSeq.get(blockNum) as { seq: number | null }).seq
    if (cut !== null) {
      s.deleteActionsFrom.run(cut)
      for (const row of s.postingsFrom.all(cut) as PostingRow[]) {
        s.deletePosting.run(row.term_key, row.last_seq)
        const kept = truncateChunk(chunkFromRow(row), cut)
        if (kept) s.insertPosting.run(kept.termKey, kept.lastSeq, kept.firstSeq, Buffer.from(kept.entries))
      }
    }
    s.recordForked.run(blockNum)
    failpoint?.('undo-between-statements', { first: blockNum, last: undone[0].num })
    for (const k of s.rowKeysFrom.all(blockNum) as { code: string; tbl: string; scope: string; pk: string }[])
      s.reopenRow.run({ ...k, cut: blockNum })
    s.deleteRowsFrom.run(blockNum)
    for (const stmt of undoStatements) stmt.run(blockNum)
    for (const stmt of deleteFrom) stmt.run(blockNum)
    for (const row of undone) step('undo', row.num, row.id)
    const head = s.blockByNum.get(blockNum - 1) as { num: number; id: string } | undefined
    if (head) s.setMeta.run('head', `${head.num}:${head.id}`)
    else db.prepare("DELETE FROM meta WHERE key = 'head'").run()
    failpoint?.('undo-before-commit', { first: blockNum, last: undone[0].num })
    return undone[0].num
  })

  const begin = db.prepare('BEGIN')
  let openSnapshots = 0
  const commit = db.prepare('COMMIT')
  const store: Store = {
    ...createSqliteKeys(db),
    ...createSqliteStateReader(db, position),
    ...createSqliteBatchReaders(db),
    async snapshot(read) {
      // A read transaction: every statement of `read` sees the same committed state. `read` awaits
      // only this store's methods, which run synchronously, so it normally ends before any other
      // callback can use the connection. Should another snapshot start meanwhile, it joins the
      // open one, which commits when the last of them ends (never under a reader still reading).
      if (openSnapshots === 0 && db.inTransaction) return read(store)
      if (openSnapshots === 0) begin.run()
      openSnapshots++
      try {
        return await read(store)
      } finally {
        openSnapshots--
        if (openSnapshots === 0 && db.inTransaction) commit.run()
      }
    },
    async position() {
      return position()
    },
    async reversibleBlocks(): Promise<BlockRef[]> {
      const lib = Number(meta('lib') ?? 0)
      return (s.blocksAbove.all(lib) as { num: number; id: string }[]).map((r) => ({ blockNum: r.num, blockId: r.id }))
    },
    async applyBlock(batch, lib) {
      applyMany.immediate([batch], lib)
      failpoint?.('after-commit', writtenBlocks([batch]))
    },
    async applyBlocks(batches, lib) {
      applyMany.immediate(batches, lib)
      failpoint?.('after-commit', writtenBlocks(batches))
    },
    async undoFrom(blockNum) {
      const undoneHead = undo.immediate(blockNum)
      if (undoneHead !== undefined) failpoint?.('undo-after-commit', { first: blockNum, last: undoneHead })
    },
    async blockByNum(num) {
      const row = s.blockByNum.get(num) as Record<string, unknown> | undefined
      return row && blockFromRow(row)
    },
    async blockById(id) {
      const row = s.blockById.get(id) as Record<string, unknown> | undefined
      return row && blockFromRow(row)
    },
    async transaction(id): Promise<TransactionRecord | undefined> {
      const row = s.trxById.get(trxIdKey(id), id) as Record<string, unknown> | undefined
      return row && transactionFromRow(row)
    },
    async blockByTime({ timeMs, comparator }) {
      const row = db.prepare(`SELECT * FROM blocks WHERE ${blockByTimeClause(comparator)} LIMIT 1`).get(timeMs) as
        Record<string, unknown> | undefined
      return row && blockFromRow(row)
    },
    async transactionsByIdPrefix(prefix, limit) {
      if (!/^[0-9a-f]{1,64}$/.test(prefix)) return []
      const rows = s.trxByPrefix.all(...trxIdKeyRange(prefix), prefix, prefixUpperBound(prefix), limit) as Record<
        string,
        unknown
      >[]
      return rows.map(transactionFromRow)
    },
    async actionsOfTransaction(id) {
      const trx = s.trxById.get(trxIdKey(id), id) as { first_seq: number | null; action_count: number } | undefined
      if (!trx || trx.first_seq === null) return []
      return (s.actionsInRange.all(trx.first_seq, trx.first_seq + trx.action_count) as Record<string, unknown>[]).map(
        (r) => actionFromRow(r, id),
      )
    },
    async searchActions({ query, ...range }) {
      return searchPostings(postingSource, query, range)
    },
    async actionsBySeq(seqs) {
      return seqs.flatMap((seq) => {
        const row = s.actionBySeq.get(seq) as Record<string, unknown> | undefined
        return row ? [actionFromRow(row)] : []
      })
    },
    async firstSeqFromBlock(blockNum) {
      return (s.firstSeqFrom.get(blockNum) as { first_seq: number } | undefined)?.first_seq
    },
    async transactionHistory(id) {
      return {
        records: (s.trxHistory.all(trxIdKey(id), id) as Record<string, unknown>[]).map(transactionFromRow),
        forkedOut: (s.forkedOut.all(id) as { block_num: number; block_id: string }[]).map((r) => ({
          blockNum: r.block_num,
          blockId: r.block_id,
        })),
      }
    },
    async rowChanges(blockNum) {
      return (s.rowChanges.all(blockNum) as Record<string, unknown>[]).map(rowChangeFromRow)
    },
    async stepsAfter(seq, limit): Promise<Step[]> {
      return (s.stepsAfter.all(seq, limit) as StepRow[]).map(stepFromRow)
    },
    async stepsOfBlock(blockId) {
      return (s.stepsOfBlock.all(blockId) as StepRow[]).map(stepFromRow)
    },
    stepPayloads: content.stepPayloads,
    async integrityFindings() {
      return sqliteIntegrityFindings(db)
    },
    async close() {
      await checkpointer?.stop()
      if (db.open) db.close()
    },
  }
  return readOnly ? readOnlyStore(store) : store
}
