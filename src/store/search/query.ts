import {
  ALL_ACTIONS_TERM,
  FLAG_INPUT,
  FLAG_NOTIF,
  FLAG_SCHEDULED,
  termKey,
  type PostingChunk,
  type PostingEntry,
} from './postings.ts'
import {
  NO_FILTER,
  PREFETCH_CANDIDATES,
  RememberingCursor,
  TermCursor,
  type Cursor,
  type FlagFilter,
} from './term-cursor.ts'
import { TRX_ID_PREFIX } from './terms.ts'
import { TRX_ID } from '../common-sql.ts'

/** A search query as the store evaluates it; the API parses the query language into this. */
export type SearchExpr =
  | { readonly term: string }
  | { readonly flag: SearchFlag; readonly value: boolean }
  | { readonly and: readonly SearchExpr[] }
  | { readonly or: readonly SearchExpr[] }
  | { readonly not: SearchExpr }

export type SearchFlag = 'input' | 'notif' | 'scheduled'
export type SearchDirection = 'forward' | 'backward'

/** A matching action: its global sequence and its flags (FLAG_*). */
export type SearchMatch = PostingEntry

/** Where posting chunks come from: an adapter's one indexed read. */
export interface PostingSource {
  /**
   * Consecutive chunks of `termKey`'s list in the direction of travel, starting with the one holding
   * `seq` (else the next one forward, the previous one backward), at most `atMost`; [] past the end.
   */
  chunks(termKey: number, seq: number, direction: SearchDirection, atMost: number): Promise<PostingChunk[]>
  /**
   * The distinct first chunks `chunks()` would answer for each of `seqs`, in one round trip (or
   * a constant number of statements). Optional: cursors then seek one chunk at a time.
   */
  chunksAround?(termKey: number, seqs: readonly number[], direction: SearchDirection): Promise<PostingChunk[]>
  /**
   * The global-sequence spans (first and last, inclusive, ascending) of the stored executions of
   * a transaction id (64 lowercase hex digits: the engine asks for no other): what `trx_id:`
   * matches, with the every-action list.
   */
  transactionSpans(trxId: string): Promise<SeqSpan[]>
  /**
   * Reads may run at once (a pool of connections, each a round trip away): an AND then prefetches
   * all its confirming lists together instead of in cascade, where each list is read only for the
   * candidates the previous ones may hold (less work when every read is local and serial).
   */
  readonly concurrentReads?: boolean
}

/** An inclusive range of global sequences. */
export interface SeqSpan {
  readonly firstSeq: number
  readonly lastSeq: number
}

/**
 * Chunks an AND reads first from each of its lists, all at once: a list that ends within them is
 * rare and now fully loaded, and their sizes tell which list should lead.
 */
const OPENING_WINDOW = 64

const FLAG_BITS: Record<SearchFlag, number> = { input: FLAG_INPUT, notif: FLAG_NOTIF, scheduled: FLAG_SCHEDULED }

/**
 * `trx_id:<id>`: the indexed actions (the every-action list, which carries their flags) inside
 * the transaction's spans. A span is a handful of actions, so each seek is one chunk of that list.
 */
class SpanCursor implements Cursor {
  constructor(
    private readonly spans: readonly SeqSpan[],
    private readonly actions: Cursor,
    private readonly forward: boolean,
  ) {}

  async seek(target: number): Promise<SearchMatch | undefined> {
    const spans = this.forward ? this.spans : [...this.spans].reverse()
    for (const span of spans) {
      if (this.forward ? span.lastSeq < target : span.firstSeq > target) continue
      const m = await this.actions.seek(this.forward ? Math.max(target, span.firstSeq) : Math.min(target, span.lastSeq))
      if (m && m.seq >= span.firstSeq && m.seq <= span.lastSeq) return m
    }
    return undefined
  }
}

/** Leapfrog intersection of positive cursors, then flag filters and negated cursors on each candidate. */
class AndCursor implements Cursor {
  /** The leading list's candidates are prefetched for the other lists up to here. */
  private prefetchedTo: number | undefined

