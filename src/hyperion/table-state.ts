import type { AbiCache } from '../antelope/index.ts'
import type { SnapshotReader, Store } from '../store/index.ts'
import { rowDecoderOf, withTableProjection, type RowDecoder } from './delta-documents.ts'
import { HyperionBadRequestError } from './errors.ts'
import { hyperionTime } from './time.ts'

/** Hyperion's fixed page of get_table_state. */
export const TABLE_STATE_PAGE = 25
/** Scopes read per statement while filling a page (a token table has one row per scope). */
const SCOPES_PER_READ = 50

export interface GetTableStateQuery {
  code: string
  table: string
  block_num?: number
  after_key?: string
  [key: string]: unknown
}

export interface TableStateRow {
  scope: string
  primary_key: string
  payer: string
  timestamp: string
  block_num: number
  block_id: string
  present: 1
  data: unknown
}

/**
 * get_table_state: the rows of (code, table) as of `block_num` (default: head), by scope then primary key, 25 a page.
 * Each row carries the block that last wrote it. Rows removed by then are left out (Hyperion, which keeps no
 * removals, still lists them with their last value). The cursor is `<scope>-<primary key>` of the last row of a page
 * (Hyperion's composite key); `next_key` is `""` once a page is not full (Hyperion sends null, which
 * `@wharfkit/hyperion`'s typed decoder refuses; `""` stops a client's loop all the same), and `after_key` is always
 * echoed (`""` when none was given). Rows are decoded with the contract's ABI at
 * the asked height.
 *
 * At head (no `block_num`, or one at or above the head) a page is one keyset read of the current rows, whatever the
 * table's size; a fork landing between it and the read of the rows' blocks is detected (a row's block gone) and the
 * page read again. At a past height the page is read in one snapshot from the table's scopes at that height: that
 * reads every scope name of the table and every row of the scopes it pages through.
 */
export async function hyperionTableState(
  store: Pick<Store, 'snapshot' | 'position' | 'currentRowsPage' | 'blocksByNums' | 'abi'>,
  abis: AbiCache,
  query: GetTableStateQuery,
): Promise<GetTableStateQuery & { next_key: string; results: TableStateRow[] }> {
  const after = query.after_key ? parseAfterKey(query.after_key) : undefined
  const head = (await store.position())?.head.blockNum ?? 0
  if (query.block_num === undefined || query.block_num >= head) {
    for (let attempt = 0; ; attempt++) {
      const rows = await store.currentRowsPage({
        code: query.code,
        table: query.table,
        limit: TABLE_STATE_PAGE,
        ...(after ? { after } : {}),
      })
      const blocks = await store.blocksByNums([...new Set(rows.map((r) => r.blockNum))])
      if (attempt < 3 && rows.some((r) => r.blockNum > 0 && !blocks.has(r.blockNum))) continue
      const decode = rowDecoderOf(await abiAt(store, abis, query.code, (await store.position())?.head.blockNum ?? 0))
      return page(query, rows, blocks, decode)
    }
  }
  return store.snapshot(async (reader) => {
    const blockNum = query.block_num ?? head
    const scopes = (await reader.scopes({ code: query.code, table: query.table, blockNum }))
      .filter((s) => after === undefined || s >= after.scope)
      .sort()
    const rows: { scope: string; primaryKey: bigint; payer: string; value: Uint8Array; blockNum: number }[] = []
    for (let i = 0; i < scopes.length && rows.length < TABLE_STATE_PAGE; i += SCOPES_PER_READ) {
      const read = await reader.tableRowsOfScopes({
        code: query.code,
        table: query.table,
        scopes: scopes.slice(i, i + SCOPES_PER_READ),
        blockNum,
      })
      for (const row of read) {
        if (after && row.scope === after.scope && row.primaryKey <= after.primaryKey) continue
        rows.push(row)
        if (rows.length === TABLE_STATE_PAGE) break
      }
    }
    const decode = rowDecoderOf(await abiAt(reader, abis, query.code, blockNum))
    const blocks = await blocksOf(
      reader,
      rows.map((r) => r.blockNum),
    )
    return page(query, rows, blocks, decode)
  })
}

/** A page of rows in Hyperion's shape, with the cursor of the next page when this one is full. */
function page(
  query: GetTableStateQuery,
  rows: readonly { scope: string; primaryKey: bigint; payer: string; value: Uint8Array; blockNum: number }[],
  blocks: ReadonlyMap<number, { id: string; timestampMs: number }>,
  decode: RowDecoder,
): GetTableStateQuery & { next_key: string; results: TableStateRow[] } {
  const results = rows.map((row): TableStateRow => {
    const block = blocks.get(row.blockNum)
    return {
      scope: row.scope,
      primary_key: row.primaryKey.toString(),
      payer: row.payer,
      timestamp: block ? hyperionTime(block.timestampMs) : '',
      block_num: row.blockNum,
      block_id: block?.id ?? '',
      present: 1,
      data: withTableProjection(query.table, decode(query.code, query.table, row.value)),
    }
  })
  const last = rows.length === TABLE_STATE_PAGE ? rows[rows.length - 1] : undefined
  return {
    ...query,
    after_key: query.after_key ?? '',
    next_key: last ? `${last.scope}-${last.primaryKey}` : '',
    results,
  }
}

/** `<scope>-<decimal primary key>`; scopes are names, which hold no `-`. */
function parseAfterKey(text: string): { scope: string; primaryKey: bigint } {
  const at = text.lastIndexOf('-')
  const pk = text.slice(at + 1)
  if (at < 0 || !/^\d{1,20}$/.test(pk) || BigInt(pk) >= 2n ** 64n)
    throw HyperionBadRequestError(`invalid after_key: ${text.slice(0, 64)}`)
  return { scope: text.slice(0, at), primaryKey: BigInt(pk) }
}

async function abiAt(reader: Pick<SnapshotReader, 'abi'>, abis: AbiCache, account: string, blockNum: number) {
  const stored = await reader.abi({ account, blockNum })
  const compiled = stored && stored.abi.length > 0 ? abis.fromBinary(stored.abi) : undefined
  const abi = compiled?.ok ? compiled.value : undefined
  return (name: string) => (name === account ? abi : undefined)
}

async function blocksOf(reader: Pick<SnapshotReader, 'blockByNum'>, nums: readonly number[]) {
  const out = new Map<number, { id: string; timestampMs: number }>()
  for (const num of new Set(nums)) {
    const block = await reader.blockByNum(num)
    if (block) out.set(num, block)
  }
  return out
}
