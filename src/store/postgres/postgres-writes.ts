import type pg from 'pg'
import { failpoint, writtenBlocks } from '../failpoints.ts'
import type { StoreWriter } from '../port.ts'
import { blockRows } from '../record-rows.ts'
import { postingChunks } from '../search/postings.ts'
import { SET_META } from '../common-sql.ts'
import { runAsync, type SqlRunner } from '../sql-routine.ts'
import type { BlockBatch } from '../types.ts'

type Row = readonly unknown[]
import { undoCommitted, undoFrom } from '../undo.ts'
import { writeVersionChanges } from '../version-writes.ts'
import { assertLinks, libMoves, writeSteps } from '../write-steps.ts'
import { columnsOf, insertChunks, insertColumns, type Columns } from './column-insert.ts'
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

/** The SQL types of the columns of the tables blockRows fills, in column order. */
const COLUMN_TYPES = {
  blocks: 'bigint text text bigint text int int bigint text'.split(' '),
  transactions: 'bigint int text bigint smallint bigint bigint boolean bigint int text'.split(' '),
  actions: 'bigint bigint int int int text text text text bytea bytea text numeric text text'.split(' '),
}

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

  /** The block, transaction, action and row version records of a write: one statement per table. */
  async function insertRecords(c: pg.PoolClient, sql: SqlRunner, batches: readonly BlockBatch[]): Promise<void> {
    const blocks = columnsOf(COLUMN_TYPES.blocks)
    const transactions = columnsOf(COLUMN_TYPES.transactions)
    const actions = columnsOf(COLUMN_TYPES.actions)
    const rowVersions: Row[] = []
    for (const batch of batches) {
      const rows = blockRows(batch, sql)
      blocks.add(rows.block)
      for (const row of rows.transactions) transactions.add(row)
      for (const row of rows.actions) actions.add(row)
      for (const row of rows.rowVersions) rowVersions.push(row)
    }
    await insertGrowing(c, 'blocks', blocks.columns)
    await insertGrowing(c, 'transactions', transactions.columns)
    await insertGrowing(c, 'actions', actions.columns)
    failpoint?.('between-statements', writtenBlocks(batches))
    await writeRowVersions(c, rowVersions, (columns) => insertGrowing(c, 'row_versions', columns))
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
    const sql = createPostgresRunner(c)
    await insertRecords(c, sql, batches)
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
