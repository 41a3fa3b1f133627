import { AntlerError } from '../antelope/index.ts'
import type { LiveStep, Subscription } from '../live/index.ts'
import { parseSearchQuery, type SearchPosition } from '../search/index.ts'
import type { SearchExpr, Step, StepPayload } from '../store/index.ts'
import type { GraphqlServices, TransportBacklog } from './context.ts'
import type { LiveRow } from './live-match.ts'
import type { SearchQueryArgs } from './query-resolvers.ts'
import { pageResults, receiverRunners, searchResult, type SearchResult } from './results.ts'
import { TransactionTraceNode } from './trace-model.ts'

/** The arguments of the `searchTransactionsForward` subscription. */
/** The `searchTransactionsForward` subscription's arguments (limit 0 = unlimited). */
export interface ForwardStreamArgs extends SearchQueryArgs {
  readonly liveMarkerInterval: number
}

/** One step's results with the rows they came from (a resumed step keeps only some of them). */
type StepResults = readonly { readonly row: LiveRow; readonly result: SearchResult }[]

/** Transactions per search page while a subscription replays irreversible history. */
const HISTORY_PAGE = 200

const isApply = (s: Step) => s.type === 'new' || s.type === 'redo'

/** Where a stream starts: irreversible history from a block (with a search cursor), or inside the step log. */
type Start =
  | { readonly kind: 'history'; readonly low: number; readonly cursor: string | undefined }
  | { readonly kind: 'log'; readonly partial: SearchPosition & { readonly step: NonNullable<SearchPosition['step']> } }

/**
 * A `searchTransactionsForward` subscription: the matches of irreversible history, read by search pages, then the step
 * log from the live hub (shared by every subscriber), matched block by block (live-match.ts). Every result carries a
 * cursor; a fork's undo step withdraws the block's delivered results newest first (`undo: true`) before the new
 * branch's blocks come. Resuming with a cursor continues exactly after it: an irreversible position through history,
 * any other through the step that delivered it (the cursor names it), so a cursor whose block was forked out since
 * resumes with the withdrawals the client has not seen.
 */
export class ForwardStream implements AsyncIterableIterator<SearchResult> {
  private readonly inner: AsyncGenerator<SearchResult>
  private closed = false
  private subscription: Subscription | undefined
  private wake: (() => void) | undefined

  constructor(
    private readonly services: GraphqlServices,
    private readonly args: ForwardStreamArgs,
    private readonly backlog?: TransportBacklog,
  ) {
    this.inner = this.run()
  }

  [Symbol.asyncIterator](): this {
    return this
  }

  next(): Promise<IteratorResult<SearchResult>> {
    return this.inner.next()
  }

  /** Ends the stream at once, even while it waits for the chain (a generator's own return() would wait). */
  async return(): Promise<IteratorResult<SearchResult>> {
    this.close()
    return { done: true, value: undefined }
  }

  async throw(error: unknown): Promise<IteratorResult<SearchResult>> {
    this.close()
    throw error
  }

  private close(): void {
    this.closed = true
    this.subscription?.close()
    this.wake?.()
  }

  private checkBacklog(): void {
    const backlog = this.backlog
    if (!backlog || backlog.bufferedBytes() <= backlog.maxBufferedBytes) return
    const error = new AntlerError('ws_consumer_too_slow_error', {
      buffered_bytes: backlog.bufferedBytes(),
      limit_bytes: backlog.maxBufferedBytes,
    })
    backlog.abort?.(error)
    throw error
  }

