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
   * Forward: the chunk of `termKey` holding `seq`, else the next one. Backward: the chunk holding
   * `seq`, else the previous one. Undefined past the end of the list.
   */
  chunk(termKey: number, seq: number, direction: SearchDirection): Promise<PostingChunk | undefined>
}

const FLAG_BITS: Record<SearchFlag, number> = { input: FLAG_INPUT, notif: FLAG_NOTIF, scheduled: FLAG_SCHEDULED }

/** Seeks the first match at or beyond `target` in the cursor's direction. */
interface Cursor {
  seek(target: number): Promise<SearchMatch | undefined>
}

/** Flag bits that must be set (`mask & value`) or clear (`mask & ~value`). */
interface FlagFilter {
  readonly mask: number
  readonly value: number
}

const passes = (flags: number, f: FlagFilter) => (flags & f.mask) === f.value

class TermCursor implements Cursor {
  private chunk: (PostingChunk & ChunkEntries) | undefined

  constructor(
    private readonly source: PostingSource,
    private readonly key: number,
    private readonly forward: boolean,
    private readonly filter: FlagFilter,
  ) {}

  async seek(target: number): Promise<SearchMatch | undefined> {
    let at = target
    for (;;) {
      const c = this.chunk && this.chunk.firstSeq <= at && at <= this.chunk.lastSeq ? this.chunk : await this.load(at)
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

  private async load(at: number): Promise<(PostingChunk & ChunkEntries) | undefined> {
    const chunk = await this.source.chunk(this.key, at, this.forward ? 'forward' : 'backward')
    this.chunk = chunk && { ...chunk, ...decodeEntries(chunk.firstSeq, chunk.entries) }
    return this.chunk
  }
}

/** Leapfrog intersection of positive cursors, then flag filters and negated cursors on each candidate. */
class AndCursor implements Cursor {
  constructor(
    private readonly positives: readonly Cursor[],
    private readonly negatives: readonly Cursor[],
    private readonly forward: boolean,
  ) {}

  async seek(target: number): Promise<SearchMatch | undefined> {
    let at = target
    for (;;) {
      let candidate = await this.positives[0].seek(at)
      if (!candidate) return undefined
      for (let agreed = 1, i = 1; agreed < this.positives.length; i++) {
        const m = await this.positives[i % this.positives.length].seek(candidate.seq)
        if (!m) return undefined
        if (m.seq === candidate.seq) agreed++
        else {
          candidate = m
          agreed = 1
        }
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

function compile(expr: SearchExpr, source: PostingSource, forward: boolean): Cursor {
  const all = (filter: FlagFilter) => new TermCursor(source, termKey(ALL_ACTIONS_TERM), forward, filter)
  const none: FlagFilter = { mask: 0, value: 0 }
  if ('term' in expr) return new TermCursor(source, termKey(expr.term), forward, none)
  if ('flag' in expr) return all({ mask: FLAG_BITS[expr.flag], value: expr.value ? FLAG_BITS[expr.flag] : 0 })
  if ('or' in expr) return new OrCursor(expr.or.map((e) => compile(e, source, forward)), forward)
  const parts = 'and' in expr ? expr.and : [expr]
  // Flags of an AND fold into one filter on its first list; NOTs become exclusions.
  let mask = 0
  let value = 0
  const positives: SearchExpr[] = []
  const negatives: Cursor[] = []
  for (const p of parts) {
    if ('flag' in p) {
      mask |= FLAG_BITS[p.flag]
      if (p.value) value |= FLAG_BITS[p.flag]
    } else if ('not' in p) negatives.push(compile(p.not, source, forward))
    else positives.push(p)
  }
  const filter = { mask, value }
  // The filter rides on a term list when there is one; otherwise on the list of all actions.
  const termIndex = positives.findIndex((p) => 'term' in p)
  const cursors: Cursor[] = positives.filter((_, i) => i !== termIndex).map((p) => compile(p, source, forward))
  if (termIndex >= 0) cursors.unshift(new TermCursor(source, termKey((positives[termIndex] as { term: string }).term), forward, filter))
  else if (mask !== 0 || cursors.length === 0) cursors.unshift(all(filter))
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
  const cursor = compile(query, source, forward)
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
