import { blockFromRow, pkText, u8 } from './row-mapping.ts'
import { rowsOf, type SqlSession } from './sql-routine.ts'
import type { BlockRecord, RowChange } from './types.ts'

/**
 * Filtered pages of row versions and of blocks, for Hyperion's get_deltas and get_blocks (docs/HYPERION.md): the same
 * statements on both adapters (`?` placeholders; the PostgreSQL runner numbers them). Every list filter is "any of";
 * an absent or empty list does not filter.
 */

/** How many values one list filter may hold (bounds the statement's size and the number of distinct texts). */
export const MAX_FILTER_VALUES = 20

export interface RowVersionQuery {
  readonly codes?: readonly string[]
  readonly tables?: readonly string[]
  readonly scopes?: readonly string[]
  readonly payers?: readonly string[]
  readonly primaryKeys?: readonly bigint[]
  readonly blockNums?: readonly number[]
  /** true: writes only; false: removals only. */
  readonly present?: boolean
  /** Inclusive block bounds. */
  readonly fromBlock: number
  readonly toBlock: number
}

/** A row version with the block that wrote it; a removal carries the removed version (`old`). */
export interface RowVersionEntry {
  readonly block: BlockRecord
  readonly change: RowChange
}

/**
 * A block with its transaction receipts' count and CPU (µs) and NET (words) sums: the transactions the block itself
 * lists, which leaves out the implicit `eosio::onblock` (a trace with no receipt in the block).
 */
export interface BlockUsageEntry {
  readonly block: BlockRecord
  readonly receiptCount: number
  readonly cpuUsageUs: number
  readonly netUsageWords: number
}

export interface BlockQuery {
  readonly producers?: readonly string[]
  /** Bounds on the transaction receipts' count (BlockUsageEntry.receiptCount). */
  readonly minTrxCount?: number
  readonly maxTrxCount?: number
  readonly fromBlock: number
  readonly toBlock: number
}

export interface HistoryPageReader {
  /**
   * Row versions matching `query`, by block (then code, table, scope, primary key), `descending` or not, `skip` then at
   * most `limit`. One statement: the blocks come from the same read as the versions.
   */
  rowVersionPage(query: RowVersionQuery, page: PageArgs): Promise<RowVersionEntry[]>
  /** How many row versions match, counting at most `cap` (a count of `cap` means "at least"). */
  rowVersionCount(query: RowVersionQuery, cap: number): Promise<number>
  /** Blocks matching `query`, by number, `skip` then at most `limit`, with their receipts' usage (one statement). */
  blockPage(query: BlockQuery, page: PageArgs): Promise<BlockUsageEntry[]>
  /** How many blocks match, counting at most `cap`. */
  blockCount(query: BlockQuery, cap: number): Promise<number>
  /**
   * The current (head) rows of (code, table), by scope then primary key, after the `after` key, at most `limit`: a
   * keyset walk of the current-version index, whatever the table's size. Scopes are ordered by the database's text
   * order (byte order on SQLite, the column's collation on PostgreSQL), the same order the `after` comparison uses.
   */
  currentRowsPage(args: {
    code: string
    table: string
    after?: { scope: string; primaryKey: bigint }
    limit: number
  }): Promise<{ scope: string; primaryKey: bigint; payer: string; value: Uint8Array; blockNum: number }[]>
}

export interface PageArgs {
  readonly descending: boolean
  readonly skip: number
  readonly limit: number
}

type DbRow = Record<string, unknown>

/** `column IN (?, …)` for a non-empty list, nothing otherwise. */
function anyOf(column: string, values: readonly unknown[] | undefined, where: string[], params: unknown[]): void {
  if (values === undefined || values.length === 0) return
  if (values.length > MAX_FILTER_VALUES) throw new RangeError(`store: more than ${MAX_FILTER_VALUES} values`)
  where.push(`${column} IN (${values.map(() => '?').join(', ')})`)
  params.push(...values)
}