  private async *run(): AsyncGenerator<SearchResult> {
    const { services, args } = this
    const expr = parseSearchQuery(args.query)
    if (!Number.isSafeInteger(args.limit) || args.limit < 0)
      throw new AntlerError('request_validation_error', { errors: { limit: ['limit must be 0 (unlimited) or more'] } })
    const cursor = args.cursor ? services.cursors.decode(args.cursor) : undefined
    const position = await services.store.position()
    const lib = position?.lib ?? 0
    const virtualHead = args.irreversibleOnly ? lib : (position?.head.blockNum ?? 0)
    // Subscriptions first take 1 from any bound below 1 (so 0 and an absent low bound are the head), then count
    // negative bounds from the head (LIB when irreversible only).
    const resolve = (n: number) => {
      const shifted = n < 1 ? n - 1 : n
      return shifted < 0 ? virtualHead + shifted + 1 : shifted
    }
    const low = Math.max(1, resolve(args.lowBlockNum ?? 0))
    const high = args.highBlockNum === null || args.highBlockNum === undefined ? Infinity : resolve(args.highBlockNum)
    let remaining = args.limit > 0 ? args.limit : Infinity

    const start = cursor ? await this.resumeAt(cursor, lib) : ({ kind: 'history', low, cursor: undefined } as Start)
    // History: irreversible blocks up to `through`, by search pages.
    const through = Math.min(lib, high)
    if (start.kind === 'history' && start.low <= through) {
      let pageCursor = start.cursor
      for (;;) {
        const page = await services.search.searchRows({
          query: args.query,
          bounds: { lowBlockNum: start.low, highBlockNum: through },
          cursor: pageCursor,
          limit: Math.min(HISTORY_PAGE, remaining),
          sort: 'asc',
          withReversible: false,
          maxLimit: HISTORY_PAGE,
        })
        // LIB as the stream started (follow() starts there), not as the page was read: never ahead of the log.
        for (const result of await pageResults(services, page.rows, Math.min(page.lib, lib))) {
          if (this.closed) return
          this.checkBacklog()
          yield result
          if (--remaining === 0) return
        }
        if (!page.cursor) break
        pageCursor = page.cursor
      }
    }
    if (this.closed || (start.kind === 'history' && high <= lib)) return

    // The step log after what history covered (or from the cursor's step).
    const afterSeq = start.kind === 'log' ? start.partial.step.seq - 1 : await this.anchorSeq(lib)
    const floor = start.kind === 'log' ? 0 : Math.max(start.low, lib + 1)
    // Replaying from a cursor's step: LIB as it stood at that step (the replayed irreversible steps raise it).
    const followLib =
      start.kind === 'log' ? Math.min(lib, (await services.store.libBeforeStep(start.partial.step.seq)) ?? 0) : lib
    yield* this.follow(
      { expr, afterSeq, floor, high, lib: followLib, partial: start.kind === 'log' ? start.partial : undefined },
      () => --remaining === 0,
    )
  }

  /** Where a cursor resumes (see the class comment). */
  private async resumeAt(cursor: SearchPosition, lib: number): Promise<Start> {
    const store = this.services.store
    const stored = await store.blockByNum(cursor.blockNum)
    if (stored?.id === cursor.blockId && cursor.blockNum <= lib && !cursor.step?.undo)
      return { kind: 'history', low: cursor.blockNum, cursor: this.args.cursor ?? undefined }
    if (cursor.step) return { kind: 'log', partial: { ...cursor, step: cursor.step } }
    // A search cursor on a reversible (or forked-out) block: the step that last applied it.
    const steps = await store.stepsOfBlock(cursor.blockId)
    const applied = (
      this.args.irreversibleOnly ? steps.filter((s) => s.type === 'irreversible') : steps.filter(isApply)
    ).at(-1)
    if (applied) return { kind: 'log', partial: { ...cursor, step: { seq: applied.seq, undo: false } } }
    // A block this store never saw: from the lowest block it could differ at, with nothing to withdraw.
    return { kind: 'history', low: Math.max(1, Math.min(cursor.blockNum, lib + 1)), cursor: undefined }
  }

  /** The step that made LIB's block what it is (the irreversible step, irreversible only): the log resumes after it. */
  private async anchorSeq(lib: number): Promise<number> {
    if (lib < 1) return 0
    const block = await this.services.store.blockByNum(lib)
    const steps = block ? await this.services.store.stepsOfBlock(block.id) : []
    const kind = this.args.irreversibleOnly ? steps.filter((s) => s.type === 'irreversible') : steps.filter(isApply)
    return kind.at(-1)?.seq ?? 0
  }

