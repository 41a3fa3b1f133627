import Database from 'better-sqlite3'
import pg from 'pg'
import { openPostgresStore, openSqliteStore, type SearchExpr, type Store } from '../src/store/index.ts'
import { seededRandom } from '../test/_helpers/store.ts'
import { ms, timeIt } from './timing.ts'

/**
 * Untimed queries of each kind before the timed ones: the first queries of a process run unoptimized code (20–30 ms for
 * a rare AND), a cost a long-running server pays once.
 */
const WARMUP = 30

/** 0.0001 … 1.0000 EOS as the bench chain's transfers carry them. */
const quantity = (units: number) => `data.quantity:${(units / 10_000).toFixed(4)} EOS`

/**
 * Search over the ingested bench chain: a dense two-term AND (every transfer receipt matches) from random positions in
 * both directions, and a rare three-term AND (a few dozen matches in the whole chain) over the whole range; limit 100
 * each, as the API pages them.
 */
export async function benchSearch(
  store: Store,
  indexBytes: number,
  actionTraces: number,
  inputActions: number,
): Promise<Record<string, string | number>> {
  const random = seededRandom(3)
  const last =
    (await store.searchActions({ query: { flag: 'input', value: true }, direction: 'backward', limit: 1 }))[0]?.seq ?? 0
  const dense: SearchExpr = { and: [{ term: 'account:eosio.token' }, { term: 'action:transfer' }] }
  const rare = (): SearchExpr => ({
    and: [{ term: quantity(1 + Math.floor(random() * 10_000)) }, { term: 'data.from:alice' }, { term: 'receiver:bob' }],
  })
  let rareMatches = 0
  let rareQueries = 0
  const figures: Record<string, string | number> = {
    'search index bytes per action trace': (indexBytes / actionTraces).toFixed(1),
    'search index bytes per input action': (indexBytes / inputActions).toFixed(1),
    'dense 2-term AND, limit 100, forward from a random position': ms(
      await timeIt(
        300,
        () =>
          store.searchActions({ query: dense, direction: 'forward', fromSeq: Math.floor(random() * last), limit: 100 }),
        WARMUP,
      ),
    ),
    'dense 2-term AND, limit 100, backward from a random position': ms(
      await timeIt(
        300,
        () =>
          store.searchActions({
            query: dense,
            direction: 'backward',
            fromSeq: Math.floor(random() * last),
            limit: 100,
          }),
        WARMUP,
      ),
    ),
    'rare 3-term AND, limit 100, whole chain': ms(
      await timeIt(
        300,
        async () => {
          rareMatches += (await store.searchActions({ query: rare(), direction: 'forward', limit: 100 })).length
          rareQueries++
        },
        WARMUP,
      ),
    ),
  }
  figures['rare 3-term AND: matches per query (mean)'] = (rareMatches / rareQueries).toFixed(1)
  const page = (
    await store.searchActions({ query: dense, direction: 'forward', fromSeq: Math.floor(last / 2), limit: 100 })
  ).map((m) => m.seq)
  figures['fetching the 100 matched actions (the rows a page returns)'] = ms(
    await timeIt(100, () => store.actionsBySeq(page), WARMUP),
  )
  return figures
}

/** Bytes of the search index in a SQLite store: the postings table and its index (`dbstat`). */
export function sqlitePostingsBytes(path: string): number {
  const db = new Database(path, { readonly: true })
  try {
    return (
      db.prepare("SELECT SUM(pgsize) AS bytes FROM dbstat WHERE name IN ('postings', 'postings_last_seq')").get() as {
        bytes: number
      }
    ).bytes
  } finally {
    db.close()
  }
}

/** The search figures of a SQLite store kept by an ingest run (`--keep-sqlite`), in a fresh process. */
export async function benchSearchOfSqlite(path: string): Promise<Record<string, string | number>> {
  const db = new Database(path, { readonly: true })
  const { traces, blocks } = db
    .prepare('SELECT (SELECT COUNT(*) FROM actions) AS traces, (SELECT COUNT(*) FROM blocks) AS blocks')
    .get() as { traces: number; blocks: number }
  db.close()
  const store = openSqliteStore(path)
  try {
    return await benchSearch(store, sqlitePostingsBytes(path), traces, blocks * 25)
  } finally {
    await store.close()
  }
}

/** Bytes of the search index in a PostgreSQL store: the postings table with its indexes. */
export async function postgresPostingsBytes(client: pg.Client): Promise<number> {
  return Number((await client.query("SELECT pg_total_relation_size('postings') AS bytes")).rows[0].bytes)
}

/** The search figures of a PostgreSQL store kept by an ingest run (`--keep-postgres`), in a fresh process. */
export async function benchSearchOfPostgres(url: string): Promise<Record<string, string | number>> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const indexBytes = await postgresPostingsBytes(client)
  const { traces, blocks } = (
    await client.query(
      'SELECT (SELECT COUNT(*) FROM actions)::int AS traces, (SELECT COUNT(*) FROM blocks)::int AS blocks',
    )
  ).rows[0]
  await client.end()
  const store = await openPostgresStore(url)
  try {
    return await benchSearch(store, indexBytes, traces, blocks * 25)
  } finally {
    await store.close()
  }
}
