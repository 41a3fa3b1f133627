import { createChainIdRecord } from '../chain-id.ts'
import { createCommonReads } from '../common-reads.ts'
import { createHistoryPages } from '../history-pages.ts'
import { createKeyStore } from '../key-store.ts'
import { createPortalStore } from '../portal-store.ts'
import { createWebhookStore } from '../webhook-store.ts'
import { INTEGRITY_CHECKS } from '../integrity-checks.ts'
import type { Store } from '../port.ts'
import { readOnlyStore, type OpenStoreOptions } from '../read-only.ts'
import { TRX_ID_OF_ACTION, actionFromRow, trxIdKey } from '../row-mapping.ts'
import { searchPostings } from '../search/query.ts'
import { LATEST_TRANSACTION_RECORD, numbered } from '../common-sql.ts'
import { READ_SNAPSHOT, inTransaction } from './in-transaction.ts'
import { openDeliveryWritesPool, openPostgresPool, openWebhookWritesPool } from './open-pool.ts'
import { createPlannerStatistics } from './planner-statistics.ts'
import { createPostgresBatchReaders } from './postgres-batch-readers.ts'
import { readStepPayloads } from './postgres-block-content.ts'
import { listenForSteps } from './postgres-listen.ts'
import { createPostgresPostingSource } from './postgres-postings.ts'
import { createPostgresSnapshotReader } from './postgres-readers.ts'
import { postgresRecordsDialect } from './postgres-records.ts'
import { createPostgresExecutor } from './postgres-runner.ts'
import { createPostgresWriter } from './postgres-writes.ts'

/**
 * One index probe per sequence (LIMIT keeps the planner from turning it into a join), whatever it guesses of the
 * array (parameter: sequences).
 */
const ACTIONS_BY_SEQ = `SELECT a.*, ${TRX_ID_OF_ACTION} FROM unnest($1::bigint[]) AS s(seq) JOIN LATERAL (SELECT * FROM actions WHERE global_seq = s.seq LIMIT 1) a ON true`

/**
 * The production store on PostgreSQL. One writer (the indexer) applies each block in one
 * transaction and announces new steps with NOTIFY `antler_steps`; any number of readers share it,
 * read-only ones on connections that refuse writes (open-pool.ts).
 */
export async function openPostgresStore(url: string, options: OpenStoreOptions = {}): Promise<Store> {
  const pool = await openPostgresPool(url, options.readOnly ?? false)
  const webhookWrites = openWebhookWritesPool(url)
  const deliveryWrites = openDeliveryWritesPool(url)
  const writer = createPostgresWriter(pool, createPlannerStatistics(pool))
  const postingSource = createPostgresPostingSource(pool)
  const records = postgresRecordsDialect({ reads: pool, writes: webhookWrites, deliveries: deliveryWrites })
  const onPool = createPostgresExecutor(pool)

  const store: Store = {
    ...createKeyStore(records),
    ...createWebhookStore(records),
    ...createPortalStore(records),
    ...createPostgresSnapshotReader(pool),
    ...createPostgresBatchReaders(pool),
    ...createCommonReads(onPool),
    ...createHistoryPages(onPool),
    ...createChainIdRecord(onPool),
    snapshot: (read) => inTransaction(pool, (client) => read(createPostgresSnapshotReader(client)), READ_SNAPSHOT),
    applyBlock: (batch, lib) => writer.applyBlocks([batch], lib),
    applyBlocks: writer.applyBlocks,
    undoFrom: writer.undoFrom,
    async actionsOfTransaction(id) {
      const trx = (await pool.query(numbered(LATEST_TRANSACTION_RECORD), [trxIdKey(id), id])).rows[0]
      if (!trx || trx.first_seq === null) return []
      const rows = await pool.query(
        'SELECT * FROM actions WHERE global_seq >= $1 AND global_seq < $2 AND block_num = $3 ORDER BY global_seq',
        [trx.first_seq, Number(trx.first_seq) + trx.action_count, trx.block_num],
      )
      return rows.rows.map((r) => actionFromRow(r, id))
    },
    async searchActions({ query, ...range }) {
      return searchPostings(postingSource, query, range)
    },
    async actionsBySeq(seqs) {
      if (seqs.length === 0) return []
      const rows = await pool.query(ACTIONS_BY_SEQ, [seqs])
      const bySeq = new Map(rows.rows.map((r) => [Number(r.global_seq), actionFromRow(r)]))
      return seqs.flatMap((seq) => bySeq.get(seq) ?? [])
    },
    async stepPayloads(steps) {
      return steps.length === 0 ? [] : inTransaction(pool, (c) => readStepPayloads(c, steps), READ_SNAPSHOT)
    },
    async integrityFindings() {
      const findings: string[] = []
      for (const check of INTEGRITY_CHECKS) findings.push(...(await pool.query(check.sql)).rows.map(check.finding))
      return findings
    },
    listenForSteps: (onSteps, onError) => listenForSteps(pool, onSteps, onError),
    async close() {
      if (!webhookWrites.ended) await webhookWrites.end()
      if (!deliveryWrites.ended) await deliveryWrites.end()
      if (!pool.ended) await pool.end()
    },
  }
  return options.readOnly ? readOnlyStore(store) : store
}
