import { parseArgs } from 'node:util'
import { benchApi } from './api.ts'
import { benchDevchain } from './devchain.ts'
import { benchGraphql } from './graphql.ts'
import { benchIngest, benchIngestSavanna } from './ingest.ts'
import { benchIngestAgainst } from './ingest-against.ts'
import { benchSearchOfPostgres, benchSearchOfSqlite } from './search.ts'
import { benchSearchApi } from './search-api.ts'
import { benchSearchDevchain } from './search-devchain.ts'
import { benchStartup } from './startup.ts'
import { benchStateApi } from './state-api.ts'
import { benchStoreReads } from './store-reads.ts'
import { benchStreams } from './streams.ts'
import { benchReplicas } from './replicas.ts'
import { benchWebhooks } from './webhooks.ts'
import { benchPortal } from './portal.ts'

/**
 * `npm run bench [-- --actions N]`: runs every benchmark and prints its figures. Figures that
 * depend on the machine are given next to a limit measured in the same run. `--keep-sqlite PATH`
 * keeps the SQLite store the ingest bench wrote and `--keep-postgres` its PostgreSQL database;
 * `--only search --sqlite PATH` or `--only search --postgres URL` runs the search figures on such a
 * store alone. `--only api` runs the API figures (`--api-seconds`, `--api-connections`,
 * `--api-rounds`, `--api-backlog 0` to skip the latency-during-catch-up figures). `--only state-api
 * --sqlite PATH --postgres URL` (either or both) runs the REST state figures against `antler api`
 * on such stores (`--api-seconds`, `--api-rounds`); it appends its state fixture to a store once
 * (bench/state-api.ts). `--only ingest-savanna` (or `--savanna` with the ingest figures) compares
 * ingest of a Savanna chain with a legacy one (`--ingest-actions`, `--savanna-rounds`).
 * `--only search-api --sqlite PATH --postgres URL` (either or both) runs the search figures of
 * issue 16 through `GET /v0/search/transactions` on such stores (`--api-seconds`, `--api-rounds`).
 * `--only graphql` runs the GraphQL figures on `antler dev` (subscription fan-out over WebSocket and gRPC,
 * `--graphql-seconds`, `--graphql-subscribers 1,100,1000`; query against REST, `--graphql-query-seconds`,
 * `--graphql-rounds`, `--api-connections`).
 * `--only ingest --against REV` compares this build's ingest with an older commit's in one run
 * (bench/ingest-against.ts): REV is checked out once as a git worktree under the temporary directory (its node_modules
 * a link to this tree's when its lockfile's packages are all installed here at the same versions, else its own
 * `npm ci`); both sides ingest the same SHiP feed through bench/ingest-child.ts, which loads each side's own store and
 * indexer in a process of its own and times them alike; `--against-pairs N` (3) pairs per store, SQLite and
 * PostgreSQL taking turns, each pair and its ratio printed as it ends, then the medians and the bars (≥ 0.95 × REV,
 * PostgreSQL ≥ 0.6 × SQLite).
 * `--only replicas` (PostgreSQL: ANTLER_BENCH_PG or ANTLER_TEST_PG) runs `antler serve` and two `antler api`
 * replicas on one store: a replica's stream latency next to the all-in-one process, and reads on one replica
 * against two (`--replica-seconds`, `--api-rounds`, `--api-connections`, `--replica-stream-seconds`).
 * `--only startup` times `antler --help` and `antler dev --help`, compiled and through tsx (`--startup-runs`).
 * `--only webhooks` runs the webhook delivery figures of issue 27 on `antler dev` (`--webhook-seconds`,
 * `--webhook-subs 1,100,1000`).
 * `--only portal` times the management portal's keys and usage pages of an account with `--portal-keys` (200) keys
 * (`--portal-rounds` loads each, next to /healthz) on `antler dev` (issue 28).
 */
const { values } = parseArgs({
  options: {
    actions: { type: 'string', default: '1000000' },
    'transfers-per-block': { type: 'string', default: '20' },
    'rawdb-per-block': { type: 'string', default: '5' },
    'ingest-actions': { type: 'string', default: '100000' },
    against: { type: 'string' },
    'against-pairs': { type: 'string', default: '3' },
    only: { type: 'string' },
    'keep-sqlite': { type: 'string' },
    'keep-postgres': { type: 'boolean', default: false },
    savanna: { type: 'boolean', default: false },
    'savanna-rounds': { type: 'string', default: '3' },
    sqlite: { type: 'string' },
    postgres: { type: 'string' },
    'api-seconds': { type: 'string', default: '5' },
    'api-connections': { type: 'string', default: '10' },
    'api-rounds': { type: 'string', default: '4' },
    'api-backlog': { type: 'string', default: '6000' },
    'graphql-seconds': { type: 'string', default: '30' },
    'streams-seconds': { type: 'string', default: '20' },
    'streams-subscribers': { type: 'string', default: '1,100,1000' },
    'graphql-subscribers': { type: 'string', default: '1,100,1000' },
    'graphql-rounds': { type: 'string', default: '3' },
    'graphql-query-seconds': { type: 'string', default: '10' },
    'startup-runs': { type: 'string', default: '10' },
    'replica-seconds': { type: 'string', default: '5' },
    'replica-stream-seconds': { type: 'string', default: '60' },
    'search-connections': { type: 'string', default: '32' },
    'search-pages-only': { type: 'boolean', default: false },
    'webhook-seconds': { type: 'string', default: '20' },
    'webhook-subs': { type: 'string', default: '1,100,1000' },
    'portal-keys': { type: 'string', default: '200' },
    'portal-rounds': { type: 'string', default: '50' },
  },
})

