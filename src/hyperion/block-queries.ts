import { MAX_FILTER_VALUES, type BlockQuery, type Store } from '../store/index.ts'
import { filterValues, isDescending, parseAfterBefore, resolveBlockBounds, type HyperionSort } from './block-range.ts'
import { blockDocument, type HyperionBlockDocument } from './block-documents.ts'
import { HyperionBadRequestError, HyperionNotFoundError } from './errors.ts'
import { HYPERION_LIMITS } from './limits.ts'

/** Hyperion's counts stop here (Elasticsearch's default `track_total_hits`); a total of this many is "gte". */
export const TOTAL_CAP = 10_000
/** The deepest page: `skip` above it is refused, as Hyperion refuses (Elasticsearch's result window). */
export const MAX_SKIP = 10_000
/**
 * The most blocks a filtered get_blocks looks through (from the end its sort starts at): blocks are indexed by number
 * only, so a producer or transaction-count filter is a scan, bounded here. `after`/`before` move the window.
 */
export const MAX_FILTERED_BLOCK_SCAN = 100_000

export type HyperionTotal = { value: number; relation: 'eq' | 'gte' }

export const totalOf = (count: number): HyperionTotal => ({
  value: count,
  relation: count >= TOTAL_CAP ? 'gte' : 'eq',
})

/** get_block: the stored block `blockNum`; 404 `Block N not found`. */
export async function hyperionBlock(store: Pick<Store, 'blockPage'>, blockNum: number) {
  const [entry] = await store.blockPage(
    { fromBlock: blockNum, toBlock: blockNum },
    { descending: false, skip: 0, limit: 1 },
  )
  if (!entry) throw HyperionNotFoundError(`Block ${blockNum} not found`)
  return { cached: false, lib: 0, total: { value: 1, relation: 'eq' }, ...blockDocument(entry.block, entry) }
}

export interface GetBlocksQuery {
  block_num?: number
  block_id?: string
  producer?: string
  trx_count?: number
  min_trx_count?: number
  max_trx_count?: number
  after?: string
  before?: string
  limit?: number
  skip?: number
  sort?: HyperionSort
}

/** get_blocks: a page of stored blocks by number; one block (or 404) when `block_num` or `block_id` is given. */
export async function hyperionBlocks(
  store: Pick<Store, 'blockPage' | 'blockCount' | 'blockById' | 'blockByTime' | 'position'>,
  query: GetBlocksQuery,
): Promise<{ cached: false; lib: 0; total: HyperionTotal; blocks: HyperionBlockDocument[] }> {
  const skip = query.skip ?? 0
  if (skip > MAX_SKIP) throw HyperionBadRequestError(`skip is above maximum internal limit: ${MAX_SKIP}`)
  const single = query.block_num !== undefined || (query.block_id !== undefined && query.block_id !== '')
  const limit = single ? 1 : Math.min(query.limit ?? 10, HYPERION_LIMITS.get_blocks)
  const head = (await store.position())?.head.blockNum ?? 0
  let { from, to } = await resolveBlockBounds(store, parseAfterBefore(query), head)
  if (query.block_num !== undefined) {
    from = Math.max(from, query.block_num)
    to = Math.min(to, query.block_num)
  }
  if (query.block_id !== undefined && query.block_id !== '') {
    const block = await store.blockById(query.block_id.toLowerCase())
    from = Math.max(from, block?.num ?? head + 1)
    to = Math.min(to, block?.num ?? 0)
  }
  const minTrx = maxOf(query.min_trx_count, query.trx_count)
  const maxTrx = minOf(query.max_trx_count, query.trx_count)
  const producers = filterValues('producer', query.producer, MAX_FILTER_VALUES)
  const descending = isDescending(query.sort)
  if (producers || minTrx !== undefined || maxTrx !== undefined) {
    if (descending) from = Math.max(from, to - MAX_FILTERED_BLOCK_SCAN + 1)
    else to = Math.min(to, from + MAX_FILTERED_BLOCK_SCAN - 1)
  }
  const blockQuery: BlockQuery = {
    fromBlock: from,
    toBlock: to,
    ...(producers ? { producers } : {}),
    ...(minTrx !== undefined ? { minTrxCount: minTrx } : {}),
    ...(maxTrx !== undefined ? { maxTrxCount: maxTrx } : {}),
  }
  const entries = from > to ? [] : await store.blockPage(blockQuery, { descending, skip, limit })
  if (single && entries.length === 0) throw HyperionNotFoundError('Block not found')
  const count = from > to ? 0 : await store.blockCount(blockQuery, TOTAL_CAP)
  return {
    cached: false,
    lib: 0,
    total: totalOf(count),
    blocks: entries.map((e) => blockDocument(e.block, e)),
  }
}

const maxOf = (a: number | undefined, b: number | undefined) =>
  a === undefined ? b : b === undefined ? a : Math.max(a, b)
const minOf = (a: number | undefined, b: number | undefined) =>
  a === undefined ? b : b === undefined ? a : Math.min(a, b)