  constructor(
    private readonly positives: readonly Cursor[],
    private readonly negatives: readonly Cursor[],
    private readonly forward: boolean,
    private readonly concurrentReads: boolean,
  ) {}

  /** Collects the leading list's next candidates and has every other list load their chunks at once. */
  private async prefetchFrom(first: SearchMatch): Promise<void> {
    if (
      this.prefetchedTo !== undefined &&
      (this.forward ? first.seq <= this.prefetchedTo : first.seq >= this.prefetchedTo)
    )
      return
    const targets = [first.seq]
    for (let m: SearchMatch | undefined = first; targets.length < PREFETCH_CANDIDATES; targets.push(m.seq)) {
      m = await this.positives[0].seek(this.forward ? m.seq + 1 : m.seq - 1)
      if (!m) break
    }
    this.prefetchedTo = targets[targets.length - 1]
    if (this.concurrentReads) {
      await Promise.all([...this.positives.slice(1), ...this.negatives].map((c) => c.prefetch?.(targets)))
      return
    }
    // In cascade: each confirming list is read for the candidates the previous ones may hold.
    let remaining = targets
    for (const c of this.positives.slice(1)) {
      if (!c.prefetch || remaining.length === 0) break
      await c.prefetch(remaining)
      if (c.mayHold) remaining = remaining.filter((t) => c.mayHold?.(t))
    }
    await Promise.all(this.negatives.map((c) => c.prefetch?.(remaining)))
  }

  async seek(target: number): Promise<SearchMatch | undefined> {
    let at = target
    for (;;) {
      let candidate = await this.positives[0].seek(at)
      if (!candidate) return undefined
      await this.prefetchFrom(candidate)
      // The leading (rarest) list proposes; each other list confirms in turn. A list that skips
      // ahead sends the search back to the leading list from there, so dense lists are only
      // probed at candidates of the rare one.
      for (let i = 1; i < this.positives.length;) {
        const m = await this.positives[i].seek(candidate.seq)
        if (!m) return undefined
        if (m.seq === candidate.seq) {
          i++
          continue
        }
        candidate = await this.positives[0].seek(m.seq)
        if (!candidate) return undefined
        await this.prefetchFrom(candidate)
        i = 1
      }
      let excluded = false
      for (const n of this.negatives) if ((await n.seek(candidate.seq))?.seq === candidate.seq) excluded = true
      if (!excluded) return candidate
      at = this.forward ? candidate.seq + 1 : candidate.seq - 1
    }
  }
}

class OrCursor implements Cursor {
  constructor(
    private readonly children: readonly Cursor[],
    private readonly forward: boolean,
  ) {}

  async seek(target: number): Promise<SearchMatch | undefined> {
    let best: SearchMatch | undefined
    for (const child of this.children) {
      const m = await child.seek(target)
      if (m && (!best || (this.forward ? m.seq < best.seq : m.seq > best.seq))) best = m
    }
    return best
  }
}