const actions = Number(values.actions)
if (!Number.isInteger(actions) || actions < 1000) {
  console.error('bench: --actions must be a whole number of at least 1000')
  process.exit(2)
}

const print = (figures: Record<string, string | number>) => {
  for (const [name, value] of Object.entries(figures)) console.log(`${name}: ${value}`)
}
if (!values.only || values.only === 'devchain') {
  console.log(
    `# devchain: ${actions} actions, ${values['transfers-per-block']} transfers + ${values['rawdb-per-block']} rawdb puts per block`,
  )
  print(
    await benchDevchain({
      actions,
      transfersPerBlock: Number(values['transfers-per-block']),
      rawdbPutsPerBlock: Number(values['rawdb-per-block']),
    }),
  )
}
if ((!values.only || values.only === 'ingest') && values.against) {
  const ingestActions = Number(values['ingest-actions'])
  const pairs = Number(values['against-pairs'])
  const postgresUrl = process.env.ANTLER_BENCH_PG ?? process.env.ANTLER_TEST_PG
  console.log(
    `# ingest, this build against ${values.against}: ${ingestActions} actions (20 transfers + 5 rawdb puts per block), ${pairs} pairs on SQLite${postgresUrl ? ' and on PostgreSQL' : ' (set ANTLER_BENCH_PG for PostgreSQL)'}, each ingest in a process of its own`,
  )
  print(await benchIngestAgainst({ rev: values.against, actions: ingestActions, pairs, postgresUrl }))
} else if (!values.only || values.only === 'ingest') {
  const ingestActions = Number(values['ingest-actions'])
  const postgresUrl = process.env.ANTLER_BENCH_PG ?? process.env.ANTLER_TEST_PG
  console.log(
    `# ingest: ${ingestActions} actions (20 transfers + 5 rawdb puts per block), SQLite${postgresUrl ? ' and PostgreSQL' : ' (set ANTLER_BENCH_PG for PostgreSQL)'}`,
  )
  print(
    await benchIngest({
      actions: ingestActions,
      postgresUrl,
      keepSqlite: values['keep-sqlite'],
      keepPostgres: values['keep-postgres'],
    }),
  )
}
if (values.only === 'ingest-savanna' || (values.savanna && (!values.only || values.only === 'ingest'))) {
  const ingestActions = Number(values['ingest-actions'])
  const rounds = Number(values['savanna-rounds'])
  console.log(
    `# ingest, Savanna against legacy: ${ingestActions} actions per chain (20 transfers + 5 rawdb puts per block), SQLite, best of ${rounds} rounds taking turns`,
  )
  print(await benchIngestSavanna({ actions: ingestActions, rounds }))
}
if (!values.only || values.only === 'reads') {
  const postgresUrl = process.env.ANTLER_BENCH_PG ?? process.env.ANTLER_TEST_PG
  console.log('# store reads: a 1,000-row scope rewritten 20 times, 1,500 small scopes')
  print(await benchStoreReads(postgresUrl))
}
if (!values.only || values.only === 'api') {
  const seconds = Number(values['api-seconds'])
  const connections = Number(values['api-connections'])
  const backlogBlocks = Number(values['api-backlog'])
  const rounds = Number(values['api-rounds'])
  if (
    ![seconds, connections, rounds].every((n) => Number.isInteger(n) && n >= 1) ||
    !Number.isInteger(backlogBlocks) ||
    backlogBlocks < 0
  ) {
    console.error(
      'bench: --api-seconds, --api-connections and --api-rounds must be whole numbers of at least 1, --api-backlog a whole number',
    )
    process.exit(2)
  }
  console.log(
    `# api: autocannon (own process), ${connections} connections; a fresh antler dev (--workload none) per configuration, warmed up 3 s, then ${rounds} runs of ${seconds} s each, configurations taking turns; catch-up backlog ${backlogBlocks} blocks`,
  )
  print(await benchApi({ seconds, warmupSeconds: 3, connections, rounds, backlogBlocks, latencyRate: 200 }))
}
if (values.only === 'search') {
  if (!values.sqlite === !values.postgres) {
    console.error(
      'bench: --only search needs --sqlite PATH or --postgres URL (a store kept by --keep-sqlite or --keep-postgres)',
    )
    process.exit(2)
  }
  console.log(`# search: ${values.sqlite ?? values.postgres}`)
  print(await (values.sqlite ? benchSearchOfSqlite(values.sqlite) : benchSearchOfPostgres(values.postgres as string)))
}
if (values.only === 'state-api') {
  const seconds = Number(values['api-seconds'])
  const rounds = Number(values['api-rounds'])
  if (!values.sqlite && !values.postgres) {
    console.error(
      'bench: --only state-api needs --sqlite PATH and/or --postgres URL (stores kept by --keep-sqlite / --keep-postgres of a 1,000,000-action ingest run)',
    )
    process.exit(2)
  }
  if (![seconds, rounds].every((n) => Number.isInteger(n) && n >= 1)) {
    console.error('bench: --api-seconds and --api-rounds must be whole numbers of at least 1')
    process.exit(2)
  }
  console.log(
    `# state-api: ${[values.sqlite, values.postgres].filter(Boolean).join(' and ')}; autocannon (own process) against antler api --no-auth, warmed up 3 s, then ${rounds} runs of ${seconds} s each, configurations taking turns`,
  )
  print(await benchStateApi({ sqlite: values.sqlite, postgres: values.postgres, seconds, rounds, warmupSeconds: 3 }))
}
if (values.only === 'search-api') {
  const seconds = Number(values['api-seconds'])
  const rounds = Number(values['api-rounds'])
  if (!values.sqlite && !values.postgres) {
    console.error(
      'bench: --only search-api needs --sqlite PATH and/or --postgres URL (stores kept by --keep-sqlite / --keep-postgres of a 1,000,000-action ingest run)',
    )
    process.exit(2)
  }
  if (![seconds, rounds].every((n) => Number.isInteger(n) && n >= 1)) {
    console.error('bench: --api-seconds and --api-rounds must be whole numbers of at least 1')
    process.exit(2)
  }
  console.log(
    `# search-api: ${[values.sqlite, values.postgres].filter(Boolean).join(' and ')}; autocannon (own process, 1 connection) against antler api --no-auth, warmed up 3 s, then ${rounds} runs of ${seconds} s each, configurations taking turns`,
  )
  // `--search-pages-only`: only the 25-transaction pages, warm and unwarmed (issue 26), not issue 16's limit-100 set.
  const pagesOnly = values['search-pages-only']
  print(
    await benchSearchApi({
      sqlite: values.sqlite,
      postgres: values.postgres,
      seconds,
      rounds,
      warmupSeconds: 3,
      pagesOnly,
    }),
  )
}
if (values.only === 'search-devchain') {
  // `--only search-devchain [--api-seconds 5 --api-rounds 4 --search-connections 32]`: bench/search-devchain.ts.
  const seconds = Number(values['api-seconds'])
  const rounds = Number(values['api-rounds'])
  const connections = Number(values['search-connections'])
  if (![seconds, rounds, connections].every((n) => Number.isInteger(n) && n >= 1)) {
    console.error('bench: --api-seconds, --api-rounds and --search-connections must be whole numbers of at least 1')
    process.exit(2)
  }
  console.log(
    `# search-devchain: antler dev (--workload demo, 500 ms blocks, --no-auth), autocannon (own process), ${connections} connections, search and /healthz taking turns, ${rounds} runs of ${seconds} s each`,
  )
  print(await benchSearchDevchain({ seconds, rounds, connections }))
}
if (values.only === 'streams') {
  // `--only streams [--streams-seconds 20 --streams-subscribers 1,100,1000]`: bench/streams.ts (issue 26's fan-out).
  const seconds = Number(values['streams-seconds'])
  const subscriberCounts = (values['streams-subscribers'] as string).split(',').map(Number)
  if (!Number.isInteger(seconds) || seconds < 1 || !subscriberCounts.every((n) => Number.isInteger(n) && n >= 1)) {
    console.error('bench: --streams-seconds and --streams-subscribers (a list) must be whole numbers of at least 1')
    process.exit(2)
  }
  console.log(
    `# streams: antler dev (--workload demo, 500 ms blocks), a fresh one per kind; live subscribers (${subscriberCounts.join(', ')}) in a process of their own, ${seconds} s each: /v1/stream action traces, /v1/stream table rows, GraphQL over WebSocket`,
  )
  print(await benchStreams({ seconds, subscriberCounts }))
}
if (values.only === 'graphql') {
  const subscriberSeconds = Number(values['graphql-seconds'])
  const subscriberCounts = (values['graphql-subscribers'] as string).split(',').map(Number)
  const querySeconds = Number(values['graphql-query-seconds'])
  const queryRounds = Number(values['graphql-rounds'])
  const connections = Number(values['api-connections'])
  if (
    ![subscriberSeconds, querySeconds, queryRounds, connections, ...subscriberCounts].every(
      (n) => Number.isInteger(n) && n >= 1,
    )
  ) {
    console.error(
      'bench: --graphql-seconds, --graphql-subscribers (a list), --graphql-rounds, --graphql-query-seconds and ' +
        '--api-connections must be whole numbers of at least 1',
    )
    process.exit(2)
  }
  console.log(
    `# graphql: antler dev (--workload demo, 500 ms blocks); live subscribers (${subscriberCounts.join(', ')}) ` +
      `over WebSocket then gRPC (own process), ${subscriberSeconds} s each; then the same search through GraphQL ` +
      `and REST, autocannon (own process), ${connections} connections, warmed up 3 s, ${queryRounds} rounds of ` +
      `${querySeconds} s runs (each alone, taking turns, then both interleaved)`,
  )
  print(await benchGraphql({ subscriberSeconds, subscriberCounts, querySeconds, queryRounds, connections }))
}
if (values.only === 'replicas') {
  // `--only replicas [--replica-seconds 5 --api-rounds 4 --api-connections 32 --replica-stream-seconds 60]`.
  const postgresUrl = process.env.ANTLER_BENCH_PG ?? process.env.ANTLER_TEST_PG
  const seconds = Number(values['replica-seconds'])
  const rounds = Number(values['api-rounds'])
  const connections = Number(values['api-connections'])
  const streamSeconds = Number(values['replica-stream-seconds'])
  if (!postgresUrl) {
    console.error('bench: --only replicas needs ANTLER_BENCH_PG (or ANTLER_TEST_PG), a PostgreSQL server URL')
    process.exit(2)
  }
  if (![seconds, rounds, connections, streamSeconds].every((n) => Number.isInteger(n) && n >= 1)) {
    console.error(
      'bench: --replica-seconds, --api-rounds, --api-connections and --replica-stream-seconds must be whole numbers of at least 1',
    )
    process.exit(2)
  }
  console.log(
    `# replicas: antler devchain (demo workload, 500 ms blocks), antler serve (indexer + API) and two antler api on one PostgreSQL store, --no-auth; a get_head_info stream on a replica and on serve for ${streamSeconds} s; then autocannon (own processes), ${connections} connections split between the replicas, ${rounds} rounds of ${seconds} s, one replica and two taking turns`,
  )
  print(await benchReplicas({ postgresUrl, seconds, rounds, connections, streamSeconds }))
}
if (values.only === 'startup') {
  // `--only startup [--startup-runs 10]`: bench/startup.ts (antler --help, compiled and through tsx).
  const runs = Number(values['startup-runs'])
  if (!Number.isInteger(runs) || runs < 1) {
    console.error('bench: --startup-runs must be a whole number of at least 1')
    process.exit(2)
  }
  console.log(
    `# startup: antler --help and antler dev --help to their end, compiled (a fresh build) and through tsx, and node -e 0; medians of ${runs} rounds taking turns`,
  )
  print(benchStartup(runs))
}
if (values.only === 'webhooks') {
  // `--only webhooks [--webhook-seconds 20 --webhook-subs 1,100,1000]`: bench/webhooks.ts (issue 27).
  const seconds = Number(values['webhook-seconds'])
  const subscriptionCounts = (values['webhook-subs'] as string).split(',').map(Number)
  if (![seconds, ...subscriptionCounts].every((n) => Number.isInteger(n) && n >= 1)) {
    console.error('bench: --webhook-seconds and --webhook-subs (a list) must be whole numbers of at least 1')
    process.exit(2)
  }
  console.log(
    `# webhooks: antler dev (--workload demo, 500 ms blocks); ${subscriptionCounts.join(', ')} subscriptions of one ` +
      `key (receiver:eosio.token action:transfer) to a loopback receiver in a process of its own, ${seconds} s each, ` +
      'with a /v1/stream subscriber alongside',
  )
  print(await benchWebhooks({ seconds, subscriptionCounts }))
}
if (values.only === 'portal') {
  const keys = Number(values['portal-keys'])
  const rounds = Number(values['portal-rounds'])
  if (![keys, rounds].every((n) => Number.isInteger(n) && n >= 1)) {
    console.error('bench: --portal-keys and --portal-rounds must be whole numbers of at least 1')
    process.exit(2)
  }
  console.log(`# portal: antler dev, an account with ${keys} keys; ${rounds} loads of each page, one at a time`)
  print(await benchPortal({ keys, rounds }))
}
