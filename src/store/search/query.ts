import { ALL_ACTIONS_TERM, FLAG_INPUT, FLAG_NOTIF, FLAG_SCHEDULED, decodeEntries, seekEntry, termKey, type ChunkEntries, type PostingChunk, type PostingEntry } from './postings.ts'
import { TRX_ID_PREFIX } from './terms.ts'

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
   * a transaction id: what `trx_id:` matches, with the every-action list.
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

/** Candidates an AND collects from its leading list before prefetching the others' chunks for them. */
const PREFETCH_CANDIDATES = 256
/**
 * Chunks an AND reads first from each of its lists, all at once: a list that ends within them is
 * rare and now fully loaded, and their sizes tell which list should lead.
 */
const OPENING_WINDOW = 64

const FLAG_BITS: Record<SearchFlag, number> = { input: FLAG_INPUT, notif: FLAG_NOTIF, scheduled: FLAG_SCHEDULED }

/** Seeks the first match at or beyond `target` in the cursor's direction. */
interface Cursor {
  seek(target: number): Promise<SearchMatch | undefined>
  /** Loads, in one round trip, what seeking to each of `targets` will need (a hint; may do nothing). */
  prefetch?(targets: readonly number[]): Promise<void>
  /** False only when what is loaded already shows `seq` is not in the list. */
  mayHold?(seq: number): boolean
}

/** Targets this close to the previous one are assumed to share its chunk (and checked after the read). */
const CLUSTER_GAP = 64

