import type pg from 'pg'
import type { BlockRef } from '../../antelope/index.ts'
import { StoreIrreversibleUndoError, StoreLinkError } from '../errors.ts'
import { INTEGRITY_CHECKS } from '../integrity-checks.ts'
import { VERSIONED_TABLES } from '../versioned-tables.ts'
import type { Store } from '../port.ts'
import {
  LATEST_TRANSACTION_RECORD,
  RECORD_FORKED_TRANSACTIONS,
  ROW_CHANGES_OF_BLOCK,
  TRANSACTIONS_BY_ID_PREFIX,
  TRANSACTION_RECORDS,
  numbered,
} from '../shared-sql.ts'
import {
  TRX_ID_OF_ACTION,
  actionFromRow,
  rowChangeFromRow,
  stepFromRow,
  type StepRow,
  authText,
  detailsText,
  prefixUpperBound,
  ramText,
  sequenceRanges,
  transactionFromRow,
  trxIdKey,
  trxIdKeyRange,
} from '../row-mapping.ts'
import { postingChunks, truncateChunk } from '../search/postings.ts'
import { searchPostings } from '../search/query.ts'
import { chunkFromRow, createPostgresPostingSource, type PostingRow } from './postgres-postings.ts'
import type { BlockBatch, StepType } from '../types.ts'
import { libMoves, writeSteps } from '../write-steps.ts'
import { failpoint, writtenBlocks } from '../failpoints.ts'
import { PARTITIONED_TABLES, partitionDdl } from './schema.ts'
import { readOnlyStore, type OpenStoreOptions } from '../read-only.ts'
import { openPostgresPool } from './open-pool.ts'
import { createPostgresKeys } from './postgres-keys.ts'
import { insertChunks, insertColumns, type Columns, type Queryable } from './column-insert.ts'
import { createPlannerStatistics } from './planner-statistics.ts'
import { createPostgresSnapshotReader, meta, pkText, position } from './postgres-readers.ts'
import { createPostgresBatchReaders } from './postgres-batch-readers.ts'
import { keepUndoneBlocks, readStepPayloads, setLibAndPrune } from './postgres-block-content.ts'

/**
 * The steps of a write, in order (parameters: types, block numbers, block ids). An `apply` step is
 * recorded as `redo` when the same block id was undone before, else `new` (INSERT_APPLY_STEP's rule).
 */
const INSERT_STEPS = `INSERT INTO steps (type, block_num, block_id)
  SELECT CASE WHEN s.type <> 'apply' THEN s.type WHEN EXISTS (SELECT 1 FROM steps u WHERE u.block_id = s.id AND u.type = 'undo') THEN 'redo' ELSE 'new' END, s.num, s.id
  FROM unnest($1::text[], $2::bigint[], $3::text[]) WITH ORDINALITY AS s(type, num, id, ord) ORDER BY s.ord`

/**
 * The production store on PostgreSQL. One writer (the indexer) applies each block in one
 * transaction and announces new steps with NOTIFY `antler_steps`; any number of readers share it,
 * read-only ones on connections that refuse writes (open-pool.ts).
 */
