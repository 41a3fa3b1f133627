import type { BlockBatch } from '../types.ts'

/**
 * Search postings. Every action is one entry (its global sequence plus the flags below) in the
 * posting list of each of its terms. A list is stored as chunks: the entries one store write adds
 * to one term, delta-encoded as varints. Chunks keep the index small (about two bytes per
 * posting in dense lists) and writes cheap (one row per term per write, not per posting).
 */

/** Flags carried by every entry, so `input:`, `notif:` and `scheduled:` filter without a lookup. */
export const FLAG_INPUT = 1
export const FLAG_NOTIF = 2
export const FLAG_SCHEDULED = 4

/** The term every action carries: the list a query with no positive term walks. */
export const ALL_ACTIONS_TERM = '*'

/**
 * Entries per chunk at most. A seek decodes one chunk, and a rare term's candidates each seek into
 * the dense lists: small chunks keep that cheap, at a few bytes of chunk key per 256 postings.
 */
export const MAX_CHUNK_ENTRIES = 256

/**
 * The 53-bit key of a term (cyrb53). Keys stand for terms in the store; a collision between two
 * terms is possible in principle: a query term shares its list with another term with p ≈ 1e-9 at
 * ten million distinct terms (N / 2^53). Matches are not re-checked against the action's own
 * terms (that would recompute every match's terms, ABI decoding and row attribution included,
 * doubling a page's cost for that chance).
 */
export function termKey(term: string): number {
  let h1 = 0xdeadbeef
  let h2 = 0x41c6ce57
  for (let i = 0; i < term.length; i++) {
    const c = term.charCodeAt(i)
    h1 = Math.imul(h1 ^ c, 2654435761)
    h2 = Math.imul(h2 ^ c, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return 4294967296 * (2097151 & h2) + (h1 >>> 0)
}

/** One stored chunk: consecutive entries of one term's list. */
export interface PostingChunk {
  readonly termKey: number
  readonly firstSeq: number
  /** Undo finds the chunks it must cut or drop by it. */
  readonly lastSeq: number
  readonly entries: Uint8Array
}

/** Decoded entries of a chunk, ascending. */
export interface ChunkEntries {
  readonly seqs: Float64Array
  readonly flags: Uint8Array
}

function pushVarint(out: number[], value: number): void {
  let v = value
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80)
    v = Math.floor(v / 0x80)
  }
  out.push(v)
}

/** Entries as varints of `(seq - previous seq) * 8 + flags`, the first relative to `firstSeq`. */
export function encodeEntries(seqs: readonly number[], flags: readonly number[]): Uint8Array {
  const out: number[] = []
  let previous = seqs[0]
  for (let i = 0; i < seqs.length; i++) {
    pushVarint(out, (seqs[i] - previous) * 8 + flags[i])
    previous = seqs[i]
  }
  return Uint8Array.from(out)
}

/**
 * Calls `visit` with each entry of a chunk in ascending order until it returns false. The one walk
 * of the varint encoding: `decodeEntries` fills arrays with it, `seekEntry` scans in place.
 */
function walkEntries(firstSeq: number, entries: Uint8Array, visit: (seq: number, flag: number) => boolean): void {
  let seq = firstSeq
  let i = 0
  while (i < entries.length) {
    let value = 0
    let scale = 1
    let byte: number
    do {
      byte = entries[i++]
      value += (byte & 0x7f) * scale
      scale *= 0x80
    } while (byte & 0x80)
    const flag = value % 8
    seq += (value - flag) / 8
    if (!visit(seq, flag)) return
  }
}

export function decodeEntries(firstSeq: number, entries: Uint8Array): ChunkEntries {
  // One entry per byte without the continuation bit: the arrays are sized before decoding.
  let count = 0
  for (let i = 0; i < entries.length; i++) if (entries[i] < 0x80) count++
  const seqs = new Float64Array(count)
  const flags = new Uint8Array(count)
  let n = 0
  walkEntries(firstSeq, entries, (seq, flag) => {
    seqs[n] = seq
    flags[n++] = flag
    return true
  })
  return { seqs, flags }
}

/** One entry of a posting list. */
export interface PostingEntry {
  readonly seq: number
  readonly flags: number
}

/**
 * The entry a seek to `target` lands on in one chunk, scanned in place (no arrays): the first at
 * or after it (forward) or the last at or before it (backward) whose flags pass
 * `(flags & mask) === value`; undefined when the chunk has none.
 */
