import { ALL_ACTIONS_TERM, FLAG_INPUT, FLAG_NOTIF, FLAG_SCHEDULED, decodeEntries, termKey, type ChunkEntries, type PostingChunk } from './postings.ts'

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
export interface SearchMatch {
  readonly seq: number
  readonly flags: number
}

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
  /** How many chunks the term's list has, counted up to `cap`: a cheap estimate of how rare it is. */
  chunkCount(termKey: number, cap: number): Promise<number>
}

/** Candidates an AND collects from its leading list before prefetching the others' chunks for them. */
const PREFETCH_CANDIDATES = 64
/** Chunk counts above this all look equally dense to the AND ordering (a dense term has one chunk per 256 entries). */
const ESTIMATE_CAP = 1_000
/** Chunks per read of an AND's leading list: a rare list comes in one or two reads. */
const LEADING_READAHEAD = 64

const FLAG_BITS: Record<SearchFlag, number> = { input: FLAG_INPUT, notif: FLAG_NOTIF, scheduled: FLAG_SCHEDULED }

/** Seeks the first match at or beyond `target` in the cursor's direction. */
interface Cursor {
  seek(target: number): Promise<SearchMatch | undefined>
  /** Loads, in one round trip, what seeking to each of `targets` will need (a hint; may do nothing). */
  prefetch?(targets: readonly number[]): Promise<void>
}

type LoadedChunk = PostingChunk & ChunkEntries
const loaded = (chunk: PostingChunk): LoadedChunk => ({ ...chunk, ...decodeEntries(chunk.firstSeq, chunk.entries) })

/** Flag bits that must be set (`mask & value`) or clear (`mask & ~value`). */
interface FlagFilter {
  readonly mask: number
  readonly value: number
}

const passes = (flags: number, f: FlagFilter) => (flags & f.mask) === f.value

class TermCursor implements Cursor {
  /** Chunks read together, in the direction of travel, for seeks from `from` on. */
  private window: { from: number; chunks: PostingChunk[]; decoded: Map<number, LoadedChunk> } | undefined
  /** Chunks prefetched for given seek targets. */
  private readonly ahead = new Map<number, LoadedChunk | undefined>()

  constructor(
    private readonly source: PostingSource,
    readonly key: number,
    private readonly forward: boolean,
    private readonly filter: FlagFilter,
    /** Chunks per read: a whole rare list at once, one chunk at a time of a dense one. */
    private readonly readahead = 2,
  ) {}

  async prefetch(targets: readonly number[]): Promise<void> {
    const wanted = targets.filter((t) => this.fromWindow(t) === 'miss' && !this.ahead.has(t))
    if (wanted.length < 2 || !this.source.chunksAround) return
    // Chunks never overlap, so one ascending order serves both directions.
    const chunks = (await this.source.chunksAround(this.key, wanted, this.forward ? 'forward' : 'backward')).sort((a, b) => a.lastSeq - b.lastSeq)
    const decoded = new Map<PostingChunk, LoadedChunk>()
    const load = (c: PostingChunk | undefined) => {
      if (!c) return undefined
      let l = decoded.get(c)
      if (!l) decoded.set(c, (l = loaded(c)))
      return l
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
      this.ahead.set(t, load(this.forward ? chunks[lo] : chunks[lo - 1]))
    }
  }

  /** The chunk a seek to `at` needs, if the window read for an earlier seek already has it. */
  private fromWindow(at: number): LoadedChunk | 'miss' {
    const w = this.window
    if (!w || (this.forward ? at < w.from : at > w.from)) return 'miss'
    const i = w.chunks.findIndex((c) => (this.forward ? c.lastSeq >= at : c.firstSeq <= at))
    if (i < 0) return 'miss'
    let chunk = w.decoded.get(i)
    if (!chunk) w.decoded.set(i, (chunk = loaded(w.chunks[i])))
    return chunk
  }

