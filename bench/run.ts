import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { benchApi } from './api.ts'
import { benchDevchain } from './devchain.ts'
import { helpText, parseFlags, type Options } from './flags.ts'
import { benchGraphql } from './graphql.ts'
import { benchHyperion } from './hyperion.ts'
import { benchIngest, benchIngestDense, benchIngestSavanna } from './ingest.ts'
import { benchIngestAgainst } from './ingest-against.ts'
import { benchPortal } from './portal.ts'
import { benchReplicas } from './replicas.ts'
import { benchSearchOfPostgres, benchSearchOfSqlite } from './search.ts'
import { benchSearchApi } from './search-api.ts'
import { benchSearchDevchain } from './search-devchain.ts'
import { smokeProblems } from './smoke.ts'
import { benchStartup } from './startup.ts'
import { benchStateApi } from './state-api.ts'
import { benchStoreReads } from './store-reads.ts'
import { benchStreams } from './streams.ts'
import type { Figures } from './timing.ts'
import { benchWebhooks } from './webhooks.ts'

/**
 * `npm run bench [-- --only NAME] [--smoke] [flags]` (`-- --help` lists them, from bench/flags.ts): runs the benches
 * and prints their figures; figures that depend on the machine are given next to a limit measured in the same run.
 * `--smoke` runs every bench (or `--only NAME`) on a tiny workload and fails if one printed a figure that is NaN,
 * missing or zero (bench/smoke.ts); the benches that read a kept store get the one the smoke's ingest kept.
 */
interface Bench {
  readonly name: string
  readonly about: string
  /** `postgres`: skipped without a PostgreSQL server; `store`: reads a kept store (--sqlite, --postgres). */
  readonly needs?: 'postgres' | 'store'
  /** Parts of names of figures it must print (checked by the smoke). */
  readonly expects: readonly string[]
  run(o: Options, context: Context): Promise<Figures> | Figures
}

interface Context {
  readonly postgresUrl: string | undefined
  /** The kept stores the store benches read. */
  stores(): Promise<{ sqlite?: string; postgres?: string }>
}

const ingest = (o: Options, c: Context) =>
  benchIngest({
    actions: o.count('ingest-actions'),
    postgresUrl: c.postgresUrl,
    keepSqlite: o.text('keep-sqlite'),
    keepPostgres: o.on('keep-postgres'),
  })
/** A bench's own count of actions, else --ingest-actions. */
const actions = (o: Options, flag: string) => o.count(o.text(flag) ? flag : 'ingest-actions')
const apiRun = (o: Options) => ({
  seconds: o.count('api-seconds'),
  rounds: o.count('api-rounds'),
  warmupSeconds: o.count('warmup-seconds'),
  smoke: o.on('smoke'),
})