/** Index of the first entry >= `seq` in an ascending array. */
function lowerBound(seqs: Float64Array, seq: number): number {
  let lo = 0
  let hi = seqs.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (seqs[mid] < seq) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * Seeks into one chunk before it is decoded into arrays. A confirming list's chunk is usually
 * asked once or twice (is the candidate there?), and scanning its bytes in place allocates nothing;
 * a chunk that keeps being asked (a leading list walked entry by entry) is decoded once and then
 * binary-searched.
 */
const SCANS_BEFORE_DECODE = 2

/** A chunk as cursors read it. */
class ChunkView {
  private decoded: ChunkEntries | undefined
  private scans = 0

  constructor(readonly chunk: PostingChunk) {}

  get firstSeq(): number {
    return this.chunk.firstSeq
  }

  get lastSeq(): number {
    return this.chunk.lastSeq
  }

  /** The first entry at or after `target` (forward), or the last at or before it (backward), that passes `filter`. */
  find(target: number, forward: boolean, filter: FlagFilter): SearchMatch | undefined {
    if (!this.decoded && this.scans++ < SCANS_BEFORE_DECODE) return seekEntry(this.chunk.firstSeq, this.chunk.entries, target, forward, filter.mask, filter.value)
    const { seqs, flags } = (this.decoded ??= decodeEntries(this.chunk.firstSeq, this.chunk.entries))
    const lo = lowerBound(seqs, target)
    let i = forward ? lo : lo < seqs.length && seqs[lo] === target ? lo : lo - 1
    const step = forward ? 1 : -1
    while (i >= 0 && i < seqs.length && !passes(flags[i], filter)) i += step
    return i >= 0 && i < seqs.length ? { seq: seqs[i], flags: flags[i] } : undefined
  }

  holds(seq: number): boolean {
    return this.find(seq, true, NO_FILTER)?.seq === seq
  }
}

/** Flag bits that must be set (`mask & value`) or clear (`mask & ~value`). */
interface FlagFilter {
  readonly mask: number
  readonly value: number
}

const passes = (flags: number, f: FlagFilter) => (flags & f.mask) === f.value
const NO_FILTER: FlagFilter = { mask: 0, value: 0 }

class TermCursor implements Cursor {
  /** Chunks read together, in the direction of travel, for seeks from `from` on. */
  private windows: { from: number; chunks: PostingChunk[]; views: Map<number, ChunkView> }[] = []
  /** The list has nothing at or beyond this position (in the direction of travel). */
  private exhaustedFrom: number | undefined
  /** Chunks prefetched for given seek targets. */
  private readonly ahead = new Map<number, ChunkView | undefined>()

  constructor(
    private readonly source: PostingSource,
    readonly key: number,
    private readonly forward: boolean,
    /** Entries whose flags fail this are skipped (set on an AND's leading list). */
    public filter: FlagFilter,
    /** Chunks per read. */
    public readahead = 2,
  ) {}

  /** Reads the opening window from `at` and says how large the list looks from there. */
  async open(at: number): Promise<{ complete: boolean; bytes: number; density: number }> {
    await this.load(at)
    const chunks = this.windows[0]?.chunks ?? []
    const bytes = chunks.reduce((sum, c) => sum + c.entries.length, 0)
    const span = chunks.length ? Math.max(1, chunks[chunks.length - 1].lastSeq - chunks[0].firstSeq, chunks[0].lastSeq - chunks[chunks.length - 1].firstSeq) : 1
    return { complete: chunks.length < this.readahead, bytes, density: bytes / span }
  }

  async prefetch(targets: readonly number[]): Promise<void> {
    const wanted = targets.filter((t) => this.fromWindow(t) === 'miss' && !this.ahead.has(t))
    if (wanted.length < 2 || !this.source.chunksAround) return
    // Only the first of each cluster of close targets is asked for; the rest are answered from the
    // chunks that come back when one of them holds the target, else left to a seek of their own.
    const leaders = wanted.filter((t, i) => i === 0 || Math.abs(t - wanted[i - 1]) > CLUSTER_GAP)
    const asked = new Set(leaders)
    // Chunks never overlap, so one ascending order serves both directions.
    const chunks = (await this.source.chunksAround(this.key, leaders, this.forward ? 'forward' : 'backward')).sort((a, b) => a.lastSeq - b.lastSeq)
    const views = new Map<PostingChunk, ChunkView>()
    const load = (c: PostingChunk | undefined) => {
      if (!c) return undefined
      let view = views.get(c)
      if (!view) views.set(c, (view = new ChunkView(c)))
      return view
    }
    if (this.ahead.size > 4 * PREFETCH_CANDIDATES) this.ahead.clear()
    for (const t of wanted) {
      // Forward: the first chunk ending at or after t; backward: the last chunk starting at or before t.
      let lo = 0
      let hi = chunks.length
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        if (this.forward ? chunks[mid].lastSeq < t : chunks[mid].firstSeq <= t) lo = mid + 1
        else hi = mid
      }
      const answer = this.forward ? chunks[lo] : chunks[lo - 1]
      if (asked.has(t) || (answer && answer.firstSeq <= t && t <= answer.lastSeq)) this.ahead.set(t, load(answer))
    }
  }

  mayHold(seq: number): boolean {
    const windowed = this.fromWindow(seq)
    const chunk = windowed !== 'miss' ? windowed : this.ahead.has(seq) ? this.ahead.get(seq) : 'unknown'
    if (chunk === 'unknown') return true
    return chunk ? chunk.holds(seq) : false
  }

  /** The chunk a seek to `at` needs, if a window read for an earlier seek already has it. */
  private fromWindow(at: number): ChunkView | 'miss' {
    for (const w of this.windows) {
      if (this.forward ? at < w.from : at > w.from) continue
      const i = w.chunks.findIndex((c) => (this.forward ? c.lastSeq >= at : c.firstSeq <= at))
      if (i < 0) continue
      let view = w.views.get(i)
      if (!view) w.views.set(i, (view = new ChunkView(w.chunks[i])))
      return view
    }
    return 'miss'
  }

  async seek(target: number): Promise<SearchMatch | undefined> {
    let at = target
    for (;;) {
      let c: ChunkView | undefined
      const windowed = this.fromWindow(at)
      if (windowed !== 'miss') c = windowed
      else if (this.ahead.has(at)) c = this.ahead.get(at)
      else c = await this.load(at)
      if (!c) return undefined
      const m = c.find(at, this.forward, this.filter)
      if (m) return m
      at = this.forward ? c.lastSeq + 1 : c.firstSeq - 1
      if (at < 0) return undefined
    }
  }

  private async load(at: number): Promise<ChunkView | undefined> {
    if (this.exhaustedFrom !== undefined && (this.forward ? at >= this.exhaustedFrom : at <= this.exhaustedFrom)) return undefined
    const chunks = await this.source.chunks(this.key, at, this.forward ? 'forward' : 'backward', this.readahead)
    if (chunks.length === 0) {
      this.exhaustedFrom = at
      return undefined
    }
    // A read that came back short reached the end of the list: no round trip to find that out later.
    if (chunks.length < this.readahead) {
      const end = chunks[chunks.length - 1]
      this.exhaustedFrom = this.forward ? end.lastSeq + 1 : end.firstSeq - 1
    }
    // The newest window first; a few are kept, since a leading list is walked ahead for prefetching, then again.
    this.windows.unshift({ from: at, chunks, views: new Map() })
    this.windows.length = Math.min(this.windows.length, 4)
    return this.fromWindow(at) as ChunkView
  }
}

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
    if (this.prefetchedTo !== undefined && (this.forward ? first.seq <= this.prefetchedTo : first.seq >= this.prefetchedTo)) return
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
      for (let i = 1; i < this.positives.length; ) {
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
  if ('term' in expr && expr.term.startsWith(TRX_ID_PREFIX)) return new SpanCursor(await source.transactionSpans(expr.term.slice(TRX_ID_PREFIX.length)), all(NO_FILTER), forward)
  if ('term' in expr) return new TermCursor(source, termKey(expr.term), forward, NO_FILTER)
  if ('flag' in expr) return all({ mask: FLAG_BITS[expr.flag], value: expr.value ? FLAG_BITS[expr.flag] : 0 })
  if ('or' in expr) return new OrCursor(await Promise.all(expr.or.map((e) => compile(e, source, forward, at))), forward)
  const parts = 'and' in expr ? expr.and : [expr]
  // Flags of an AND fold into one filter on its leading list; NOTs become exclusions.
  let mask = 0
  let value = 0
  const terms: string[] = []
  const others: SearchExpr[] = []
  const negatives: Cursor[] = []
  for (const p of parts) {
    if ('flag' in p) {
      mask |= FLAG_BITS[p.flag]
      if (p.value) value |= FLAG_BITS[p.flag]
    } else if ('not' in p) negatives.push(await compile(p.not, source, forward, at))
    else if ('term' in p && !p.term.startsWith(TRX_ID_PREFIX)) terms.push(p.term)
    else others.push(p)
  }
  const filter = { mask, value }
  // The rarest term leads (the others only confirm its candidates) and carries the flag filter:
  // lists that end within their opening window by size, then the others by density.
  const termCursors = terms.map((t) => new TermCursor(source, termKey(t), forward, NO_FILTER, terms.length > 1 ? OPENING_WINDOW : undefined))
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
  const spans = others.filter((o): o is { readonly term: string } => 'term' in o)
  const cursors: Cursor[] = []
  for (const o of spans) cursors.push(await compile(o, source, forward, at))
  cursors.push(...termCursors)
  for (const o of others) if (!('term' in o)) cursors.push(await compile(o, source, forward, at))
  if (termCursors.length === 0 && (mask !== 0 || cursors.length === 0)) {
    // Flags with only a span to filter: the every-action list confirms the span's candidates.
    if (spans.length) cursors.push(all(filter))
    else cursors.unshift(all(filter))
  }
  if (cursors.length === 1 && negatives.length === 0) return cursors[0]
  return new AndCursor(cursors, negatives, forward, source.concurrentReads === true)
}

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
export async function searchPostings(source: PostingSource, query: SearchExpr, range: SearchRange): Promise<SearchMatch[]> {
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