  async seek(target: number): Promise<SearchMatch | undefined> {
    let at = target
    for (;;) {
      let c: LoadedChunk | undefined
      const windowed = this.fromWindow(at)
      if (windowed !== 'miss') c = windowed
      else if (this.ahead.has(at)) c = this.ahead.get(at)
      else c = await this.load(at)
      if (!c) return undefined
      // Binary search for the first entry at or beyond `at` in this direction, then skip filtered ones.
      let lo = 0
      let hi = c.seqs.length
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        if (c.seqs[mid] < at) lo = mid + 1
        else hi = mid
      }
      let i = this.forward ? lo : lo < c.seqs.length && c.seqs[lo] === at ? lo : lo - 1
      const step = this.forward ? 1 : -1
      while (i >= 0 && i < c.seqs.length && !passes(c.flags[i], this.filter)) i += step
      if (i >= 0 && i < c.seqs.length) return { seq: c.seqs[i], flags: c.flags[i] }
      at = this.forward ? c.lastSeq + 1 : c.firstSeq - 1
      if (at < 0) return undefined
    }
  }

  private async load(at: number): Promise<LoadedChunk | undefined> {
    const chunks = await this.source.chunks(this.key, at, this.forward ? 'forward' : 'backward', this.readahead)
    if (chunks.length === 0) return undefined
    this.window = { from: at, chunks, decoded: new Map() }
    return this.fromWindow(at) as LoadedChunk
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
    await Promise.all([...this.positives.slice(1), ...this.negatives].map((c) => c.prefetch?.(targets)))
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

async function compile(expr: SearchExpr, source: PostingSource, forward: boolean): Promise<Cursor> {
  const all = (filter: FlagFilter) => new TermCursor(source, termKey(ALL_ACTIONS_TERM), forward, filter)
  const none: FlagFilter = { mask: 0, value: 0 }
  if ('term' in expr) return new TermCursor(source, termKey(expr.term), forward, none)
  if ('flag' in expr) return all({ mask: FLAG_BITS[expr.flag], value: expr.value ? FLAG_BITS[expr.flag] : 0 })
  if ('or' in expr) return new OrCursor(await Promise.all(expr.or.map((e) => compile(e, source, forward))), forward)
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
    } else if ('not' in p) negatives.push(await compile(p.not, source, forward))
    else if ('term' in p) terms.push(p.term)
    else others.push(p)
  }
  const filter = { mask, value }
  // The rarest term leads (the others only confirm its candidates) and carries the flag filter.
  const keys = terms.map(termKey)
  const sizes = keys.length > 1 ? await Promise.all(keys.map((k) => source.chunkCount(k, ESTIMATE_CAP))) : [0]
  const order = keys.map((_, i) => i).sort((a, b) => sizes[a] - sizes[b])
  const readahead = (size: number) => (keys.length === 1 ? undefined : size < ESTIMATE_CAP ? LEADING_READAHEAD : 1)
  const cursors: Cursor[] = order.map((i, rank) => new TermCursor(source, keys[i], forward, rank === 0 ? filter : none, readahead(sizes[i])))
  for (const o of others) cursors.push(await compile(o, source, forward))
  if (keys.length === 0 && (mask !== 0 || cursors.length === 0)) cursors.unshift(all(filter))
  if (cursors.length === 1 && negatives.length === 0) return cursors[0]
  return new AndCursor(cursors, negatives, forward)
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
  const cursor = await compile(query, source, forward)
  const out: SearchMatch[] = []
  let at = range.fromSeq ?? (forward ? 0 : Number.MAX_SAFE_INTEGER)
  const stop = range.toSeq ?? (forward ? Number.MAX_SAFE_INTEGER : 0)
  while (out.length < range.limit) {
    const m = await cursor.seek(at)
    if (!m || (forward ? m.seq > stop : m.seq < stop)) break
    out.push(m)
    at = forward ? m.seq + 1 : m.seq - 1
  }
  return out
}
