import { existsSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { createIndexer, normalizeBlock } from '../src/ingest/index.ts'
import { createShipReader } from '../src/ship/index.ts'
import { openPostgresStore, openSqliteStore, type Store } from '../src/store/index.ts'
import { peakRss } from './children.ts'
import { benchSearch, postgresPostingsBytes, sqlitePostingsBytes } from './search.ts'
import { startBenchFeed } from './ship-feed.ts'
import { withBenchDatabase } from './bench-database.ts'

export interface IngestBenchOptions {
  readonly actions: number
  /** Admin URL for a throw-away PostgreSQL database; undefined skips PostgreSQL. */
  readonly postgresUrl: string | undefined
  /** Where to keep the SQLite store the run wrote (for `--only search`); undefined deletes it. */
  readonly keepSqlite: string | undefined
  /** Keep the PostgreSQL database the run wrote (for `--only search --postgres`) instead of dropping it. */
  readonly keepPostgres: boolean
}

/** What a pass over the whole feed counted, and how long it took. */
interface FeedPass {
  readonly actions: number
  /** Table deltas: row changes of every table. */
  readonly rows: number
  readonly blocks: number
  /** SHiP bytes received: each result's block, traces and deltas. */
  readonly bytes: number
  readonly seconds: number
}

/** Reads the whole feed and normalizes every block without storing it: the limit ingest is compared to. */
async function decodePass(ship: string, endBlock: number, fetchFinalityData = false): Promise<FeedPass> {
  const reader = createShipReader({
    url: ship,
    startBlockNum: 1,
    endBlockNum: endBlock + 1,
    maxMessagesInFlight: 50,
    fetchFinalityData,
  })
  const started = performance.now()
  let actions = 0
  let rows = 0
  let blocks = 0
  let bytes = 0
  for await (const result of reader.blocks()) {
    const batch = normalizeBlock(result)
    actions += batch.actions.length
    rows += batch.rows.length
    blocks++
    bytes += (result.block?.length ?? 0) + (result.traces?.length ?? 0) + (result.deltas?.length ?? 0)
  }
  await reader.close()
  return { actions, rows, blocks, bytes, seconds: (performance.now() - started) / 1000 }
}

/** Decode-only in action traces/s. */
async function decodeOnly(ship: string, endBlock: number, fetchFinalityData = false): Promise<number> {
  const pass = await decodePass(ship, endBlock, fetchFinalityData)
  return pass.actions / pass.seconds
}

/** Indexes the whole feed; rates count stored action traces (a transfer is three: token, from, to). */
async function ingest(
  ship: string,
  store: Store,
  endBlock: number,
): Promise<{ actions: number; rows: number; seconds: number; actionsPerSecond: number; blocksPerSecond: number }> {
  let actions = 0
  let rows = 0
  const started = performance.now()
  await createIndexer({
    shipUrl: ship,
    store,
    endBlockNum: endBlock,
    maxMessagesInFlight: 50,
    onBlock: (b) => {
      actions += b.actions
      rows += b.rowChanges
    },
  }).run()
  const seconds = (performance.now() - started) / 1000
  return { actions, rows, seconds, actionsPerSecond: actions / seconds, blocksPerSecond: endBlock / seconds }
}

/** Runs `work` and returns its result with the highest RSS of this process seen meanwhile (peakRss()). */
async function withPeakRss<T>(work: () => Promise<T>): Promise<{ result: T; peakRssMiB: number }> {
  const rss = peakRss(process.pid)
  try {
    const result = await work()
    return { result, peakRssMiB: Math.round(rss.stop() ?? process.memoryUsage().rss / 2 ** 20) }
  } finally {
    rss.stop()
  }
}

/** Runs `work` on a throw-away database of the PostgreSQL server at `adminUrl`, dropped after it unless `keep`. */
/** The whole database's size on disk: tables, indexes and TOAST. */
async function postgresDatabaseBytes(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return Number((await client.query('SELECT pg_database_size(current_database()) AS bytes')).rows[0].bytes)
  } finally {
    await client.end()
  }
}

/**
 * Savanna against legacy (issue 19's bar: Savanna ingest within 10 % of legacy): the same workload built twice, once as
 * a legacy chain and once as a Savanna chain (finality extension in every header, LIB two blocks behind head), each
 * served by a feed process of its own. Then, taking turns, `rounds` times: decode-only of each (the Savanna reader
 * asking for finality_data, so every block's finality data is decoded too) and an ingest of each into a fresh SQLite
 * file. The best of the rounds is compared, which keeps this machine's noise out of the ratio.
 */