  /** The log's steps from the hub, one batch at a time (the hub waits for each: its bounds hold a slow client). */
  private async *follow(
    at: {
      expr: SearchExpr
      afterSeq: number
      floor: number
      high: number
      lib: number
      partial: (SearchPosition & { step: NonNullable<SearchPosition['step']> }) | undefined
    },
    counted: () => boolean,
  ): AsyncGenerator<SearchResult> {
    const { args, services } = this
    const exprKey = JSON.stringify(at.expr)
    let lib = at.lib
    let inbox: readonly LiveStep[] | undefined
    let release: (() => void) | undefined
    let failure: unknown
    const subscription = services.live.subscribe({
      afterSeq: at.afterSeq,
      onSteps: (steps) =>
        new Promise<void>((resolve) => {
          inbox = steps
          release = resolve
          this.wake?.()
        }),
      onError: (error) => {
        failure = error ?? new Error('live subscription ended')
        this.backlog?.abort?.(failure)
        this.wake?.()
      },
    })
    this.subscription = subscription
    let sinceMarker = 0
    try {
      for (;;) {
        while (!inbox && failure === undefined && !this.closed) await new Promise<void>((r) => (this.wake = r))
        if (this.closed) return
        if (failure !== undefined) throw failure
        const steps = inbox!
        inbox = undefined
        for (const { step, payload } of steps) {
          if (this.closed) return
          if (step.type === 'irreversible') lib = Math.max(lib, step.blockNum)
          const apply = args.irreversibleOnly ? step.type === 'irreversible' : isApply(step)
          const undo = !args.irreversibleOnly && step.type === 'undo'
          if ((apply || undo) && step.blockNum >= at.floor && step.blockNum <= at.high && payload) {
            for (const result of await this.stepResults(step, payload, undo, lib, at.expr, exprKey, at.partial)) {
              this.checkBacklog()
              yield result
              if (!undo && counted()) return
            }
            if (apply && args.liveMarkerInterval > 0 && subscription.state === 'live') {
              if (++sinceMarker >= args.liveMarkerInterval) {
                sinceMarker = 0
                yield (await this.services.stepResults<SearchResult>(payload, `marker|${step.seq}|${lib}`, async () =>
                  this.marker(step, payload, lib),
                )) as SearchResult
              }
            }
          }
          // Past the range's end once it can no longer change.
          if (at.high !== Infinity && step.type === 'irreversible' && step.blockNum >= at.high) return
        }
        release?.()
      }
    } finally {
      subscription.close()
      release?.()
    }
  }

  /** One step's results: the block's matches in execution order, or withdrawn newest first. */
  private async stepResults(
    step: Step,
    payload: StepPayload,
    undo: boolean,
    lib: number,
    expr: SearchExpr,
    exprKey: string,
    partial: (SearchPosition & { step: NonNullable<SearchPosition['step']> }) | undefined,
  ): Promise<SearchResult[]> {
    let all = (await this.services.stepResults<StepResults | SearchResult>(
      payload,
      `${step.seq}|${+undo}|${lib}|${exprKey}`,
      () => this.buildStepResults(step, payload, undo, lib, expr, exprKey),
    )) as StepResults
    if (partial && step.seq === partial.step.seq)
      all = partial.step.undo
        ? all.filter(({ row }) => row.firstSeq <= partial.seq)
        : all.filter(({ row }) => row.firstSeq > partial.seq)
    return all.map(({ result }) => result)
  }

  private async buildStepResults(
    step: Step,
    payload: StepPayload,
    undo: boolean,
    lib: number,
    expr: SearchExpr,
    exprKey: string,
  ): Promise<StepResults> {
    const rows: readonly LiveRow[] = await this.services.matcher.matches(payload, expr, exprKey)
    if (rows.length === 0) return []
    const decode = await this.services.matcher.decoder(payload)
    const blockRows = { changes: payload.rowChanges, runners: receiverRunners(payload.actions) }
    const ordered = undo ? [...rows].reverse() : rows
    return ordered.map((row) => ({
      row,
      result: searchResult({
        undo,
        cursor: this.services.cursors.encode({
          blockNum: step.blockNum,
          blockId: step.blockId,
          seq: undo ? row.firstSeq - 1 : row.lastMatchSeq,
          step: { seq: step.seq, undo },
        }),
        lib,
        block: payload.block,
        trace: new TransactionTraceNode({
          block: payload.block,
          transaction: row.transaction,
          execution: row.execution,
          matching: row.matching,
          decode,
          rows: async () => blockRows,
        }),
      }),
    }))
  }

  /** A live marker: no trace, a cursor after the whole block. */
  private marker(step: Step, payload: StepPayload, lib: number): SearchResult {
    const cursor = this.services.cursors.encode({
      blockNum: step.blockNum,
      blockId: step.blockId,
      seq: payload.actions.at(-1)?.globalSequence ?? 0,
      step: { seq: step.seq, undo: false },
    })
    return searchResult({ undo: false, cursor, lib, block: payload.block, trace: null })
  }
}