function rowVersionWhere(query: RowVersionQuery): { where: string; params: unknown[] } {
  const where = ['n.block_num >= ?', 'n.block_num <= ?']
  const params: unknown[] = [query.fromBlock, query.toBlock]
  anyOf('n.code', query.codes, where, params)
  anyOf('n.tbl', query.tables, where, params)
  anyOf('n.scope', query.scopes, where, params)
  anyOf('n.payer', query.payers, where, params)
  anyOf('n.pk', query.primaryKeys?.map(pkText), where, params)
  anyOf('n.block_num', query.blockNums, where, params)
  if (query.present !== undefined) where.push(query.present ? 'n.value IS NOT NULL' : 'n.value IS NULL')
  return { where: where.join(' AND '), params }
}

/**
 * An aggregate over the transaction receipts of block `b`: its transactions but the implicit onblock (whose first
 * action is eosio::onblock; a transaction without actions, a failed one, is a receipt too).
 */
const receipts = (select: string) =>
  `(SELECT ${select} FROM transactions t WHERE t.block_num = b.num AND t.block_index >= 0 AND NOT EXISTS
    (SELECT 1 FROM actions a WHERE a.global_seq = t.first_seq AND a.account = 'eosio' AND a.name = 'onblock'))`

function blockWhere(query: BlockQuery): { where: string; params: unknown[] } {
  const where = ['b.num >= ?', 'b.num <= ?']
  const params: unknown[] = [query.fromBlock, query.toBlock]
  anyOf('b.producer', query.producers, where, params)
  // The blocks' trx_count column counts onblock too, so the bounds are on the receipts themselves.
  if (query.minTrxCount !== undefined) {
    where.push(`${receipts('count(*)')} >= ?`)
    params.push(query.minTrxCount)
  }
  if (query.maxTrxCount !== undefined) {
    where.push(`${receipts('count(*)')} <= ?`)
    params.push(query.maxTrxCount)
  }
  return { where: where.join(' AND '), params }
}

// The version a removal closed: the key's version just below, by one backward seek on the primary key.
const CLOSED_VERSION = (column: string) =>
  `CASE WHEN n.value IS NULL THEN (SELECT p.${column} FROM row_versions p WHERE p.code = n.code AND p.tbl = n.tbl
    AND p.scope = n.scope AND p.pk = n.pk AND p.block_num < n.block_num ORDER BY p.block_num DESC LIMIT 1) END`

/**
 * A (code, table) with at least this many versions is "dense": its pages are read by walking blocks rather than by
 * sorting all of its versions.
 */
export const DENSE_TABLE_VERSIONS = 5_000

const COUNT_TABLE_VERSIONS = `SELECT count(*) AS n FROM (SELECT 1 FROM row_versions WHERE code = ? AND tbl = ? LIMIT ?) capped`

/**
 * How a row version query reads, so that its work follows the page, not the table's history:
 * - `keys`: through the primary key (code, table, scope, pk, block): the versions of the asked scopes, keys or of a
 *   sparse (code, table), then sorted by block. Also used with a block_num list (a few blocks, through their index).
 * - `blocks`: walks the asked block range in order (blocks' primary key), each block's versions through the block
 *   index (which holds code and table), and stops at the page's end: for a dense table or no (code, table) filter.
 *   A sparse match over a long range costs one index probe per block walked.
 */
type RowVersionPlan = 'keys' | 'blocks'

async function planOf(on: SqlSession, query: RowVersionQuery): Promise<RowVersionPlan> {
  if (query.scopes?.length || query.primaryKeys?.length || query.blockNums?.length) return 'keys'
  if (!query.codes?.length || !query.tables?.length) return 'blocks'
  let versions = 0
  for (const code of query.codes)
    for (const table of query.tables) {
      const rows = await on.run(
        rowsOf<{ n: number | string }>(COUNT_TABLE_VERSIONS, [code, table, DENSE_TABLE_VERSIONS]),
      )
      versions += Number(rows[0]?.n ?? 0)
      if (versions >= DENSE_TABLE_VERSIONS) return 'blocks'
    }
  return 'keys'
}

/** The FROM clause and extra conditions of a plan (`n` the versions, `b` their blocks). */
function fromOf(plan: RowVersionPlan, query: RowVersionQuery): { from: string; where: string; params: unknown[] } {
  return plan === 'blocks'
    ? {
        // CROSS JOIN keeps blocks the outer loop on SQLite; PostgreSQL plans the join from its statistics.
        from: 'blocks b CROSS JOIN row_versions n',
        where: 'n.block_num = b.num AND b.num >= ? AND b.num <= ?',
        params: [query.fromBlock, query.toBlock],
      }
    : { from: 'row_versions n JOIN blocks b ON b.num = n.block_num', where: '1 = 1', params: [] }
}

