import { deflateRawSync, inflateRawSync } from 'node:zlib'
import { actionFromRow, blockFromRow, byteOrder, rowChangeFromRow, transactionFromRow } from './row-mapping.ts'
import { awaited, type SqlRoutine, type SqlRunner } from './sql-routine.ts'
import type { ActionRecord, RowChange, Step, StepPayload, TransactionRecord } from './types.ts'

/**
 * How long the content of a forked-out block is kept for streams and cursors that started before
 * the fork: until LIB is this many blocks past it (7,200 blocks: one hour at 0.5 s a block). A
 * forked-out block can never become irreversible, so past that point no stream still replaying
 * near head needs its `undo`; one that lags by more gets `undefined` and must restart from LIB.
 */
export const FORKED_RETENTION_BLOCKS = 7_200

/** What a block held: a step payload without its step. */
export type BlockContent = Omit<StepPayload, 'step'>

/** A database row as both drivers return it. */
type DbRow = Record<string, unknown>

/** The rows of the stored blocks read by `blockContentSql`'s statements. */
export interface BlockContentRows {
  readonly blocks: readonly DbRow[]
  readonly transactions: readonly DbRow[]
  readonly actions: readonly DbRow[]
  readonly rowChanges: readonly DbRow[]
}

/** Past any global sequence: the upper bound of an action range with no block after it. */
const NO_SEQ_BOUND = '9223372036854775807'

/**
 * The statements that read the content of stored blocks and the kept content of forked-out ones,
 * each a fixed text with one list parameter (SQLite: a JSON array; PostgreSQL: an array), written
 * with `?` placeholders (the PostgreSQL adapter numbers them).
 */
function blockContentSql(dialect: 'sqlite' | 'postgres') {
  const inList = (type: 'text' | 'bigint') =>
    dialect === 'sqlite' ? 'IN (SELECT value FROM json_each(?))' : `= ANY(?::${type}[])`
  return {
    /** Stored blocks by id (parameter: ids). */
    blocks: `SELECT * FROM blocks WHERE id ${inList('text')}`,
    /** Their transaction records (parameter: block numbers). */
    transactions: `SELECT * FROM transactions WHERE block_num ${inList('bigint')}`,
    /**
     * Their actions (parameters: the lowest first_seq of the blocks, the highest block number,
     * block numbers): the global sequences from the first block's first action up to the next
     * stored block's, a primary-key range, of which the asked blocks' rows are kept.
     */
    actions: `SELECT * FROM actions WHERE global_seq >= ? AND global_seq <
        coalesce((SELECT first_seq FROM blocks WHERE num > ? AND first_seq IS NOT NULL ORDER BY num LIMIT 1), ${NO_SEQ_BOUND})
      AND block_num ${inList('bigint')} ORDER BY global_seq`,
    /**
     * Their row changes, each with the version it closed: the key's version just below, one
     * backward seek (common-sql.ts ROW_CHANGES_OF_BLOCK; parameter: block numbers). PostgreSQL
     * takes it with LATERAL, which reads it in that seek (the join on max() evaluated the max twice
     * per change and then probed the version: twice the time for a batch of 10,000 changes).
     */
    rowChanges:
      dialect === 'sqlite'
        ? `SELECT n.block_num, n.code, n.tbl, n.scope, n.pk, n.payer, n.value, o.payer AS old_payer, o.value AS old_value, o.block_num AS old_block
      FROM row_versions n LEFT JOIN row_versions o ON o.code = n.code AND o.tbl = n.tbl AND o.scope = n.scope AND o.pk = n.pk
        AND o.block_num = (SELECT max(p.block_num) FROM row_versions p WHERE p.code = n.code AND p.tbl = n.tbl AND p.scope = n.scope AND p.pk = n.pk AND p.block_num < n.block_num)
      WHERE n.block_num ${inList('bigint')}`
        : `SELECT n.block_num, n.code, n.tbl, n.scope, n.pk, n.payer, n.value, o.payer AS old_payer, o.value AS old_value, o.block_num AS old_block
      FROM row_versions n LEFT JOIN LATERAL (SELECT p.payer, p.value, p.block_num FROM row_versions p
        WHERE p.code = n.code AND p.tbl = n.tbl AND p.scope = n.scope AND p.pk = n.pk AND p.block_num < n.block_num ORDER BY p.block_num DESC LIMIT 1) o ON true
      WHERE n.block_num ${inList('bigint')}`,
    /** Kept content of forked-out blocks by id (parameter: ids). */
    forked: `SELECT block_id, payload FROM forked_blocks WHERE block_id ${inList('text')}`,
    /** Prunes what LIB has passed by the retention (parameter: the highest block number to drop). */
    prune: 'DELETE FROM forked_blocks WHERE block_num <= ?',
  }
}

