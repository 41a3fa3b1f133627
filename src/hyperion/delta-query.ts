import type { BlockDecoderSource } from '../lifecycle/index.ts'
import { MAX_FILTER_VALUES, type RowVersionQuery, type Store } from '../store/index.ts'
import { filterValues, isDescending, parseAfterBefore, resolveBlockBounds, type HyperionSort } from './block-range.ts'
import { MAX_SKIP, TOTAL_CAP, totalOf, type HyperionTotal } from './block-queries.ts'
import { deltaDocuments, rowDecoderOf, type HyperionDeltaDocument } from './delta-documents.ts'
import { HyperionBadRequestError } from './errors.ts'
import { HYPERION_LIMITS } from './limits.ts'

/**
 * get_deltas' parameters. Hyperion turns every other query key into an exact filter on its delta documents; Antler
 * matches those it indexes (`primary_key`, `block_num`, `block_id`) and refuses the rest with a 400 rather than
 * answering as if the filter held. `ignoreCache` (Hyperion's cache bypass) is accepted and has no effect.
 */
export interface GetDeltasQuery {
  code?: string
  scope?: string
  table?: string
  payer?: string
  present?: number
  primary_key?: string
  block_num?: string
  block_id?: string
  after?: string
  before?: string
  limit?: number
  skip?: number
  sort?: HyperionSort
  [key: string]: unknown
}

const KNOWN_KEYS: ReadonlySet<string> = new Set([
  'code',
  'scope',
  'table',
  'payer',
  'present',
  'primary_key',
  'block_num',
  'block_id',
  'after',
  'before',
  'limit',
  'skip',
  'sort',
  'ignoreCache',
])

/** get_deltas: row versions matching the filters, newest first unless `sort` asks otherwise. */
export async function hyperionDeltas(
  store: Pick<Store, 'rowVersionPage' | 'rowVersionCount' | 'blockById' | 'blockByTime' | 'position'>,
  decoders: BlockDecoderSource,
  query: GetDeltasQuery,
): Promise<{ total: HyperionTotal; deltas: HyperionDeltaDocument[] }> {
  const unknown = Object.keys(query).find((key) => !KNOWN_KEYS.has(key))
  if (unknown !== undefined)
    throw HyperionBadRequestError(
      `unsupported filter: ${unknown.slice(0, 64)} (get_deltas filters on code, scope, table, payer, present, primary_key, block_num, block_id)`,
    )
  const skip = query.skip ?? 0
  if (skip > MAX_SKIP) throw HyperionBadRequestError(`skip is above maximum internal limit: ${MAX_SKIP}`)
  const limit = Math.min(query.limit ?? 10, HYPERION_LIMITS.get_deltas)
  const head = (await store.position())?.head.blockNum ?? 0
  let { from, to } = await resolveBlockBounds(store, parseAfterBefore(query), head)
  if (query.block_id !== undefined && query.block_id !== '') {
    const block = await store.blockById(query.block_id.toLowerCase())
    from = Math.max(from, block?.num ?? head + 1)
    to = Math.min(to, block?.num ?? 0)
  }
  const list = (key: 'code' | 'scope' | 'table' | 'payer' | 'primary_key' | 'block_num') =>
    filterValues(key, query[key], MAX_FILTER_VALUES)
  const rowQuery: RowVersionQuery = {
    fromBlock: from,
    toBlock: to,
    codes: list('code'),
    scopes: list('scope'),
    tables: list('table'),
    payers: list('payer'),
    primaryKeys: list('primary_key')?.map((v) => unsignedInteger('primary_key', v, 2n ** 64n - 1n)),
    blockNums: list('block_num')?.map((v) => Number(unsignedInteger('block_num', v, 2n ** 32n))),
    present: query.present === undefined ? undefined : query.present === 1,
  }
  if (from > to) return { total: totalOf(0), deltas: [] }
  const entries = await store.rowVersionPage(rowQuery, { descending: isDescending(query.sort), skip, limit })
  const blocks = new Map<number, Set<string>>()
  for (const { block, change } of entries) {
    const codes = blocks.get(block.num) ?? new Set<string>()
    codes.add(change.code)
    blocks.set(block.num, codes)
  }
  const decoderOf = await decoders(blocks)
  const deltas = entries.flatMap(({ block, change }) =>
    deltaDocuments(
      [change],
      block,
      rowDecoderOf((account) => decoderOf.get(block.num)?.abiOf(account)),
    ),
  )
  const count = await store.rowVersionCount(rowQuery, TOTAL_CAP)
  return { total: totalOf(count), deltas }
}

/** A decimal unsigned integer up to `max`; anything else is a 400 naming the parameter. */
function unsignedInteger(key: string, text: string, max: bigint): bigint {
  if (!/^\d{1,20}$/.test(text) || BigInt(text) > max) throw HyperionBadRequestError(`invalid ${key}: ${text}`)
  return BigInt(text)
}