export function createHistoryPages(on: SqlSession): HistoryPageReader {
  return {
    async rowVersionPage(query, page) {
      const { where, params } = rowVersionWhere(query)
      const plan = fromOf(await planOf(on, query), query)
      const dir = page.descending ? 'DESC' : 'ASC'
      const text = `SELECT n.code, n.tbl, n.scope, n.pk, n.payer, n.value, ${CLOSED_VERSION('payer')} AS old_payer,
        ${CLOSED_VERSION('value')} AS old_value, b.num, b.id, b.previous, b.ts, b.producer, b.trx_count, b.action_count
        FROM ${plan.from} WHERE ${plan.where} AND ${where}
        ORDER BY b.num ${dir}, n.code ${dir}, n.tbl ${dir}, n.scope ${dir}, n.pk ${dir} LIMIT ? OFFSET ?`
      const rows = await on.run(rowsOf<DbRow>(text, [...plan.params, ...params, page.limit, page.skip]))
      return rows.map((r) => ({
        block: blockFromRow({ ...r, header: null }),
        change: {
          code: r.code as string,
          table: r.tbl as string,
          scope: r.scope as string,
          primaryKey: BigInt(`0x${r.pk as string}`),
          payer: r.payer as string,
          value: r.value === null ? undefined : u8(r.value),
          old:
            r.value !== null || r.old_payer === null
              ? undefined
              : { payer: r.old_payer as string, value: r.old_value === null ? undefined : u8(r.old_value) },
        },
      }))
    },
    async rowVersionCount(query, cap) {
      const { where, params } = rowVersionWhere(query)
      const plan = fromOf(await planOf(on, query), query)
      const text = `SELECT count(*) AS n FROM (SELECT 1 FROM ${plan.from} WHERE ${plan.where} AND ${where} LIMIT ?) capped`
      const rows = await on.run(rowsOf<{ n: number | string }>(text, [...plan.params, ...params, cap]))
      return Number(rows[0]?.n ?? 0)
    },
    async blockPage(query, page) {
      const { where, params } = blockWhere(query)
      const text = `SELECT b.*, ${receipts('coalesce(sum(t.cpu_usage_us), 0)')} AS cpu_sum,
          ${receipts('coalesce(sum(t.net_usage_words), 0)')} AS net_sum, ${receipts('count(*)')} AS receipts
        FROM blocks b WHERE ${where} ORDER BY b.num ${page.descending ? 'DESC' : 'ASC'} LIMIT ? OFFSET ?`
      return (await on.run(rowsOf<DbRow>(text, [...params, page.limit, page.skip]))).map((r) => ({
        block: blockFromRow(r),
        cpuUsageUs: Number(r.cpu_sum),
        netUsageWords: Number(r.net_sum),
        receiptCount: Number(r.receipts),
      }))
    },
    async currentRowsPage({ code, table, after, limit }) {
      const keyset = after ? 'AND (scope > ? OR (scope = ? AND pk > ?))' : ''
      const text = `SELECT scope, pk, payer, value, block_num FROM row_versions
        WHERE code = ? AND tbl = ? AND valid_to IS NULL AND value IS NOT NULL ${keyset} ORDER BY scope, pk LIMIT ?`
      const params = after
        ? [code, table, after.scope, after.scope, pkText(after.primaryKey), limit]
        : [code, table, limit]
      return (await on.run(rowsOf<DbRow>(text, params))).map((r) => ({
        scope: r.scope as string,
        primaryKey: BigInt(`0x${r.pk as string}`),
        payer: r.payer as string,
        value: u8(r.value),
        blockNum: Number(r.block_num),
      }))
    },
    async blockCount(query, cap) {
      const { where, params } = blockWhere(query)
      const text = `SELECT count(*) AS n FROM (SELECT 1 FROM blocks b WHERE ${where} LIMIT ?) capped`
      const rows = await on.run(rowsOf<{ n: number | string }>(text, [...params, cap]))
      return Number(rows[0]?.n ?? 0)
    },
  }
}