/** The parameters of `actions` for stored block rows; undefined when none of them has actions. */
function actionRange(blocks: readonly DbRow[]): { firstSeq: number; lastBlock: number } | undefined {
  const seqs = blocks.flatMap((b) => (b.first_seq === null || b.first_seq === undefined ? [] : [Number(b.first_seq)]))
  if (seqs.length === 0) return undefined
  return { firstSeq: Math.min(...seqs), lastBlock: Math.max(...blocks.map((b) => Number(b.num))) }
}

/** Traces by position in the block, then the facts without a trace (-1, -2…) in the order they were recorded. */
const byBlockIndex = (a: TransactionRecord, b: TransactionRecord) =>
  a.blockIndex < 0 === b.blockIndex < 0 ? Math.abs(a.blockIndex) - Math.abs(b.blockIndex) : a.blockIndex < 0 ? 1 : -1

const byKey = (a: RowChange, b: RowChange) =>
  byteOrder(a.code, b.code) ||
  byteOrder(a.table, b.table) ||
  byteOrder(a.scope, b.scope) ||
  (a.primaryKey < b.primaryKey ? -1 : a.primaryKey > b.primaryKey ? 1 : 0)

/** The content of each stored block of `rows`, by block id. */
function contentsFromRows(rows: BlockContentRows): Map<string, BlockContent> {
  const byNum = new Map<
    number,
    {
      block: ReturnType<typeof blockFromRow>
      transactions: TransactionRecord[]
      actions: ActionRecord[]
      rowChanges: RowChange[]
    }
  >()
  for (const r of rows.blocks) {
    const block = blockFromRow(r)
    byNum.set(block.num, { block, transactions: [], actions: [], rowChanges: [] })
  }
  const trxIds = new Map<string, string>()
  for (const r of rows.transactions) {
    const t = transactionFromRow(r)
    byNum.get(t.blockNum)?.transactions.push(t)
    trxIds.set(`${t.blockNum}/${t.blockIndex}`, t.id)
  }
  for (const r of rows.actions)
    byNum
      .get(Number(r.block_num))
      ?.actions.push(actionFromRow(r, trxIds.get(`${Number(r.block_num)}/${Number(r.trx_index)}`) ?? ''))
  for (const r of rows.rowChanges) byNum.get(Number(r.block_num))?.rowChanges.push(rowChangeFromRow(r))
  const out = new Map<string, BlockContent>()
  for (const c of byNum.values()) {
    c.transactions.sort(byBlockIndex)
    c.rowChanges.sort(byKey)
    out.set(c.block.id, c)
  }
  return out
}

/** Where the block content reads run: the runner, the dialect's blockContentSql and how it binds a list. */
export interface BlockContentReader {
  readonly sql: SqlRunner
  readonly text: ReturnType<typeof blockContentSql>
  readonly list: (values: readonly unknown[]) => unknown
}

const TEXTS = { sqlite: blockContentSql('sqlite'), postgres: blockContentSql('postgres') }

/** The block content reads of a dialect on `sql`: a list bound as a JSON array (SQLite) or as an array. */
export const blockContentReader = (sql: SqlRunner, dialect: 'sqlite' | 'postgres'): BlockContentReader => ({
  sql,
  text: TEXTS[dialect],
  list: dialect === 'sqlite' ? (values) => JSON.stringify(values) : (values) => values,
})

/** The highest block whose kept content a store at LIB `lib` drops (FORKED_RETENTION_BLOCKS below it). */
export const prunedThrough = (lib: number) => lib - FORKED_RETENTION_BLOCKS

/** The content of the stored blocks among `ids`, by id: four statements, whatever their number. */
function* storedContents(r: BlockContentReader, ids: readonly string[]): SqlRoutine<Map<string, BlockContent>> {
  const blocks = yield* awaited(r.sql.rows<DbRow>(r.text.blocks, [r.list(ids)]))
  if (blocks.length === 0) return new Map()
  const nums = r.list(blocks.map((b) => b.num))
  const range = actionRange(blocks)
  const transactions = yield* awaited(r.sql.rows<DbRow>(r.text.transactions, [nums]))
  const actions = range
    ? yield* awaited(r.sql.rows<DbRow>(r.text.actions, [range.firstSeq, range.lastBlock, nums]))
    : []
  const rowChanges = yield* awaited(r.sql.rows<DbRow>(r.text.rowChanges, [nums]))
  return contentsFromRows({ blocks, transactions, actions, rowChanges })
}

