import type pg from 'pg'
import { failpoint, writtenBlocks } from '../failpoints.ts'
import type { StoreWriter } from '../port.ts'
import { authText, detailsText, ramText, sequenceRanges, trxIdKey } from '../row-mapping.ts'
import { postingChunks } from '../search/postings.ts'
import { SET_META } from '../shared-sql.ts'
import { runAsync } from '../sql-routine.ts'
import type { BlockBatch } from '../types.ts'
import { undoCommitted, undoFrom } from '../undo.ts'
import { writeVersionChanges } from '../version-writes.ts'
import { assertLinks, libMoves, writeSteps } from '../write-steps.ts'
import { insertChunks, insertColumns, type Columns } from './column-insert.ts'
import { announceSteps, inTransaction } from './in-transaction.ts'
import type { PlannerStatistics } from './planner-statistics.ts'
import { setLibAndPrune } from './postgres-block-content.ts'
import { meta, position } from './postgres-readers.ts'
import { writeRowVersions } from './postgres-row-versions.ts'
import { createPostgresRunner } from './postgres-runner.ts'
import { createPostgresUndo } from './postgres-undo.ts'
import { PARTITIONED_TABLES, partitionDdl } from './schema.ts'

/**
 * The steps of a write, in order (parameters: types, block numbers, block ids). An `apply` step is
 * recorded as `redo` when the same block id was undone before, else `new` (INSERT_APPLY_STEP's rule).
 */
const INSERT_STEPS = `INSERT INTO steps (type, block_num, block_id)
  SELECT CASE WHEN s.type <> 'apply' THEN s.type WHEN EXISTS (SELECT 1 FROM steps u WHERE u.block_id = s.id AND u.type = 'undo') THEN 'redo' ELSE 'new' END, s.num, s.id
  FROM unnest($1::text[], $2::bigint[], $3::text[]) WITH ORDINALITY AS s(type, num, id, ord) ORDER BY s.ord`

