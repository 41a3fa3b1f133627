import { BoundedCache, type LifecycleService, type TransactionLifecycle } from '../lifecycle/index.ts'
import type { ActionRecord, BlockRecord, SearchExpr, Store, StorePosition } from '../store/index.ts'
import { createCursorCodec, type CursorCodec } from './cursor.ts'
import { createIrreversibleReads, type IrreversibleReadLimits } from './irreversible-reads.ts'
import { collectRows, type PageStore, type RowDraft } from './page.ts'
import { parseSearchQuery } from './parser.ts'
import {
  blockRange,
  boundedRange,
  checkRangeParams,
  SEARCH_LIMITS,
  type BlockRange,
  type BoundsParams,
  type SearchSort,
} from './range.ts'
import { SearchForkRaceError } from './request-errors.ts'
import { pageBounds, type BoundsStore, type CursorState } from './resume.ts'

/** What the search service reads. */
export type SearchStore = PageStore & BoundsStore & Pick<Store, 'position' | 'blockByNum' | 'snapshot' | 'blocksByNums'>

/** A search as REST and GraphQL ask it (defaults as `/v0/search/transactions`). */
export interface SearchRequest {
  /** In the query language (docs/API.md, `GET /v0/search/transactions`). */
  readonly query: string
  /** Default 0; negative counts back from the searchable head (see range.ts). */
  readonly startBlock?: number
  /** Default 2³²−1. */
  readonly blockCount?: number
  /** Transactions per page: default 25, at most 100. */
  readonly limit?: number
  /** Default `asc`. */
  readonly sort?: SearchSort
  /** A cursor of an earlier page (either direction); absent or '' for none. */
  readonly cursor?: string
  /** Default false: only irreversible blocks. */
  readonly withReversible?: boolean
  /** GraphQL's bounds instead of `startBlock`/`blockCount` (range.ts, boundedRange). */
  readonly bounds?: Pick<BoundsParams, 'lowBlockNum' | 'highBlockNum'>
  /** The largest `limit` accepted: default 100 (REST); GraphQL allows 1,000. */
  readonly maxLimit?: number
}

/** One transaction of a page: its matching actions. */
export interface SearchRow {
  readonly trxId: string
  readonly blockNum: number
  readonly blockId: string
  /** The matching actions, in execution order. */
  readonly actions: readonly ActionRecord[]
  /**
   * Their indexes among the transaction's actions in execution order (dfuse's `action_idx`, as `dbops[].action_idx`).
   */
  readonly actionIdx: readonly number[]
  /** Resumes right after this transaction (GraphQL gives one per row). */
  readonly cursor: string
  /** Every action of the transaction's execution, in execution order. */
  readonly execution: readonly ActionRecord[]
  /** The stored block holding it. */
  readonly block: BlockRecord
}

/** A page of rows, for REST and GraphQL alike. */
export interface SearchRowsPage {
  readonly rows: readonly SearchRow[]
  /** After the last row; '' when the range holds no further match. */
  readonly cursor: string
  /** The request's cursor named a block that was forked out: the page continues on the store's chain. */
  readonly forkedHeadWarning: boolean
  /** The store's LIB when the page was read (0 for an empty store). */
  readonly lib: number
}

/** `GET /v0/search/transactions`'s answer, as dfuse sent it (docs/API.md, "Wire facts"). */
export interface SearchTransactionsPage {
  readonly cursor: string
  /** null when nothing matched, as dfuse sent it. */
  readonly transactions:
    readonly { readonly lifecycle: TransactionLifecycle; readonly action_idx: readonly number[] }[] | null
  readonly forked_head_warning?: true
}

export interface SearchService {
  /** A page of matching transactions with their actions (no lifecycle). */
  searchRows(request: SearchRequest): Promise<SearchRowsPage>
  /** A page as `/v0/search/transactions` answers it: each row with its transaction's lifecycle. */
  searchTransactions(request: SearchRequest): Promise<SearchTransactionsPage>
  /**
   * The same page as its JSON in UTF-8 (JSON.stringify's, byte for byte), what the route sends: built from the JSON the
   * lifecycle service kept for final lifecycles instead of serializing them again; a pinned page's is kept encoded.
   */
  searchTransactionsBody(request: SearchRequest): Promise<SearchAnswer>
}