export async function openPostgresStore(url: string, options: OpenStoreOptions = {}): Promise<Store> {
  const pool = await openPostgresPool(url, options.readOnly ?? false)
  const partitions = new Set<string>()
  const statistics = createPlannerStatistics(pool)
  /** insertColumns for the tables ingest grows, counted for their planner statistics. */
  const insertGrowing = (c: pg.PoolClient, table: string, columns: Columns) => {
    statistics.wrote(table, columns[0][1].length)
    return insertColumns(c, table, columns)
  }

  const setMeta = (q: Queryable, key: string, value: string) =>
    q.query('INSERT INTO meta VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value', [key, value])
  const step = (q: Queryable, type: StepType, num: number, id: string) =>
    q.query('INSERT INTO steps (type, block_num, block_id) VALUES ($1, $2, $3)', [type, num, id])

  /** Runs `fn` in one transaction on one client (`begin` names its kind), rolled back if it throws. */
  async function inTransaction<T>(fn: (client: pg.PoolClient) => Promise<T>, begin = 'BEGIN'): Promise<T> {
    const client = await pool.connect()
    try {
      await client.query(begin)
      const result = await fn(client)
      await client.query('COMMIT')
      return result
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined)
      throw error
    } finally {
      client.release()
    }
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
      if (head && (b.num !== head.blockNum + 1 || b.previous !== head.blockId))
        throw StoreLinkError({ blockNum: b.num, previous: b.previous, head: head.blockNum, headId: head.blockId })
      head = { blockNum: b.num, blockId: b.id }
    }
    for (const { block: b } of batches) {
      for (const table of PARTITIONED_TABLES) {
        const { name, ddl } = partitionDdl(table, b.num)
        if (!partitions.has(name)) {
          await c.query(ddl)
          partitions.add(name)
        }
      }
    }
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
    failpoint?.('between-statements', writtenBlocks(batches))
    await writeRowVersions(c, batches)
    for (const { block: b, abis, permissions, links } of batches) {
      // Few rows, but read by account at any height: their statistics must not wait for autovacuum either.
      statistics.wrote('abi_versions', abis.length)
      statistics.wrote('permission_versions', permissions.length)
      statistics.wrote(
        'key_versions',
        permissions.reduce((n, p) => n + (p.removed ? 0 : p.keys.length), 0),
      )
      statistics.wrote('link_versions', links.length)
      for (const x of abis) {
        await c.query('UPDATE abi_versions SET valid_to = $1 WHERE account = $2 AND valid_to IS NULL', [
          b.num,
          x.account,
        ])
        await c.query('INSERT INTO abi_versions VALUES ($1, $2, NULL, $3)', [x.account, b.num, Buffer.from(x.abi)])
      }
      for (const p of permissions) {
        await c.query(
          'UPDATE permission_versions SET valid_to = $1 WHERE owner = $2 AND name = $3 AND valid_to IS NULL',
          [b.num, p.owner, p.name],
        )
        await c.query('INSERT INTO permission_versions VALUES ($1, $2, $3, NULL, $4, $5, $6, $7, $8)', [
          p.owner,
          p.name,
          b.num,
          p.parent,
          p.threshold,
          JSON.stringify(p.keys),
          JSON.stringify(p.accounts),
          p.removed,
        ])
        await c.query(
          'UPDATE key_versions SET valid_to = $1 WHERE owner = $2 AND permission = $3 AND valid_to IS NULL',
          [b.num, p.owner, p.name],
        )
        if (!p.removed)
          for (const k of p.keys)
            await c.query('INSERT INTO key_versions VALUES ($1, $2, $3, $4, NULL) ON CONFLICT DO NOTHING', [
              k.key,
              p.owner,
              p.name,
              b.num,
            ])
      }
      for (const l of links) {
        await c.query(
          'UPDATE link_versions SET valid_to = $1 WHERE account = $2 AND code = $3 AND type = $4 AND valid_to IS NULL',
          [b.num, l.account, l.code, l.messageType],
        )
        await c.query('INSERT INTO link_versions VALUES ($1, $2, $3, $4, NULL, $5)', [
          l.account,
          l.code,
          l.messageType,
          b.num,
          l.requiredPermission ?? null,
        ])
      }
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
    await setMeta(c, 'head', `${last.num}:${last.id}`)
    if (currentLib > previousLib) await setLibAndPrune(c, currentLib)
    await c.query("SELECT pg_notify('antler_steps', $1)", [String(last.num)])
  }

  /**
   * Row versions of a write: each pre-write current version of a changed key is closed at the key's
   * first change, and a key changed again within the write gets its earlier versions closed here.
   * Every version keeps its key's first block: the closed version's (RETURNING), or, for a key new
   * to the store, the block of its first change in the write.
   */
  async function writeRowVersions(c: pg.PoolClient, batches: readonly BlockBatch[]): Promise<void> {
    const versions: {
      key: string
      code: string
      tbl: string
      scope: string
      pk: string
      blockNum: number
      validTo: number | null
      payer: string
      value: Buffer | null
    }[] = []
    const latest = new Map<string, number>()
    const firstChanges: (typeof versions)[number][] = []
    for (const { block: b, rows } of batches) {
      for (const r of rows) {
        const pk = pkText(r.primaryKey)
        const key = `${r.code}\u0000${r.table}\u0000${r.scope}\u0000${pk}`
        const v = {
          key,
          code: r.code,
          tbl: r.table,
          scope: r.scope,
          pk,
          blockNum: b.num,
          validTo: null,
          payer: r.payer,
          value: r.value === undefined ? null : Buffer.from(r.value),
        }
        const previous = latest.get(key)
        if (previous === undefined) firstChanges.push(v)
        else versions[previous].validTo = b.num
        latest.set(key, versions.length)
        versions.push(v)
      }
    }
    if (versions.length === 0) return
    const f = firstChanges
    const closed = await c.query<[string, string | null]>({
      text: `UPDATE row_versions v SET valid_to = k.block_num FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[]) WITH ORDINALITY AS k(code, tbl, scope, pk, block_num, i)
        WHERE v.code = k.code AND v.tbl = k.tbl AND v.scope = k.scope AND v.pk = k.pk AND v.valid_to IS NULL RETURNING k.i, v.first_block`,
      values: [
        f.map((x) => x.code),
        f.map((x) => x.tbl),
        f.map((x) => x.scope),
        f.map((x) => x.pk),
        f.map((x) => x.blockNum),
      ],
      rowMode: 'array',
    })
    const firstBlock = new Map<string, number>(f.map((x) => [x.key, x.blockNum]))
    for (const [i, first] of closed.rows) if (first !== null) firstBlock.set(f[Number(i) - 1].key, Number(first))
    const v = versions
    await insertGrowing(c, 'row_versions', [
      ['text', v.map((x) => x.code)],
      ['text', v.map((x) => x.tbl)],
      ['text', v.map((x) => x.scope)],
      ['text', v.map((x) => x.pk)],
      ['bigint', v.map((x) => x.blockNum)],
      ['bigint', v.map((x) => x.validTo)],
      ['text', v.map((x) => x.payer)],
      ['bytea', v.map((x) => x.value)],
      ['bigint', v.map((x) => firstBlock.get(x.key))],
    ])
  }

  async function applyBlocks(batches: readonly BlockBatch[], lib: number): Promise<void> {
    await inTransaction(async (c) => {
      await applyBatches(c, batches, lib)
      const chunks = postingChunks(batches)
      statistics.wrote('postings', chunks.length)
      await insertChunks(c, chunks)
      failpoint?.('before-commit', writtenBlocks(batches))
    })
    failpoint?.('after-commit', writtenBlocks(batches))
    await statistics.refresh()
  }

  /** Undoes blocks from `blockNum` up; returns the head it undid (undefined: nothing to undo). */
  async function undoFrom(c: pg.PoolClient, blockNum: number): Promise<number | undefined> {
    const lib = Number((await meta(c, 'lib')) ?? 0)
    if (blockNum <= lib) throw StoreIrreversibleUndoError({ blockNum, lib })
    const undone = (
      await c.query<{ num: string; id: string }>('SELECT num, id FROM blocks WHERE num >= $1 ORDER BY num DESC', [
        blockNum,
      ])
    ).rows
    if (undone.length === 0) return undefined
    await keepUndoneBlocks(
      c,
      undone.map((r) => r.id),
    )
    const cut = (
      await c.query<{ seq: string | null }>('SELECT MIN(first_seq) AS seq FROM blocks WHERE num >= $1', [blockNum])
    ).rows[0].seq
    if (cut !== null) {
      await c.query('DELETE FROM actions WHERE global_seq >= $1 AND block_num >= $2', [cut, blockNum])
      const cutChunks = (
        await c.query<PostingRow>(
          'DELETE FROM postings WHERE last_seq >= $1 RETURNING term_key, last_seq, first_seq, entries',
          [cut],
        )
      ).rows
      const kept = cutChunks.flatMap((row) => truncateChunk(chunkFromRow(row), Number(cut)) ?? [])
      await insertChunks(c, kept)
    }
    await c.query(numbered(RECORD_FORKED_TRANSACTIONS), [blockNum])
    failpoint?.('undo-between-statements', { first: blockNum, last: Number(undone[0].num) })
    const keys = (
      await c.query<{ code: string; tbl: string; scope: string; pk: string }>(
        'SELECT DISTINCT code, tbl, scope, pk FROM row_versions WHERE block_num >= $1',
        [blockNum],
      )
    ).rows
    if (keys.length) {
      await c.query(
        // Only a key's last version below the cut can have been closed at or after it (sqlite-store.ts reopenRow).
        `UPDATE row_versions v SET valid_to = NULL FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS k(code, tbl, scope, pk)
         WHERE v.code = k.code AND v.tbl = k.tbl AND v.scope = k.scope AND v.pk = k.pk AND v.valid_to >= $1 AND v.block_num =
           (SELECT max(c.block_num) FROM row_versions c WHERE c.code = k.code AND c.tbl = k.tbl AND c.scope = k.scope AND c.pk = k.pk AND c.block_num < $1)`,
        [blockNum, keys.map((k) => k.code), keys.map((k) => k.tbl), keys.map((k) => k.scope), keys.map((k) => k.pk)],
      )
    }
    await c.query('DELETE FROM row_versions WHERE block_num >= $1', [blockNum])
    for (const table of VERSIONED_TABLES) {
      await c.query(`DELETE FROM ${table} WHERE block_num >= $1`, [blockNum])
      await c.query(`UPDATE ${table} SET valid_to = NULL WHERE valid_to >= $1`, [blockNum])
    }
    for (const table of ['blocks WHERE num', 'transactions WHERE block_num'])
      await c.query(`DELETE FROM ${table} >= $1`, [blockNum])
    for (const row of undone) await step(c, 'undo', Number(row.num), row.id)
    const head = (
      await c.query<{ num: string; id: string }>('SELECT num, id FROM blocks WHERE num = $1', [blockNum - 1])
    ).rows[0]
    if (head) await setMeta(c, 'head', `${head.num}:${head.id}`)
    else await c.query("DELETE FROM meta WHERE key = 'head'")
    await c.query("SELECT pg_notify('antler_steps', $1)", [String(blockNum)])
    failpoint?.('undo-before-commit', { first: blockNum, last: Number(undone[0].num) })
    return Number(undone[0].num)
  }

  const postingSource = createPostgresPostingSource(pool)

  const store: Store = {
    ...createPostgresKeys(pool),
    ...createPostgresSnapshotReader(pool),
    ...createPostgresBatchReaders(pool),
    snapshot: (read) =>
      inTransaction(
        (client) => read(createPostgresSnapshotReader(client)),
        'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
      ),
    async reversibleBlocks(): Promise<BlockRef[]> {
      const lib = Number((await meta(pool, 'lib')) ?? 0)
      return (
        await pool.query<{ num: string; id: string }>('SELECT num, id FROM blocks WHERE num > $1 ORDER BY num', [lib])
      ).rows.map((r) => ({ blockNum: Number(r.num), blockId: r.id }))
    },
    applyBlock: (batch, lib) => applyBlocks([batch], lib),
    applyBlocks,
    async undoFrom(blockNum) {
      const undoneHead = await inTransaction((c) => undoFrom(c, blockNum))
      if (undoneHead !== undefined) failpoint?.('undo-after-commit', { first: blockNum, last: undoneHead })
    },
    async transaction(id) {
      const r = (await pool.query(numbered(LATEST_TRANSACTION_RECORD), [trxIdKey(id), id])).rows[0]
      return r && transactionFromRow(r)
    },
    async transactionsByIdPrefix(prefix, limit) {
      if (!/^[0-9a-f]{1,64}$/.test(prefix)) return []
      const rows = await pool.query(numbered(TRANSACTIONS_BY_ID_PREFIX), [
        ...trxIdKeyRange(prefix),
        prefix,
        prefixUpperBound(prefix),
        limit,
      ])
      return rows.rows.map(transactionFromRow)
    },
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
      const rows = await pool.query(
        // One index probe per sequence (LIMIT keeps the planner from turning it into a join), whatever it guesses of
        // the array.
        `SELECT a.*, ${TRX_ID_OF_ACTION} FROM unnest($1::bigint[]) AS s(seq) JOIN LATERAL (SELECT * FROM actions WHERE global_seq = s.seq LIMIT 1) a ON true`,
        [seqs],
      )
      const bySeq = new Map(rows.rows.map((r) => [Number(r.global_seq), actionFromRow(r)]))
      return seqs.flatMap((seq) => bySeq.get(seq) ?? [])
    },
    async firstSeqFromBlock(blockNum) {
      const r = (
        await pool.query(
          'SELECT first_seq FROM blocks WHERE num >= $1 AND first_seq IS NOT NULL ORDER BY num LIMIT 1',
          [blockNum],
        )
      ).rows[0]
      return r ? Number(r.first_seq) : undefined
    },
    async stepsAfter(seq, limit) {
      return (
        await pool.query<StepRow>(
          'SELECT seq, type, block_num, block_id FROM steps WHERE seq > $1 ORDER BY seq LIMIT $2',
          [seq, limit],
        )
      ).rows.map(stepFromRow)
    },
    async stepsOfBlock(blockId) {
      return (
        await pool.query<StepRow>('SELECT seq, type, block_num, block_id FROM steps WHERE block_id = $1 ORDER BY seq', [
          blockId,
        ])
      ).rows.map(stepFromRow)
    },
    async stepPayloads(steps) {
      return steps.length === 0
        ? []
        : inTransaction((c) => readStepPayloads(c, steps), 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
    },
    async transactionHistory(id) {
      const records = (await pool.query(numbered(TRANSACTION_RECORDS), [trxIdKey(id), id])).rows.map(transactionFromRow)
      const forked = (
        await pool.query(
          'SELECT block_num, block_id FROM forked_transactions WHERE id = $1 ORDER BY block_num, block_id',
          [id],
        )
      ).rows
      return {
        records,
        forkedOut: forked.map((r) => ({ blockNum: Number(r.block_num), blockId: r.block_id as string })),
      }
    },
    async rowChanges(blockNum) {
      return (await pool.query(numbered(ROW_CHANGES_OF_BLOCK), [blockNum])).rows.map(rowChangeFromRow)
    },
    async integrityFindings() {
      const findings: string[] = []
      for (const check of INTEGRITY_CHECKS) findings.push(...(await pool.query(check.sql)).rows.map(check.finding))
      return findings
    },
    async close() {
      if (!pool.ended) await pool.end()
    },
  }
  return options.readOnly ? readOnlyStore(store) : store
}