export function seekEntry(
  firstSeq: number,
  entries: Uint8Array,
  target: number,
  forward: boolean,
  mask: number,
  value: number,
): PostingEntry | undefined {
  let hit = false
  let seq = 0
  let flags = 0
  walkEntries(firstSeq, entries, (s, f) => {
    if (forward ? s < target : s > target) return forward
    if ((f & mask) === value) {
      hit = true
      seq = s
      flags = f
      // Forward, the first that passes is the answer; backward, the last one up to the target.
      if (forward) return false
    }
    return forward || s < target
  })
  return hit ? { seq, flags } : undefined
}

interface PostingList {
  seqs: number[]
  flags: number[]
}

/** Two lists of one key (terms whose keys collide) as one, ascending, each action once. */
function mergeLists(a: PostingList, b: PostingList): PostingList {
  const merged: PostingList = { seqs: [], flags: [] }
  let i = 0
  let j = 0
  while (i < a.seqs.length || j < b.seqs.length) {
    const fromA = j >= b.seqs.length || (i < a.seqs.length && a.seqs[i] <= b.seqs[j])
    const seq = fromA ? a.seqs[i] : b.seqs[j]
    const flag = fromA ? a.flags[i++] : b.flags[j++]
    if (merged.seqs[merged.seqs.length - 1] === seq) continue
    merged.seqs.push(seq)
    merged.flags.push(flag)
  }
  return merged
}

/**
 * The chunks one store write adds: every action of the batches under each of its terms. `keyOf`
 * is `termKey` (tests pass one with collisions).
 */
export function postingChunks(
  batches: readonly BlockBatch[],
  keyOf: (term: string) => number = termKey,
): PostingChunk[] {
  // Grouped by term text first: a string caches its hash, where a 53-bit key would be boxed and
  // hashed again on every add. Keys are computed once per distinct term.
  const byTerm = new Map<string, PostingList>()
  const add = (term: string, seq: number, flag: number) => {
    let list = byTerm.get(term)
    if (!list) byTerm.set(term, (list = { seqs: [], flags: [] }))
    else if (list.seqs[list.seqs.length - 1] === seq) return
    list.seqs.push(seq)
    list.flags.push(flag)
  }
  for (const batch of batches) {
    const scheduled = new Set(batch.transactions.filter((t) => t.scheduled).map((t) => t.id))
    for (const a of batch.actions) {
      const seq = a.globalSequence
      const flag =
        (a.creatorActionOrdinal === 0 ? FLAG_INPUT : 0) |
        (a.receiver !== a.account ? FLAG_NOTIF : 0) |
        (scheduled.has(a.trxId) ? FLAG_SCHEDULED : 0)
      add(ALL_ACTIONS_TERM, seq, flag)
      for (const term of a.searchTerms ?? []) add(term, seq, flag)
    }
  }
  const lists = new Map<number, PostingList>()
  for (const [term, list] of byTerm) {
    const key = keyOf(term)
    const same = lists.get(key)
    lists.set(key, same ? mergeLists(same, list) : list)
  }
  const chunks: PostingChunk[] = []
  for (const [key, list] of lists) {
    for (let start = 0; start < list.seqs.length; start += MAX_CHUNK_ENTRIES) {
      const end = Math.min(start + MAX_CHUNK_ENTRIES, list.seqs.length)
      chunks.push({
        termKey: key,
        firstSeq: list.seqs[start],
        lastSeq: list.seqs[end - 1],
        entries: encodeEntries(list.seqs.slice(start, end), list.flags.slice(start, end)),
      })
    }
  }
  return chunks
}

/**
 * A chunk cut to its entries below `cutSeq` (undo of the blocks from the one starting at `cutSeq`), or undefined when
 * none remain.
 */
export function truncateChunk(chunk: PostingChunk, cutSeq: number): PostingChunk | undefined {
  const { seqs, flags } = decodeEntries(chunk.firstSeq, chunk.entries)
  let keep = 0
  while (keep < seqs.length && seqs[keep] < cutSeq) keep++
  if (keep === 0) return undefined
  const kept = Array.from(seqs.subarray(0, keep))
  return {
    termKey: chunk.termKey,
    firstSeq: chunk.firstSeq,
    lastSeq: kept[keep - 1],
    entries: encodeEntries(kept, Array.from(flags.subarray(0, keep))),
  }
}
