import type Database from 'better-sqlite3'
import { trxIdKey, u8 } from '../row-mapping.ts'
import type { PostingChunk } from '../search/postings.ts'
import { TRANSACTION_SPANS } from '../common-sql.ts'
import type { PostingSource, SeqSpan } from '../search/query.ts'

/** A `postings` row as better-sqlite3 returns it. */
export interface PostingRow {
  term_key: number
  last_seq: number
  first_seq: number
  entries: Buffer
}

export const chunkFromRow = (r: PostingRow): PostingChunk => ({
  termKey: r.term_key,
  firstSeq: r.first_seq,
  lastSeq: r.last_seq,
  entries: u8(r.entries),
})

/** The search engine's reads (query.ts PostingSource) on SQLite: posting chunks by term. */
export function createSqlitePostingSource(db: Database.Database): PostingSource {
  const s = {
    chunksFrom: db.prepare(
      `SELECT term_key, last_seq, first_seq, entries FROM postings WHERE term_key = ? AND last_seq >= ? ORDER BY last_seq LIMIT ?`,
    ),
    chunksBefore: db.prepare(
      `SELECT term_key, last_seq, first_seq, entries FROM postings WHERE term_key = ? AND last_seq < ? ORDER BY last_seq DESC LIMIT ?`,
    ),
    // For each seq of a JSON array: the last_seq of the chunk holding it or the next (and, backward, of the one
    // before).
    chunkAfterEachSeq: db.prepare(
      'SELECT (SELECT last_seq FROM postings WHERE term_key = @key AND last_seq >= s.value ORDER BY last_seq LIMIT 1) FROM json_each(@seqs) AS s',
    ),
    chunkAroundEachSeq: db.prepare(
      `SELECT (SELECT last_seq FROM postings WHERE term_key = @key AND last_seq >= s.value ORDER BY last_seq LIMIT 1),
              (SELECT last_seq FROM postings WHERE term_key = @key AND last_seq < s.value ORDER BY last_seq DESC LIMIT 1) FROM json_each(@seqs) AS s`,
    ),
    chunksAtLastSeqs: db.prepare(
      'SELECT term_key, last_seq, first_seq, entries FROM postings WHERE term_key = @key AND last_seq IN (SELECT value FROM json_each(@seqs))',
    ),
    spans: db.prepare(TRANSACTION_SPANS),
  }
  return {
    async chunks(termKey, seq, direction, atMost) {
      const after = s.chunksFrom.all(termKey, seq, atMost) as PostingRow[]
      if (direction === 'forward') return after.map(chunkFromRow)
      const holding = after[0] && after[0].first_seq <= seq ? [after[0]] : []
      return [...holding, ...(s.chunksBefore.all(termKey, seq, atMost) as PostingRow[])].map(chunkFromRow)
    },
    async chunksAround(termKey, seqs, direction) {
      // Two statements for any number of seeks: the last_seq of each answer, then those chunks.
      // The seqs travel as one JSON array, so each statement has one text (prepared once).
      const picked = (direction === 'forward' ? s.chunkAfterEachSeq : s.chunkAroundEachSeq)
        .raw()
        .all({ key: termKey, seqs: JSON.stringify(seqs) }) as (number | null)[][]
      const wanted = [...new Set(picked.flat().filter((x): x is number => x !== null))]
      if (wanted.length === 0) return []
      return (s.chunksAtLastSeqs.all({ key: termKey, seqs: JSON.stringify(wanted) }) as PostingRow[]).map(chunkFromRow)
    },
    async transactionSpans(trxId) {
      return (s.spans.raw().all(trxIdKey(trxId), trxId) as [number, number][]).map(([firstSeq, lastSeq]): SeqSpan => ({
        firstSeq,
        lastSeq,
      }))
    },
  }
}
