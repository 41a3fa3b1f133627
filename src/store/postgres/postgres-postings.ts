import type pg from 'pg'
import { trxIdKey, u8 } from '../row-mapping.ts'
import type { PostingChunk } from '../search/postings.ts'
import { TRANSACTION_SPANS, numbered } from '../common-sql.ts'
import type { PostingSource } from '../search/query.ts'

/** A `postings` row as pg returns it (BIGINT columns as strings). */
export interface PostingRow {
  term_key: string
  last_seq: string
  first_seq: string
  entries: Buffer
}

export const chunkFromRow = (r: PostingRow): PostingChunk => ({
  termKey: Number(r.term_key),
  firstSeq: Number(r.first_seq),
  lastSeq: Number(r.last_seq),
  entries: u8(r.entries),
})

/**
 * The search engine's reads (query.ts PostingSource) on PostgreSQL: posting chunks by term, each read a round trip on
 * the pool.
 */
export function createPostgresPostingSource(pool: pg.Pool): PostingSource {
  return {
    concurrentReads: true,
    async chunks(termKey, seq, direction, atMost) {
      const columns = 'term_key, last_seq, first_seq, entries'
      const after = (
        await pool.query<PostingRow>(
          `SELECT ${columns} FROM postings WHERE term_key = $1 AND last_seq >= $2 ORDER BY last_seq LIMIT $3`,
          [termKey, seq, atMost],
        )
      ).rows
      if (direction === 'forward') return after.map(chunkFromRow)
      const holding = after[0] && Number(after[0].first_seq) <= seq ? [after[0]] : []
      const before = (
        await pool.query<PostingRow>(
          `SELECT ${columns} FROM postings WHERE term_key = $1 AND last_seq < $2 ORDER BY last_seq DESC LIMIT $3`,
          [termKey, seq, atMost],
        )
      ).rows
      return [...holding, ...before].map(chunkFromRow)
    },
    async chunksAround(termKey, seqs, direction) {
      // Forward needs the chunk holding or after each seq; backward the one holding or before it.
      const holdingOrAfter =
        'SELECT * FROM postings WHERE term_key = $1 AND last_seq >= s.seq ORDER BY last_seq LIMIT 1'
      const before = 'SELECT * FROM postings WHERE term_key = $1 AND last_seq < s.seq ORDER BY last_seq DESC LIMIT 1'
      const lateral = direction === 'forward' ? holdingOrAfter : `(${holdingOrAfter}) UNION ALL (${before})`
      const rows = await pool.query<PostingRow>(
        `SELECT DISTINCT ON (p.last_seq) p.term_key, p.last_seq, p.first_seq, p.entries FROM unnest($2::bigint[]) AS s(seq) CROSS JOIN LATERAL (${lateral}) p`,
        [termKey, seqs],
      )
      return rows.rows.map(chunkFromRow)
    },
    async transactionSpans(trxId) {
      const rows = await pool.query<{ first_seq: string; last_seq: string }>({
        name: 'antler_trx_spans',
        text: numbered(TRANSACTION_SPANS),
        values: [trxIdKey(trxId), trxId],
      })
      return rows.rows.map((r) => ({ firstSeq: Number(r.first_seq), lastSeq: Number(r.last_seq) }))
    },
  }
}