/** A search page's JSON in UTF-8 and how many transactions it holds (the documents it serves, for usage). */
export interface SearchAnswer {
  readonly body: Buffer
  readonly transactions: number
}

/** The answers of pinned pages kept (their JSON in UTF-8): at most 500, or 16 MiB together. */
const PINNED_ANSWERS = { entries: 500, bytes: 16 * 2 ** 20 }

/** Reads of one page before it gives up on a chain that keeps forking under it. */
const MAX_ATTEMPTS = 4

/**
 * A request with its defaults, checked, its query parsed and its cursor decoded: every refusal comes before any read.
 */
interface Checked {
  readonly expr: SearchExpr
  readonly params: { startBlock: number; blockCount: number; limit: number; sort: SearchSort; withReversible: boolean }
  readonly bounds: SearchRequest['bounds']
  readonly cursor: ReturnType<CursorCodec['decode']> | undefined
}

/** A page read on one chain, and what pins that chain. */
interface Attempt {
  readonly rows: (RowDraft & { block: BlockRecord; actionIdx: number[] })[]
  readonly lib: number
  readonly more: boolean
  readonly forked: boolean
  readonly lifecycles: Map<string, TransactionLifecycle> | undefined
}

/**
 * Search: the query language over the store's engine, cursors, result
 * assembly shared by REST and GraphQL (no HTTP here).
 *
 * Consistency. The store's snapshot (`SnapshotSource`) covers state and blocks, not the search engine or the lifecycle
 * reads, which are many round trips on PostgreSQL's pool; so a page is read, then checked. A first snapshot reads the
 * position, the block at the top of the page's range (the anchor) and the cursor's block; the page's reads (engine,
 * actions, the rows' blocks, lifecycles: a fixed number of batch reads) follow; then a second snapshot checks that the
 * anchor and the cursor's block are still the stored blocks at their numbers. Blocks are linked by their ids, so an
 * unchanged anchor means no block at or below it was replaced in between: every read saw the same chain up to the
 * anchor, and the page holds nothing above it. Otherwise a fork landed under the page and it is read again (at most
 * MAX_ATTEMPTS times, then a retryable 503). Pages of irreversible blocks (the default) never retry: their anchor is at
 * or below LIB.
 */