export async function benchIngestSavanna(options: {
  actions: number
  rounds: number
}): Promise<Record<string, string | number>> {
  const dir = mkdtempSync(join(tmpdir(), 'antler-ingest-savanna-'))
  const blocks = Math.ceil(options.actions / 25)
  const legacyFeed = await startBenchFeed(blocks)
  let savannaFeed: Awaited<ReturnType<typeof startBenchFeed>> | undefined
  try {
    savannaFeed = await startBenchFeed(blocks, { savanna: true })
    const best = { legacyDecode: 0, savannaDecode: 0, legacyIngest: 0, savannaIngest: 0 }
    for (let round = 0; round < options.rounds; round++) {
      best.legacyDecode = Math.max(best.legacyDecode, await decodeOnly(legacyFeed.url, legacyFeed.head))
      best.savannaDecode = Math.max(best.savannaDecode, await decodeOnly(savannaFeed.url, savannaFeed.head, true))
      for (const [kind, feed] of [
        ['legacy', legacyFeed],
        ['savanna', savannaFeed],
      ] as const) {
        const path = join(dir, `${kind}-${round}.sqlite`)
        const store = openSqliteStore(path)
        const rate = await ingest(feed.url, store, feed.head)
        await store.close()
        rmSync(path, { force: true })
        if (kind === 'legacy') best.legacyIngest = Math.max(best.legacyIngest, rate.actionsPerSecond)
        else best.savannaIngest = Math.max(best.savannaIngest, rate.actionsPerSecond)
      }
    }
    const ratio = best.savannaIngest / best.legacyIngest
    return {
      'savanna: blocks per chain': blocks,
      [`savanna: decode-only legacy, best of ${options.rounds}: action traces/s`]: Math.round(best.legacyDecode),
      [`savanna: decode-only Savanna with finality_data, best of ${options.rounds}: action traces/s`]: Math.round(
        best.savannaDecode,
      ),
      [`savanna: ingest legacy into SQLite, best of ${options.rounds}: action traces/s`]: Math.round(best.legacyIngest),
      [`savanna: ingest Savanna into SQLite, best of ${options.rounds}: action traces/s`]: Math.round(
        best.savannaIngest,
      ),
      'savanna: Savanna / legacy decode-only': (best.savannaDecode / best.legacyDecode).toFixed(3),
      'savanna: Savanna / legacy ingest': ratio.toFixed(3),
      'savanna: bar (Savanna ingest within 10 % of legacy)': ratio >= 0.9 ? 'met' : 'NOT met',
    }
  } finally {
    legacyFeed.kill()
    savannaFeed?.kill()
    rmSync(dir, { recursive: true, force: true })
  }
}

export async function benchIngest(options: IngestBenchOptions): Promise<Record<string, string | number>> {
  const dir = mkdtempSync(join(tmpdir(), 'antler-ingest-'))
  const figures: Record<string, string | number> = {}
  const feed = await startBenchFeed(Math.ceil(options.actions / 25))
  try {
    const ship = feed.url
    const end = feed.head
    figures['ingest: blocks'] = end
    // The faster of two passes (the first also warms up the JIT): the higher limit.
    const limit = Math.max(await decodeOnly(ship, end), await decodeOnly(ship, end))
    figures['decode-only (normalize, no store), best of 2 passes: action traces/s'] = Math.round(limit)
    const record = (label: string, rate: { actionsPerSecond: number; blocksPerSecond: number }, peakRssMiB: number) => {
      figures[`ingest into ${label}: action traces/s`] = Math.round(rate.actionsPerSecond)
      figures[`ingest into ${label}: input actions/s (25 per block)`] = Math.round(rate.blocksPerSecond * 25)
      figures[`ingest into ${label}: blocks/s`] = Math.round(rate.blocksPerSecond)
      figures[`ingest into ${label} / decode-only`] = (rate.actionsPerSecond / limit).toFixed(2)
      figures[`ingest into ${label}: peak RSS of the indexer MiB`] = peakRssMiB
    }
    const sqlitePath = join(dir, 'store.sqlite')
    const sqlite = openSqliteStore(sqlitePath)
    const s = await withPeakRss(() => ingest(ship, sqlite, end))
    record('SQLite', s.result, s.peakRssMiB)
    const inputActions = end * 25
    for (const [k, v] of Object.entries(
      await benchSearch(sqlite, sqlitePostingsBytes(sqlitePath), s.result.actions, inputActions),
    ))
      figures[`SQLite search: ${k}`] = v
    await sqlite.close()
    if (options.keepSqlite) renameSync(sqlitePath, options.keepSqlite)
    if (options.postgresUrl) {
      await withBenchDatabase(
        options.postgresUrl,
        async (url) => {
          const store = await openPostgresStore(url)
          const p = await withPeakRss(() => ingest(ship, store, end))
          record('PostgreSQL', p.result, p.peakRssMiB)
          const client = new pg.Client({ connectionString: url })
          await client.connect()
          const pgIndexBytes = await postgresPostingsBytes(client)
          await client.end()
          for (const [k, v] of Object.entries(await benchSearch(store, pgIndexBytes, p.result.actions, inputActions)))
            figures[`PostgreSQL search: ${k}`] = v
          await store.close()
          if (options.keepPostgres) figures['PostgreSQL store kept at'] = url
        },
        { keep: options.keepPostgres },
      )
    }
    figures['peak RSS of the bench process (indexer, both stores, search) MiB'] = Math.round(
      process.resourceUsage().maxRSS / 1024,
    )
    figures['peak RSS of the chain process (build, SHiP server) MiB'] = await feed.stop()
    return figures
  } finally {
    feed.kill()
    rmSync(dir, { recursive: true, force: true })
  }
}

