import { test } from 'node:test'
import assert from 'node:assert/strict'
import { FLAG_NOTIF, termKey } from '../../src/store/index.ts'
import {
  ALL_ACTIONS_TERM,
  MAX_CHUNK_ENTRIES,
  encodeEntries,
  type PostingChunk,
} from '../../src/store/search/postings.ts'
import {
  searchPostings,
  type PostingSource,
  type SearchDirection,
  type SearchExpr,
} from '../../src/store/search/query.ts'

/**
 * How many reads the engine makes, against an in-memory posting source that counts them: a query's lists are each
 * walked once, whatever the shape of the query around them.
 */

const ACTIONS = 20_000

/** `terms` each listing every action 1..ACTIONS (none scheduled), in chunks of MAX_CHUNK_ENTRIES. */
function countingSource(terms: readonly string[]): PostingSource & { reads: number; chunkCount: number } {
  const lists = new Map<number, PostingChunk[]>()
  for (const term of terms) {
    const chunks: PostingChunk[] = []
    for (let first = 1; first <= ACTIONS; first += MAX_CHUNK_ENTRIES) {
      const seqs = Array.from({ length: Math.min(MAX_CHUNK_ENTRIES, ACTIONS - first + 1) }, (_, i) => first + i)
      const flags = seqs.map((seq) => (seq % 2 === 0 ? FLAG_NOTIF : 0))
      chunks.push({
        termKey: termKey(term),
        firstSeq: first,
        lastSeq: seqs.at(-1)!,
        entries: encodeEntries(seqs, flags),
      })
    }
    lists.set(termKey(term), chunks)
  }
  const source = {
    reads: 0,
    chunkCount: [...lists.values()].reduce((sum, l) => sum + l.length, 0),
    async chunks(key: number, seq: number, direction: SearchDirection, atMost: number) {
      source.reads++
      const list = lists.get(key) ?? []
      if (direction === 'forward') {
        const from = list.findIndex((c) => c.lastSeq >= seq)
        return from < 0 ? [] : list.slice(from, from + atMost)
      }
      const to = list.filter((c) => c.firstSeq <= seq).length - 1
      return to < 0 ? [] : list.slice(Math.max(0, to - atMost + 1), to + 1).reverse()
    },
    async transactionSpans() {
      return []
    },
  }
  return source
}

const QUERIES: { name: string; expr: SearchExpr; matches: number }[] = [
  // Every action is excluded: each seek of the OR from a candidate of the dense term walks the rest.
  { name: 'a dense term OR NOT a dense term', expr: { or: [{ term: 'a' }, { not: { term: 'a' } }] }, matches: ACTIONS },
  // The flag list has no scheduled action: every seek of the OR asks it again for the next one.
  {
    name: 'a dense term OR a flag no action has',
    expr: { or: [{ term: 'a' }, { flag: 'scheduled', value: true }] },
    matches: ACTIONS,
  },
  { name: 'NOT a term no action has', expr: { not: { term: 'missing' } }, matches: ACTIONS },
  {
    name: 'a negation OR a flag AND a flag',
    expr: {
      or: [
        { not: { term: 'missing' } },
        {
          and: [
            { flag: 'notif', value: true },
            { flag: 'scheduled', value: true },
          ],
        },
        { term: 'missing' },
      ],
    },
    matches: ACTIONS,
  },
]

for (const direction of ['forward', 'backward'] as const)
  for (const { name, expr, matches } of QUERIES)
    test(`search reads each list once, not once per match (${direction}): ${name}`, async () => {
      const source = countingSource([ALL_ACTIONS_TERM, 'a'])
      const found = await searchPostings(source, expr, { direction, limit: ACTIONS + 1 })
      assert.equal(found.length, matches)
      // Each list (two of them, read two chunks at a time) walked once, with a few reads to spare.
      assert.ok(source.reads <= source.chunkCount + 8, `${source.reads} reads for ${source.chunkCount} chunks`)
    })
