import { decodeEntries, seekEntry, type ChunkEntries, type PostingChunk } from './postings.ts'
import type { PostingSource, SearchMatch } from './query.ts'

/**
 * The engine's cursor over one term's posting list (query.ts composes them into AND, OR and NOT):
 * chunks read in windows in the direction of travel, prefetched for an AND's candidates, decoded
 * only when asked often.
 */

/** Candidates an AND collects from its leading list before prefetching the others' chunks for them. */
export const PREFETCH_CANDIDATES = 256

/** Seeks the first match at or beyond `target` in the cursor's direction. */
export interface Cursor {
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
    if (!this.decoded && this.scans++ < SCANS_BEFORE_DECODE)
      return seekEntry(this.chunk.firstSeq, this.chunk.entries, target, forward, filter.mask, filter.value)
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

/**
 * Whether a seek to `target` has the answer `match` that a seek to `from` had: it lies from `from` up to `match` (to
 * the list's end when there was none) in the direction of travel, where nothing else matches.
 */
export function answersAgain(forward: boolean, target: number, from: number, match: SearchMatch | undefined): boolean {
  return forward ? target >= from && (!match || target <= match.seq) : target <= from && (!match || target >= match.seq)
}

/**
 * A composite cursor (AND, OR, a transaction's spans) that answers a seek inside its last answer's stretch without
 * seeking again: an OR seeks each child from every candidate of the others, and an AND that excludes a long stretch
 * would walk it again each time.
 */
export class RememberingCursor implements Cursor {
  private last: { target: number; match: SearchMatch | undefined } | undefined

  constructor(
    private readonly inner: Cursor,
    private readonly forward: boolean,
  ) {}

  async seek(target: number): Promise<SearchMatch | undefined> {
    const last = this.last
    if (last && answersAgain(this.forward, target, last.target, last.match)) return last.match
    const match = await this.inner.seek(target)
    this.last = { target, match }
    return match
  }
}

/** Flag bits that must be set (`mask & value`) or clear (`mask & ~value`). */
export interface FlagFilter {
  readonly mask: number
  readonly value: number
}

const passes = (flags: number, f: FlagFilter) => (flags & f.mask) === f.value
export const NO_FILTER: FlagFilter = { mask: 0, value: 0 }

export class TermCursor implements Cursor {
  /** Chunks read together, in the direction of travel, for seeks from `from` on. */
  private windows: { from: number; chunks: PostingChunk[]; views: Map<number, ChunkView> }[] = []
  /** The list has nothing at or beyond this position (in the direction of travel). */
  private exhaustedFrom: number | undefined
  /** Chunks prefetched for given seek targets. */
  private readonly ahead = new Map<number, ChunkView | undefined>()
  /**
   * The last seek's target, filter and answer. Nothing passes the filter between them, so a later seek landing in that
   * stretch has the same answer: without it an OR re-walks a sparse child (a flag few actions have) from every
   * candidate of a dense one, reading the rest of its list each time.
   */
  private last: { target: number; filter: FlagFilter; match: SearchMatch | undefined } | undefined

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
    const span = chunks.length
      ? Math.max(
          1,
          chunks[chunks.length - 1].lastSeq - chunks[0].firstSeq,
          chunks[0].lastSeq - chunks[chunks.length - 1].firstSeq,
        )
      : 1
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
    const chunks = (await this.source.chunksAround(this.key, leaders, this.forward ? 'forward' : 'backward')).sort(
      (a, b) => a.lastSeq - b.lastSeq,
    )
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
    const last = this.last
    if (last && last.filter === this.filter && answersAgain(this.forward, target, last.target, last.match))
      return last.match
    const match = await this.walk(target)
    this.last = { target, filter: this.filter, match }
    return match
  }

  private async walk(target: number): Promise<SearchMatch | undefined> {
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
    if (this.exhaustedFrom !== undefined && (this.forward ? at >= this.exhaustedFrom : at <= this.exhaustedFrom))
      return undefined
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