const MB = 1e6

/** A pass's rates: action traces, table deltas (row changes), blocks and SHiP bytes per second. */
function passRates(
  label: string,
  pass: Omit<FeedPass, 'blocks'> & { blocks: number },
): Record<string, string | number> {
  return {
    [`${label}: action traces/s`]: Math.round(pass.actions / pass.seconds),
    [`${label}: table deltas (row changes)/s`]: Math.round(pass.rows / pass.seconds),
    [`${label}: blocks/s`]: (pass.blocks / pass.seconds).toFixed(1),
    [`${label}: SHiP MB/s`]: (pass.bytes / MB / pass.seconds).toFixed(2),
  }
}

/**
 * The dense feed (src/devchain/dense-profile.ts: ~300 transactions, ~1,260 action traces a block, NFT rows, inline
 * actions, zlib-packed, deferred and failed transactions, ABI changes) built in the feed process: decode-only of it
 * (best of 2 passes), then ingest into SQLite and, given a server, PostgreSQL, each next to decode-only.
 */
export async function benchIngestDense(options: {
  blocks: number
  postgresUrl: string | undefined
}): Promise<Record<string, string | number>> {
  const dir = mkdtempSync(join(tmpdir(), 'antler-ingest-dense-'))
  const feed = await startBenchFeed(options.blocks, { profile: 'dense' })
  try {
    const passes = [await decodePass(feed.url, feed.head), await decodePass(feed.url, feed.head)]
    const limit = passes[0].seconds < passes[1].seconds ? passes[0] : passes[1]
    const figures: Record<string, string | number> = {
      'dense: blocks (boot and dense)': feed.head,
      'dense: action traces': limit.actions,
      'dense: table deltas (row changes)': limit.rows,
      'dense: SHiP MB': (limit.bytes / MB).toFixed(1),
      ...passRates('dense decode-only, best of 2 passes', limit),
    }
    const record = async (label: string, store: Store, storeBytes: () => Promise<number>) => {
      const { result, peakRssMiB } = await withPeakRss(() => ingest(feed.url, store, feed.head))
      Object.assign(figures, passRates(`dense ingest into ${label}`, { ...limit, ...result }))
      figures[`dense ingest into ${label} / decode-only`] = (limit.seconds / result.seconds).toFixed(2)
      figures[`dense ingest into ${label}: peak RSS of the indexer MiB`] = peakRssMiB
      await store.close()
      const perMillion = (await storeBytes()) / (limit.actions / 1e6)
      figures[`dense ${label} store per million action traces MiB`] = (perMillion / 2 ** 20).toFixed(0)
    }
    const sqlitePath = join(dir, 'store.sqlite')
    const sqliteBytes = async () =>
      [sqlitePath, `${sqlitePath}-wal`].reduce((n, path) => n + (existsSync(path) ? statSync(path).size : 0), 0)
    await record('SQLite', openSqliteStore(sqlitePath), sqliteBytes)
    if (options.postgresUrl)
      await withBenchDatabase(options.postgresUrl, async (url) =>
        record('PostgreSQL', await openPostgresStore(url), () => postgresDatabaseBytes(url)),
      )
    figures['dense: peak RSS of the chain process (build, SHiP server) MiB'] = await feed.stop()
    return figures
  } finally {
    feed.kill()
    rmSync(dir, { recursive: true, force: true })
  }
}