/** The writes of a PostgreSQL store, each one transaction that announces its steps (NOTIFY `antler_steps`). */
export function createPostgresWriter(
  pool: pg.Pool,
  statistics: PlannerStatistics,
): Pick<StoreWriter, 'applyBlocks' | 'undoFrom'> {
  /** The partitions known to exist (created on the first write into each). */
  const partitions = new Set<string>()
  /** insertColumns for the tables ingest grows, counted for their planner statistics. */
  const insertGrowing = (c: pg.PoolClient, table: string, columns: Columns) => {
    statistics.wrote(table, columns[0][1].length)
    return insertColumns(c, table, columns)
  }

  async function createPartitions(c: pg.PoolClient, batches: readonly BlockBatch[]): Promise<void> {
    for (const { block: b } of batches) {
      for (const table of PARTITIONED_TABLES) {
        const { name, ddl } = partitionDdl(table, b.num)
        if (!partitions.has(name)) {
          await c.query(ddl)
          partitions.add(name)
        }
      }
    }
  }

  /** The block, transaction and action records of a write: one statement per table. */
  async function insertRecords(c: pg.PoolClient, batches: readonly BlockBatch[]): Promise<void> {
    const blocks = batches.map((batch) => ({ ...batch.block, ranges: sequenceRanges(batch) }))
    await insertGrowing(c, 'blocks', [
      ['bigint', blocks.map((b) => b.num)],
      ['text', blocks.map((b) => b.id)],
      ['text', blocks.map((b) => b.previous)],
      ['bigint', blocks.map((b) => b.timestampMs)],
      ['text', blocks.map((b) => b.producer)],
      ['int', blocks.map((b) => b.transactionCount)],
      ['int', blocks.map((b) => b.actionCount)],
      ['bigint', blocks.map((b) => b.ranges.blockFirstSeq)],
      ['text', blocks.map((b) => detailsText(b.header))],
    ])
    const t = batches.flatMap((batch, i) =>
      batch.transactions.map((x) => ({ ...x, range: blocks[i].ranges.trx.get(x.id) })),
    )
    await insertGrowing(c, 'transactions', [
      ['bigint', t.map((x) => x.blockNum)],
      ['int', t.map((x) => x.blockIndex)],
      ['text', t.map((x) => x.id)],
      ['bigint', t.map((x) => trxIdKey(x.id))],
      ['smallint', t.map((x) => x.status)],
      ['bigint', t.map((x) => x.cpuUsageUs)],
      ['bigint', t.map((x) => x.netUsageWords)],
      ['boolean', t.map((x) => x.scheduled)],
      ['bigint', t.map((x) => x.range?.firstSeq ?? null)],
      ['int', t.map((x) => x.range?.count ?? 0)],
      ['text', t.map((x) => detailsText(x.details))],
    ])
    const a = batches.flatMap((batch) => {
      const trxIndex = new Map(batch.transactions.map((x) => [x.id, x.blockIndex]))
      return batch.actions.map((x) => ({ ...x, trxIndex: trxIndex.get(x.trxId) ?? -1 }))
    })
    await insertGrowing(c, 'actions', [
      ['bigint', a.map((x) => x.globalSequence)],
      ['bigint', a.map((x) => x.blockNum)],
      ['int', a.map((x) => x.trxIndex)],
      ['int', a.map((x) => x.actionOrdinal)],
      ['int', a.map((x) => x.creatorActionOrdinal)],
      ['text', a.map((x) => x.receiver)],
      ['text', a.map((x) => x.account)],
      ['text', a.map((x) => x.name)],
      ['text', a.map((x) => authText(x.authorization))],
      ['bytea', a.map((x) => Buffer.from(x.data))],
      ['bytea', a.map((x) => Buffer.from(x.returnValue))],
      ['text', a.map((x) => x.actDigest)],
      ['numeric', a.map((x) => x.recvSequence.toString())],
      ['text', a.map((x) => ramText(x.ramDeltas))],
      ['text', a.map((x) => detailsText(x.trace))],
    ])
  }

  /**
   * Applies consecutive blocks in one transaction with a fixed number of statements, whatever
   * their count: each table gets one multi-row statement for the whole write (PostgreSQL pays a
   * round trip per statement). The step log is the one block-by-block writes would leave.
   */
  async function applyBatches(c: pg.PoolClient, batches: readonly BlockBatch[], lib: number): Promise<void> {
    if (batches.length === 0) return
    const pos = await position(c)
    let head = pos?.head
    for (const { block: b } of batches) {
      assertLinks(head, b)
      head = { blockNum: b.num, blockId: b.id }
    }
    await createPartitions(c, batches)
    await insertRecords(c, batches)
    failpoint?.('between-statements', writtenBlocks(batches))
    await writeRowVersions(c, batches, (table, columns) => insertGrowing(c, table, columns))
    const sql = createPostgresRunner(c)
    for (const batch of batches) {
      const { abis, permissions, links } = batch
      // Few rows, but read by account at any height: their statistics must not wait for autovacuum either.
      statistics.wrote('abi_versions', abis.length)
      statistics.wrote('permission_versions', permissions.length)
      statistics.wrote(
        'key_versions',
        permissions.reduce((n, p) => n + (p.removed ? 0 : p.keys.length), 0),
      )
      statistics.wrote('link_versions', links.length)
      await runAsync(writeVersionChanges(sql, batch.block.num, batch))
    }
    const previousLib = pos?.lib ?? Number((await meta(c, 'lib')) ?? 0)
    const applied = batches.map((x) => x.block)
    const stored = libMoves(applied, lib, previousLib)
      ? (
          await c.query<{ num: string; id: string }>(
            'SELECT num, id FROM blocks WHERE num > $1 AND num < $2 ORDER BY num',
            [previousLib, applied[0].num],
          )
        ).rows.map((r) => ({ num: Number(r.num), id: r.id }))
      : []
    const { steps, lib: currentLib } = writeSteps(applied, lib, previousLib, stored)
    await c.query(INSERT_STEPS, [steps.map((x) => x.type), steps.map((x) => x.num), steps.map((x) => x.id)])
    const last = applied[applied.length - 1]
    await sql.run(SET_META, ['head', `${last.num}:${last.id}`])
    if (currentLib > previousLib) await setLibAndPrune(c, currentLib)
    await announceSteps(c, last.num)
  }

  return {
    async applyBlocks(batches, lib) {
      await inTransaction(pool, async (c) => {
        await applyBatches(c, batches, lib)
        const chunks = postingChunks(batches)
        statistics.wrote('postings', chunks.length)
        await insertChunks(c, chunks)
        failpoint?.('before-commit', writtenBlocks(batches))
      })
      failpoint?.('after-commit', writtenBlocks(batches))
      await statistics.refresh()
    },
    async undoFrom(blockNum) {
      undoCommitted(blockNum, await inTransaction(pool, (c) => runAsync(undoFrom(createPostgresUndo(c), blockNum))))
    },
  }
}