/** What the stored blocks among `ids` hold, encoded for `forked_blocks`, for an undo to keep before it removes them. */
export function* contentsToKeep(
  r: BlockContentReader,
  ids: readonly string[],
): SqlRoutine<{ id: string; num: number; payload: Buffer }[]> {
  const stored = yield* storedContents(r, ids)
  return [...stored].map(([id, c]) => ({ id, num: c.block.num, payload: encodeBlockContent(c) }))
}

/**
 * The content of the blocks `ids`: stored where the id is stored, else kept for a forked-out block (absent when
 * neither). Run in one snapshot, so that a fork committed meanwhile is seen by all of the reads or none.
 */
function* blockContents(r: BlockContentReader, ids: readonly string[]): SqlRoutine<Map<string, BlockContent>> {
  const found = yield* storedContents(r, ids)
  const missing = ids.filter((id) => !found.has(id))
  if (missing.length === 0) return found
  const kept = yield* awaited(r.sql.rows<{ block_id: string; payload: Uint8Array }>(r.text.forked, [r.list(missing)]))
  for (const row of kept) found.set(row.block_id, decodeBlockContent(row.payload))
  return found
}

/** Each step with the content of its block (undefined when neither stored nor kept), in one snapshot. */
export function* stepPayloadsOf(
  r: BlockContentReader,
  steps: readonly Step[],
): SqlRoutine<(StepPayload | undefined)[]> {
  const contents = yield* blockContents(r, [...new Set(steps.map((x) => x.blockId))])
  return steps.map((step) => {
    const content = contents.get(step.blockId)
    return content && { step, ...content }
  })
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')
const bytes = (text: string) => new Uint8Array(Buffer.from(text, 'hex'))

/** Format 1: JSON (bytes as hex, bigints as decimal strings), raw-deflated. */
const FORMAT = 1

/** A block's content as kept in `forked_blocks.payload`. */
export function encodeBlockContent(c: BlockContent): Buffer {
  const json = {
    format: FORMAT,
    block: c.block,
    transactions: c.transactions,
    actions: c.actions.map(({ searchTerms: _terms, ...a }) => ({
      ...a,
      globalSequence: a.globalSequence,
      data: hex(a.data),
      returnValue: hex(a.returnValue),
      recvSequence: a.recvSequence.toString(),
      ramDeltas: a.ramDeltas.map((d) => ({ account: d.account, delta: d.delta.toString() })),
    })),
    rowChanges: c.rowChanges.map((r) => ({
      ...r,
      primaryKey: r.primaryKey.toString(),
      value: r.value === undefined ? null : hex(r.value),
      old:
        r.old === undefined ? null : { payer: r.old.payer, value: r.old.value === undefined ? null : hex(r.old.value) },
    })),
  }
  return deflateRawSync(JSON.stringify(json))
}

type Encoded<T, Changed extends keyof T, As> = Omit<T, Changed> & { [K in Changed]: As }
interface EncodedContent {
  format: number
  block: BlockContent['block']
  transactions: TransactionRecord[]
  actions: (Encoded<ActionRecord, 'data' | 'returnValue' | 'recvSequence', string> & {
    ramDeltas: { account: string; delta: string }[]
  })[]
  rowChanges: (Encoded<RowChange, 'primaryKey', string> & {
    value: string | null
    old: { payer: string; value: string | null } | null
  })[]
}

/** The content `encodeBlockContent` kept. */
export function decodeBlockContent(payload: Uint8Array): BlockContent {
  const c = JSON.parse(inflateRawSync(payload).toString('utf8')) as EncodedContent
  if (c.format !== FORMAT) throw new Error(`forked block content of unknown format ${c.format}`)
  return {
    block: c.block,
    transactions: c.transactions,
    actions: c.actions.map((a) => ({
      ...a,
      globalSequence: Number(a.globalSequence),
      data: bytes(a.data),
      returnValue: bytes(a.returnValue),
      recvSequence: BigInt(a.recvSequence),
      ramDeltas: a.ramDeltas.map((d) => ({ account: d.account, delta: BigInt(d.delta) })),
    })),
    rowChanges: c.rowChanges.map((r) => ({
      ...r,
      primaryKey: BigInt(r.primaryKey),
      value: r.value === null ? undefined : bytes(r.value),
      old:
        r.old === null
          ? undefined
          : { payer: r.old.payer, value: r.old.value === null ? undefined : bytes(r.old.value) },
    })),
  }
}