const BENCHES: readonly Bench[] = [
  {
    name: 'devchain',
    about: 'chain builder and SHiP serving rates, next to a full decode of the same frames',
    expects: ['chain builder: actions/s', 'SHiP serving: blocks/s', 'serving / decode-only ratio'],
    run: (o) =>
      benchDevchain({
        actions: o.count('actions'),
        transfersPerBlock: o.count('transfers-per-block'),
        rawdbPutsPerBlock: o.count('rawdb-per-block'),
      }),
  },
  {
    name: 'ingest',
    about: 'ingest into SQLite (and PostgreSQL: ANTLER_BENCH_PG or ANTLER_TEST_PG) next to decode-only; search',
    expects: ['ingest into SQLite: action traces/s', 'decode-only', 'SQLite search: dense'],
    run: ingest,
  },
  {
    name: 'ingest-dense',
    about: 'ingest of the dense (mainnet-like) feed into SQLite (and PostgreSQL) next to its decode-only',
    expects: [
      'dense decode-only, best of 2 passes: action traces/s',
      'dense ingest into SQLite: table deltas (row changes)/s',
      'dense ingest into SQLite: SHiP MB/s',
      'dense ingest into SQLite / decode-only',
    ],
    run: (o, c) => benchIngestDense({ blocks: o.count('dense-blocks'), postgresUrl: c.postgresUrl }),
  },
  {
    name: 'ingest-savanna',
    about: 'ingest of a Savanna chain against a legacy one (also: --savanna with ingest)',
    expects: ['savanna: Savanna / legacy ingest'],
    run: (o) => benchIngestSavanna({ actions: actions(o, 'savanna-actions'), rounds: o.count('savanna-rounds') }),
  },
  {
    name: 'ingest-against',
    about: 'this build against --against REV, same feed, in one run (also: --only ingest --against REV)',
    expects: ['SQLite: this build / ', 'bar (≥ 0.95'],
    run: (o, c) =>
      benchIngestAgainst({
        rev: o.text('against') ?? 'HEAD',
        actions: actions(o, 'against-actions'),
        pairs: o.count('against-pairs'),
        postgresUrl: c.postgresUrl,
        removeTree: o.on('smoke'),
      }),
  },
  {
    name: 'reads',
    about: 'store reads: a 1,000-row scope rewritten 20 times, 1,500 small scopes',
    expects: ['SQLite: 1,000-row scope at head', 'raw driver scan'],
    run: (o, c) => benchStoreReads(c.postgresUrl, o.on('smoke')),
  },
  {
    name: 'api',
    about: "the API's own costs over HTTP next to a bare Fastify route; latency during catch-up",
    expects: ['GET /bare', '/healthz / bare Fastify route', 'passthrough with a token / devchain directly'],
    run: (o) =>
      benchApi({ ...apiRun(o), connections: o.count('api-connections'), backlogBlocks: o.count('api-backlog') }),
  },
  {
    name: 'search',
    about: 'search figures of a kept store, in-process',
    needs: 'store',
    expects: ['dense 2-term AND', 'rare 3-term AND'],
    run: async (_o, c) => {
      const { sqlite, postgres } = await c.stores()
      const figures: Figures = {}
      if (sqlite) for (const [k, v] of Object.entries(await benchSearchOfSqlite(sqlite))) figures[`SQLite: ${k}`] = v
      if (postgres)
        for (const [k, v] of Object.entries(await benchSearchOfPostgres(postgres))) figures[`PostgreSQL: ${k}`] = v
      return figures
    },
  },
  {
    name: 'state-api',
    about: 'REST state reads (issue 15) on kept stores, next to the same reads in-process',
    needs: 'store',
    expects: ['issue 15 bar', 'in-process limit', '10-row scope / /healthz'],
    run: async (o, c) =>
      benchStateApi({ ...(await c.stores()), ...apiRun(o), slowSeconds: o.count('state-slow-seconds') }),
  },
  {
    name: 'search-api',
    about: 'GET /v0/search/transactions (issues 16, 26) on kept stores, next to the service in-process',
    needs: 'store',
    expects: ['issue 26 bar', 'unwarmed'],
    run: async (o, c) => benchSearchApi({ ...(await c.stores()), ...apiRun(o), pagesOnly: o.on('search-pages-only') }),
  },
  {
    name: 'hyperion',
    about: "Hyperion's get_actions and get_transaction (issue 35) on kept stores, next to the dfuse routes",
    needs: 'store',
    expects: ['Hyperion / dfuse throughput', 'issue 35 bar, account get_actions p99'],
    run: async (o, c) => benchHyperion({ ...(await c.stores()), ...apiRun(o), variants: o.count('hyperion-variants') }),
  },
  {
    name: 'search-devchain',
    about: 'search on antler dev next to /healthz (issue 26)',
    expects: ['search / healthz, req/s', 'issue 26 bar'],
    run: (o) => benchSearchDevchain({ ...apiRun(o), connections: o.count('search-connections') }),
  },
  {
    name: 'streams',
    about: '/v1/stream and GraphQL subscription fan-out (issue 26)',
    expects: ['get_action_traces, 1 subscriber: latency', 'get_table_rows, 1 subscriber', 'WebSocket, 1 subscriber'],
    run: (o) =>
      benchStreams({
        seconds: o.count('streams-seconds'),
        subscriberCounts: o.list('streams-subscribers'),
        smoke: o.on('smoke'),
      }),
  },
  {
    name: 'graphql',
    about: 'GraphQL subscriptions over WebSocket and gRPC; the same search through GraphQL and REST',
    expects: ['WebSocket, 1 subscriber: latency', 'gRPC, 1 subscriber: latency', 'GraphQL p99 / REST p99'],
    run: (o) =>
      benchGraphql({
        subscriberSeconds: o.count('graphql-seconds'),
        subscriberCounts: o.list('graphql-subscribers'),
        querySeconds: o.count('graphql-query-seconds'),
        queryRounds: o.count('graphql-rounds'),
        connections: o.count('api-connections'),
        warmupSeconds: o.count('warmup-seconds'),
        smoke: o.on('smoke'),
      }),
  },
  {
    name: 'replicas',
    about: 'antler serve and two antler api replicas on one PostgreSQL store',
    needs: 'postgres',
    expects: ['replica stream: replica − all-in-one p99', 'two / one'],
    run: (o, c) =>
      benchReplicas({
        postgresUrl: c.postgresUrl!,
        seconds: o.count('replica-seconds'),
        rounds: o.count('api-rounds'),
        connections: o.count('api-connections'),
        streamSeconds: o.count('replica-stream-seconds'),
        warmupSeconds: o.count('warmup-seconds'),
        smoke: o.on('smoke'),
      }),
  },
  {
    name: 'startup',
    about: 'antler --help and antler dev --help, compiled and through tsx, next to node -e 0',
    expects: ['startup node -e 0', 'startup antler dev --help, compiled'],
    run: (o) => benchStartup(o.count('startup-runs'), o.on('smoke')),
  },
  {
    name: 'webhooks',
    about: 'webhook deliveries (issue 27) next to a /v1/stream subscriber',
    expects: ['1 subscription: block → delivery', '1 subscription: throughput and cost'],
    run: (o) => benchWebhooks({ seconds: o.count('webhook-seconds'), subscriptionCounts: o.list('webhook-subs') }),
  },
  {
    name: 'portal',
    about: "the portal's keys and usage pages (issue 28) next to /healthz",
    expects: ['/portal/keys with', '/portal/usage with'],
    run: (o) => benchPortal({ keys: o.count('portal-keys'), rounds: o.count('portal-rounds') }),
  },
]

