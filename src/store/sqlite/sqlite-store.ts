import { createChainIdRecord } from '../chain-id.ts'
import { createCommonReads } from '../common-reads.ts'
import { createHistoryPages } from '../history-pages.ts'
import { createKeyStore } from '../key-store.ts'
import { createPortalStore } from '../portal-store.ts'
import { createWebhookStore } from '../webhook-store.ts'
import { failpoint, writtenBlocks } from '../failpoints.ts'
import type { Store } from '../port.ts'
import { readOnlyStore, type OpenStoreOptions } from '../read-only.ts'
import { TRX_ID_OF_ACTION, actionFromRow, blockFromRow, positionOf, trxIdKey } from '../row-mapping.ts'
import { searchPostings } from '../search/query.ts'
import { GET_META, LATEST_TRANSACTION_RECORD } from '../common-sql.ts'
import type { BlockBatch, StorePosition } from '../types.ts'
import { undoCommitted } from '../undo.ts'
import { startCheckpointer } from './checkpointer.ts'
import { sqliteIntegrityFindings } from './integrity.ts'
import { openSqliteDatabase } from './open-database.ts'
import { createSqliteBatchReaders } from './sqlite-batch-readers.ts'
import { createSqliteBlockContent } from './sqlite-block-content.ts'
import { createSqlitePostingSource } from './sqlite-postings.ts'
import { createSqliteStateReader } from './sqlite-readers.ts'
import { sqliteRecordsDialect } from './sqlite-records.ts'
import { createSqliteExecutor, createSqliteRunner } from './sqlite-runner.ts'
import { createSqliteWriter } from './sqlite-writes.ts'

type DbRow = Record<string, unknown>

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

  const sql = createSqliteRunner(db)
  const connection = createSqliteExecutor(db, sql)
  const records = sqliteRecordsDialect(connection)
  const s = {
    blockByNum: db.prepare('SELECT * FROM blocks WHERE num = ?'),
    trxById: db.prepare(LATEST_TRANSACTION_RECORD),
    actionsInRange: db.prepare('SELECT * FROM actions WHERE global_seq >= ? AND global_seq < ? ORDER BY global_seq'),
    actionBySeq: db.prepare(`SELECT a.*, ${TRX_ID_OF_ACTION} FROM actions a WHERE a.global_seq = ?`),
  }
  const content = createSqliteBlockContent(db, sql)
  const postingSource = createSqlitePostingSource(db)
  const meta = (key: string) => sql.rows<{ value: string }>(GET_META, [key])[0]?.value
  const position = (): StorePosition | undefined => positionOf(meta('head'), meta('lib'))
  const writer = createSqliteWriter(db, sql, content, position)
  const applyBlocks = async (batches: readonly BlockBatch[], lib: number) => {
    writer.applyBlocks(batches, lib)
    failpoint?.('after-commit', writtenBlocks(batches))
  }

  const begin = db.prepare('BEGIN')
  let openSnapshots = 0
  const commit = db.prepare('COMMIT')
  const store: Store = {
    ...createKeyStore(records),
    ...createWebhookStore(records),
    ...createPortalStore(records),
    ...createSqliteStateReader(db, position),
    ...createSqliteBatchReaders(db),
    ...createCommonReads(connection),
    ...createHistoryPages(connection),
    ...createChainIdRecord(connection),
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
    applyBlock: (batch, lib) => applyBlocks([batch], lib),
    applyBlocks,
    async undoFrom(blockNum) {
      undoCommitted(blockNum, writer.undoFrom(blockNum))
    },
    async blockByNum(num) {
      const row = s.blockByNum.get(num) as DbRow | undefined
      return row && blockFromRow(row)
    },
    async actionsOfTransaction(id) {
      const trx = s.trxById.get(trxIdKey(id), id) as { first_seq: number | null; action_count: number } | undefined
      if (!trx || trx.first_seq === null) return []
      return (s.actionsInRange.all(trx.first_seq, trx.first_seq + trx.action_count) as DbRow[]).map((r) =>
        actionFromRow(r, id),
      )
    },
    async searchActions({ query, ...range }) {
      return searchPostings(postingSource, query, range)
    },
    async actionsBySeq(seqs) {
      return seqs.flatMap((seq) => {
        const row = s.actionBySeq.get(seq) as DbRow | undefined
        return row ? [actionFromRow(row)] : []
      })
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