export function createSearchService(args: {
  store: SearchStore
  lifecycle: LifecycleService
  cursorKey: Uint8Array
  /** Bounds of the cache of irreversible executions and blocks (irreversible-reads.ts); `false` for none. */
  irreversibleReads?: IrreversibleReadLimits | false
}): SearchService {
  const { store, lifecycle } = args
  const codec = createCursorCodec(args.cursorKey)
  const kept = args.irreversibleReads === false ? undefined : createIrreversibleReads(store, args.irreversibleReads)
  const answers =
    args.irreversibleReads === false
      ? undefined
      : new BoundedCache<string, SearchAnswer>(PINNED_ANSWERS.entries, PINNED_ANSWERS.bytes, (a) => a.body.byteLength)

  function check(request: SearchRequest): Checked {
    const params = {
      startBlock: request.startBlock ?? 0,
      blockCount: request.blockCount ?? SEARCH_LIMITS.maxBlock,
      limit: request.limit ?? SEARCH_LIMITS.defaultLimit,
      sort: request.sort ?? 'asc',
      withReversible: request.withReversible ?? false,
    }
    checkRangeParams(params, request.maxLimit)
    const expr = parseSearchQuery(request.query)
    const cursor = request.cursor ? codec.decode(request.cursor) : undefined
    return { expr, params, bounds: request.bounds, cursor }
  }

  /**
   * The position, the range, the anchor's id and the cursor's standing. A page of irreversible
   * blocks whose cursor (if any) is irreversible too is pinned: no fork can touch what it reads, so
   * it needs no consistency check. An irreversible-only page (the default) is read without a
   * snapshot when it is pinned (on PostgreSQL, six round trips of a page's fifteen); any other
   * page reads these in the first snapshot.
   */
  async function start(checked: Checked): Promise<
    | {
        position: StorePosition
        range: BlockRange
        anchorId: string | undefined
        cursor: CursorState | undefined
        pinned: boolean
      }
    | undefined
  > {
    const at = checked.cursor
    const rangeAt = (position: StorePosition) =>
      checked.bounds
        ? boundedRange({ ...checked.params, ...checked.bounds }, position)
        : blockRange(checked.params, position)
    const pinnedAt = (range: BlockRange, lib: number) => range.high <= lib && (!at || at.blockNum <= lib)
    const standing = async (reader: Pick<Store, 'blockByNum'>): Promise<CursorState | undefined> =>
      at && { position: at, forked: (await reader.blockByNum(at.blockNum))?.id !== at.blockId }
    if (!checked.params.withReversible) {
      const position = await store.position()
      if (!position) return undefined
      const range = rangeAt(position)
      if (pinnedAt(range, position.lib))
        return { position, range, anchorId: undefined, cursor: await standing(store), pinned: true }
    }
    return store.snapshot(async (reader) => {
      const position = await reader.position()
      if (!position) return undefined
      const range = rangeAt(position)
      const anchorId = range.high >= 1 ? (await reader.blockByNum(range.high))?.id : undefined
      return { position, range, anchorId, cursor: await standing(reader), pinned: pinnedAt(range, position.lib) }
    })
  }

  type Begun = Awaited<ReturnType<typeof start>>

  /** One read of the page; `first` is what `start` read already for the first attempt. */
  async function attempt(
    checked: Checked,
    withLifecycles: boolean,
    first?: Begun,
  ): Promise<Attempt | 'empty' | 'forked'> {
    const begun = first ?? (await start(checked))
    if (!begun) return 'empty'
    const { range, anchorId, cursor, position, pinned } = begun
    const bounds = await pageBounds(store, range, cursor, position.lib)
    const forked = cursor?.forked === true
    // The page's executions and blocks, those at or below the LIB read above from the cache.
    const reads = kept?.at(position.lib) ?? store
    const pageStore: PageStore = {
      searchActions: (request) => store.searchActions(request),
      executionsOfActions: (seqs) => reads.executionsOfActions(seqs),
    }
    // The matches come with their transactions' executions (collectRows): each match's index
    // among them. The rows' blocks are read next: every read between the two snapshots saw the
    // chain up to the anchor, which the second one checks.
    const { rows: drafts, more } = bounds
      ? await collectRows(pageStore, checked.expr, bounds, checked.params.limit)
      : { rows: [], more: false }
    const trxIds = [...new Set(drafts.map((r) => r.trxId))]
    // The lifecycles' first reads run while the blocks are read.
    const reading = drafts.length
      ? reads.blocksByNums([...new Set(drafts.map((r) => r.blockNum))])
      : Promise.resolve(new Map<number, BlockRecord>())
    const withIdx = drafts.map((row) => {
      const first = row.execution[0].globalSequence
      const actions = [...row.actions].sort((a, b) => (a.globalSequence < b.globalSequence ? -1 : 1))
      return { ...row, actions, actionIdx: actions.map((a) => a.globalSequence - first) }
    })
    // A transaction's execution is its latest one: only executed actions are indexed.
    const actionsOf = new Map<string, readonly ActionRecord[]>(drafts.map((r) => [r.trxId, r.execution]))
    const [lifecycles, blocks] = await Promise.all([
      withLifecycles && withIdx.length
        ? lifecycle.lifecycles(trxIds, { actions: actionsOf, blocks: reading, position })
        : undefined,
      reading,
    ])
    const check =
      pinned ||
      (await store.snapshot(async (reader) => {
        if (range.high >= 1 && (await reader.blockByNum(range.high))?.id !== anchorId) return false
        if (
          cursor &&
          !cursor.forked &&
          (await reader.blockByNum(cursor.position.blockNum))?.id !== cursor.position.blockId
        )
          return false
        return true
      }))
    if (!check || withIdx.some((r) => blocks.get(r.blockNum) === undefined)) return 'forked'
    const rows = withIdx.map((r) => ({ ...r, block: blocks.get(r.blockNum)! }))
    return { rows, more, forked, lifecycles, lib: position.lib }
  }

  async function read(
    request: SearchRequest | Checked,
    withLifecycles: boolean,
    first?: Begun,
  ): Promise<{ page: SearchRowsPage; lifecycles: Map<string, TransactionLifecycle> | undefined }> {
    const checked = 'expr' in request ? request : check(request)
    const forward = checked.params.sort === 'asc'
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      const result = await attempt(checked, withLifecycles, i === 0 ? first : undefined)
      if (result === 'forked') continue
      if (result === 'empty')
        return { page: { rows: [], cursor: '', forkedHeadWarning: false, lib: 0 }, lifecycles: undefined }
      // The last match delivered in the direction of travel: a cursor resumes after its transaction.
      const cursorOf = (r: Attempt['rows'][number]) =>
        codec.encode({
          blockNum: r.blockNum,
          blockId: r.block.id,
          seq: (forward ? r.actions[r.actions.length - 1] : r.actions[0]).globalSequence,
        })
      // A row's own cursor (GraphQL's) costs an HMAC: the REST answer needs only the page's.
      const rows = result.rows.map((r) => ({
        trxId: r.trxId,
        blockNum: r.blockNum,
        blockId: r.block.id,
        actions: r.actions,
        actionIdx: r.actionIdx,
        cursor: withLifecycles ? '' : cursorOf(r),
        execution: r.execution,
        block: r.block,
      }))
      const cursor = result.more && rows.length ? cursorOf(result.rows[result.rows.length - 1]) : ''
      const page = { rows, cursor, forkedHeadWarning: result.forked, lib: result.lib }
      return { page, lifecycles: result.lifecycles }
    }
    throw SearchForkRaceError({ attempts: MAX_ATTEMPTS })
  }

  async function searchTransactions(request: SearchRequest | Checked, first?: Begun): Promise<SearchTransactionsPage> {
    const { page, lifecycles } = await read(request, true, first)
    const transactions = page.rows.map((row) => {
      const found = lifecycles?.get(row.trxId)
      // The page was checked consistent: a lifecycle missing now is a bug, not a fork (500, logged).
      if (!found) throw new Error(`no lifecycle for the matched transaction ${row.trxId} at block ${row.blockNum}`)
      return { lifecycle: found, action_idx: row.actionIdx }
    })
    return {
      cursor: page.cursor,
      transactions: transactions.length ? transactions : null,
      ...(page.forkedHeadWarning ? { forked_head_warning: true as const } : {}),
    }
  }

  async function answerBody(request: SearchRequest): Promise<SearchAnswer> {
    // A pinned page (irreversible blocks only, an irreversible cursor) never changes: its answer is kept under
    // everything that decides it, the range's bounds included (the default range ends at LIB).
    const checked = check(request)
    const begun = await start(checked)
    const key =
      answers && begun?.pinned
        ? JSON.stringify([
            request.query,
            checked.params.sort,
            checked.params.limit,
            request.cursor ?? '',
            begun.range.low,
            begun.range.high,
          ])
        : undefined
    const known = key === undefined ? undefined : answers?.get(key)
    if (known !== undefined) return known
    const page = await searchTransactions(checked, begun)
    // JSON.stringify's output for the page: the keys in the same order, each lifecycle's JSON as kept.
    const rows = page.transactions?.map(
      (t) => `{"lifecycle":${lifecycle.json(t.lifecycle)},"action_idx":${JSON.stringify(t.action_idx)}}`,
    )
    const body = Buffer.from(
      `{"cursor":${JSON.stringify(page.cursor)},"transactions":${rows ? `[${rows.join(',')}]` : 'null'}` +
        `${page.forked_head_warning ? ',"forked_head_warning":true' : ''}}`,
    )
    const answer = { body, transactions: rows?.length ?? 0 }
    // Kept only when every lifecycle on it is final too (each is, on a pinned page; this says so without a doubt).
    if (key !== undefined && (page.transactions ?? []).every((t) => lifecycle.isFinal(t.lifecycle)))
      answers?.set(key, answer)
    return answer
  }

  return {
    async searchRows(request) {
      return (await read(request, false)).page
    },
    searchTransactions: (request) => searchTransactions(request),
    searchTransactionsBody: answerBody,
  }
}