async function compile(expr: SearchExpr, source: PostingSource, forward: boolean, at: number): Promise<Cursor> {
  const all = (filter: FlagFilter) => new TermCursor(source, termKey(ALL_ACTIONS_TERM), forward, filter)
  // An id that cannot be stored (not 64 lowercase hex digits) has no span.
  const spansOf = (id: string) => (TRX_ID.test(id) ? source.transactionSpans(id) : Promise.resolve([]))
  const spanOf = async (term: string) =>
    new RememberingCursor(
      new SpanCursor(await spansOf(term.slice(TRX_ID_PREFIX.length)), all(NO_FILTER), forward),
      forward,
    )
  if ('term' in expr)
    return expr.term.startsWith(TRX_ID_PREFIX)
      ? spanOf(expr.term)
      : new TermCursor(source, termKey(expr.term), forward, NO_FILTER)
  if ('flag' in expr) return all({ mask: FLAG_BITS[expr.flag], value: expr.value ? FLAG_BITS[expr.flag] : 0 })
  if ('or' in expr) {
    const children = await Promise.all(expr.or.map((e) => compile(e, source, forward, at)))
    return new RememberingCursor(new OrCursor(children, forward), forward)
  }
  const parts = 'and' in expr ? expr.and : [expr]
  // Flags of an AND fold into one filter on its leading list; NOTs become exclusions.
  let mask = 0
  let value = 0
  const terms: string[] = []
  const spans: Cursor[] = []
  const others: SearchExpr[] = []
  const negatives: Cursor[] = []
  let contradiction = false
  for (const p of parts) {
    if ('flag' in p) {
      const bit = FLAG_BITS[p.flag]
      // `input:true AND input:false`: no action has both.
      if (mask & bit && (value & bit) !== (p.value ? bit : 0)) contradiction = true
      mask |= bit
      if (p.value) value |= bit
    } else if ('not' in p) negatives.push(await compile(p.not, source, forward, at))
    else if ('term' in p && p.term.startsWith(TRX_ID_PREFIX)) spans.push(await spanOf(p.term))
    else if ('term' in p) terms.push(p.term)
    else others.push(p)
  }
  if (contradiction) return NOTHING
  const filter = { mask, value }
  // The rarest term leads (the others only confirm its candidates) and carries the flag filter:
  // lists that end within their opening window by size, then the others by density.
  const termCursors = terms.map(
    (t) => new TermCursor(source, termKey(t), forward, NO_FILTER, terms.length > 1 ? OPENING_WINDOW : undefined),
  )
  if (termCursors.length > 1) {
    const sizes = await Promise.all(termCursors.map((c) => c.open(at)))
    const rank = (i: number) => (sizes[i].complete ? sizes[i].bytes : Number.MAX_SAFE_INTEGER / 2 + sizes[i].density)
    const order = termCursors.map((_, i) => i).sort((a, b) => rank(a) - rank(b))
    termCursors.splice(0, termCursors.length, ...order.map((i) => termCursors[i]))
    // Past the opening window, the confirming lists are read a chunk at a time (or prefetched).
    for (const c of termCursors.slice(1)) c.readahead = 1
  }
  if (termCursors.length) termCursors[0].filter = filter
  // A transaction's span holds a few actions: it leads, when the AND has one.
  const cursors: Cursor[] = [...spans, ...termCursors]
  for (const o of others) cursors.push(await compile(o, source, forward, at))
  if (termCursors.length === 0 && (mask !== 0 || cursors.length === 0)) {
    // Flags with only a span to filter: the every-action list confirms the span's candidates.
    if (spans.length) cursors.push(all(filter))
    else cursors.unshift(all(filter))
  }
  if (cursors.length === 1 && negatives.length === 0) return cursors[0]
  return new RememberingCursor(new AndCursor(cursors, negatives, forward, source.concurrentReads === true), forward)
}

/** The cursor of an AND no action can satisfy. */
const NOTHING: Cursor = { seek: async () => undefined }

/** Query bounds: start (inclusive) and stop (inclusive) global sequences, in the direction of travel. */
export interface SearchRange {
  readonly direction: SearchDirection
  readonly fromSeq?: number
  readonly toSeq?: number
  readonly limit: number
}

/**
 * Matching actions in global-sequence order (or reverse), from `fromSeq`, stopping at `toSeq` or
 * after `limit` matches: the lists are walked only as far as the answer needs.
 */
export async function searchPostings(
  source: PostingSource,
  query: SearchExpr,
  range: SearchRange,
): Promise<SearchMatch[]> {
  const forward = range.direction === 'forward'
  let at = range.fromSeq ?? (forward ? 0 : Number.MAX_SAFE_INTEGER)
  const cursor = await compile(query, source, forward, at)
  const out: SearchMatch[] = []
  const stop = range.toSeq ?? (forward ? Number.MAX_SAFE_INTEGER : 0)
  while (out.length < range.limit) {
    const m = await cursor.seek(at)
    if (!m || (forward ? m.seq > stop : m.seq < stop)) break
    out.push(m)
    at = forward ? m.seq + 1 : m.seq - 1
  }
  return out
}