const o = parseFlags(process.argv.slice(2))
if (o.on('help')) {
  console.log(helpText(BENCHES))
  process.exit(0)
}
const smoke = o.on('smoke')
const only = o.text('only')
const postgresUrl = process.env.ANTLER_BENCH_PG ?? process.env.ANTLER_TEST_PG
if (only && !BENCHES.some((b) => b.name === only)) {
  console.error(`bench: no bench ${only} (npm run bench -- --help lists them)`)
  process.exit(2)
}
const names = only ? [only] : smoke ? BENCHES.map((b) => b.name) : ['devchain', 'ingest', 'reads', 'api']
if (names.includes('ingest') && o.text('against')) names[names.indexOf('ingest')] = 'ingest-against'
if (names.includes('ingest') && o.on('savanna')) names.splice(names.indexOf('ingest') + 1, 0, 'ingest-savanna')

// Under --smoke without --sqlite or --postgres, the ingest bench keeps its stores for the store benches (made by an
// ingest of their own when it is not run first); the PostgreSQL database is dropped at the end.
const smokeDir = smoke ? mkdtempSync(join(tmpdir(), 'antler-smoke-')) : undefined
const keptArgs = smokeDir && !o.text('sqlite') && !o.text('postgres')
const flags = keptArgs
  ? parseFlags([
      ...process.argv.slice(2),
      '--keep-sqlite',
      join(smokeDir, 'store.sqlite'),
      ...(postgresUrl ? ['--keep-postgres'] : []),
    ])
  : o
let kept: { sqlite?: string; postgres?: string } | undefined
const context: Context = {
  postgresUrl,
  async stores() {
    if (!keptArgs) {
      if (o.text('sqlite') || o.text('postgres')) return { sqlite: o.text('sqlite'), postgres: o.text('postgres') }
      console.error('bench: needs --sqlite DIR/store.sqlite and/or --postgres URL (stores kept by the ingest bench)')
      process.exit(2)
    }
    if (!kept) await keep(await ingest(flags, context))
    return kept!
  },
}
const keep = async (figures: Figures) => {
  kept = { sqlite: flags.text('keep-sqlite'), postgres: figures['PostgreSQL store kept at'] as string | undefined }
}

const started = performance.now()
const failed: string[] = []
const skipped: string[] = []
try {
  for (const bench of BENCHES.filter((b) => names.includes(b.name))) {
    if (bench.needs === 'postgres' && !postgresUrl) {
      console.log(`# ${bench.name}: skipped, needs ANTLER_BENCH_PG or ANTLER_TEST_PG (a PostgreSQL server URL)`)
      skipped.push(bench.name)
      continue
    }
    console.log(`# ${bench.name}: ${bench.about}`)
    const benchStarted = performance.now()
    process.exitCode = undefined
    let problems: string[]
    try {
      const figures = await bench.run(flags, context)
      for (const [name, value] of Object.entries(figures)) console.log(`${name}: ${value}`)
      if (bench.name === 'ingest' && keptArgs) await keep(figures)
      problems = smokeProblems(figures, bench.expects)
      if (process.exitCode) problems.push(`the bench failed (exit code ${process.exitCode})`)
      if (process.exitCode && !smoke) failed.push(bench.name)
    } catch (error) {
      if (!smoke) throw error
      problems = [`threw: ${(error as Error).stack}`]
    }
    if (smoke) {
      const seconds = ((performance.now() - benchStarted) / 1000).toFixed(0)
      console.log(
        `smoke: ${bench.name} ${problems.length ? `FAILED (${seconds} s):\n  ${problems.join('\n  ')}` : `ok (${seconds} s)`}`,
      )
      if (problems.length) failed.push(bench.name)
    }
  }
} finally {
  if (kept?.postgres) {
    const admin = new pg.Client({ connectionString: postgresUrl })
    await admin.connect()
    await admin.query(`DROP DATABASE IF EXISTS ${new URL(kept.postgres).pathname.slice(1)} WITH (FORCE)`)
    await admin.end()
  }
  if (smokeDir) rmSync(smokeDir, { recursive: true, force: true })
}
const seconds = ((performance.now() - started) / 1000).toFixed(0)
const skips = skipped.length ? `; skipped (no PostgreSQL): ${skipped.join(', ')}` : ''
if (smoke)
  console.log(`smoke: ${failed.length ? `FAILED: ${failed.join(', ')}` : 'every bench ok'}${skips}; ${seconds} s`)
process.exitCode = failed.length ? 1 : skipped.length && !smoke ? 2 : 0
