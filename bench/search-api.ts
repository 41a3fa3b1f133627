import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { createLifecycleService } from '../src/lifecycle/index.ts'
import { createSearchService, type SearchRequest, type SearchService } from '../src/search/index.ts'
import type { Store } from '../src/store/index.ts'
import { seededRandom } from '../test/_helpers/store.ts'
import {
  cannon,
  describeLoops,
  describeRuns,
  keptStoresBench,
  measureTurns,
  startApiServer,
  type ApiServer,
  type BenchRun,
  type Cannon,
  type Configuration,
  type KeptStore,
  type KeptStoresOptions,
} from './children.ts'
import { postgresPostingsBytes, sqlitePostingsBytes } from './search.ts'
import { fmt, median, type Figures } from './timing.ts'

export interface SearchApiBenchOptions extends KeptStoresOptions {
  /** Only the 25-transaction page figures (warm and unwarmed), not issue 16's limit-100 configurations. */
  readonly pagesOnly?: boolean
}

/** The bar of issue 16: p99 through HTTP, ms, and the index's bytes per action. */
const BAR_P99_MS = 20
const BAR_BYTES_PER_ACTION = 100
/** Distinct requests of each configuration, cycled (seeded start blocks, amounts or cursors). */
const VARIANTS = 8
/** Issue 26's bar: p99 of warm 25-transaction pages through HTTP, ms. */
const BAR_WARM_P99_MS = 20
/** Unwarmed pages prepared for each run (1 connection answers fewer in a run; more would be asked again, warm). */
const UNWARMED_PER_RUN = 400
/** Start blocks of unwarmed pages are this many blocks apart at least: no page shares a block with another. */
const UNWARMED_SPACING = 4

/**
 * One request: its path and what it must answer (checked against the in-process answer first; any length when
 * undefined).
 */
interface Request {
  readonly path: string
  readonly search: SearchRequest
  expectLength?: number
  transactions?: number
}

/** The query string of a search request, as `@dfuse/client` sends it. */
function pathOf(s: SearchRequest): string {
  const params = new URLSearchParams({ q: s.query, limit: String(s.limit ?? 25), sort: s.sort ?? 'asc' })
  if (s.startBlock !== undefined) params.set('start_block', String(s.startBlock))
  if (s.cursor) params.set('cursor', s.cursor)
  return `/v0/search/transactions?${params.toString()}`
}

/**
 * Fetches each request once through HTTP and compares the answer with the in-process service's answer to the same
 * request, serialized: the same JSON, and a non-empty page (the rare query's may hold fewer than its limit). Under load
 * every answer must then have that length.
 */
async function verify(server: ApiServer, search: SearchService, requests: readonly Request[]): Promise<void> {
  for (const request of requests) {
    const response = await fetch(server.api + request.path, { signal: AbortSignal.timeout(60_000) })
    const text = await response.text()
    const what = `${server.label} ${request.path.slice(0, 200)}`
    if (response.status !== 200) throw new Error(`${what}: HTTP ${response.status} ${text.slice(0, 300)}`)
    const local = JSON.stringify(await search.searchTransactions(request.search))
    if (text !== local)
      throw new Error(
        `${what}: the HTTP answer (${text.length} chars) differs from the in-process one (${local.length} chars)`,
      )
    const answer = JSON.parse(text) as { transactions: unknown[] | null }
    if (!answer.transactions?.length) throw new Error(`${what}: no transaction`)
    request.expectLength = text.length
    request.transactions = answer.transactions.length
  }
}

/** The requests in-process, as the limit: the service's answer and its JSON, no HTTP. */
const localReads = (search: SearchService, requests: readonly Request[]) =>
  requests.map((r) => async () => (JSON.stringify(await search.searchTransactions(r.search)), 1))

/** 0.0001 … 1.0000 EOS as the bench chain's transfers carry them (bench/search.ts). */
const quantity = (units: number) => `"${(units / 10_000).toFixed(4)} EOS"`

interface SearchConfiguration extends Configuration<Request> {
  readonly adapter: string
  readonly search: SearchService
}

/**
 * The query kinds of issue 16 over the bench chain (src/devchain/builder.ts: blocks of 20 eosio.token transfers
 * alice→bob→carol→alice and 5 rawdb puts), limit 100 each, both orders; each configuration cycles through VARIANTS
 * seeded requests so that no answer is one cached page.
 */
async function configurationsOf(
  adapter: string,
  server: ApiServer,
  search: SearchService,
  head: number,
  random: () => number,
  smoke = false,
): Promise<SearchConfiguration[]> {
  const startBlock = () => 1 + Math.floor(random() * (head - 1))
  const kinds: { kind: string; describe: string; requests: (sort: 'asc' | 'desc') => Promise<SearchRequest[]> }[] = [
    {
      kind: 'dense',
      describe: 'dense 2-term `receiver:eosio.token action:transfer`, from a seeded start block',
      requests: async (sort) =>
        Array.from({ length: VARIANTS }, () => ({
          query: 'receiver:eosio.token action:transfer',
          limit: 100,
          sort,
          startBlock: startBlock(),
        })),
    },
    {
      kind: 'rare',
      describe:
        'rare 3-term `data.quantity:"<one of 10,000 amounts>" data.from:alice receiver:bob` (seeded amounts with a match), whole chain',
      requests: async (sort) => {
        // Amounts that some transfer from alice carried (a few have none).
        const out: SearchRequest[] = []
        for (let tries = 0; out.length < VARIANTS && tries < 1000; tries++) {
          const request = {
            query: `data.quantity:${quantity(1 + Math.floor(random() * 10_000))} data.from:alice receiver:bob`,
            limit: 100,
            sort,
          }
          if ((await search.searchRows({ ...request, limit: 1 })).rows.length > 0) out.push(request)
        }
        return out
      },
    },
    {
      kind: 'negation',
      describe: 'negation `receiver:eosio.token action:transfer -data.to:bob`, from a seeded start block',
      requests: async (sort) =>
        Array.from({ length: VARIANTS }, () => ({
          query: 'receiver:eosio.token action:transfer -data.to:bob',
          limit: 100,
          sort,
          startBlock: startBlock(),
        })),
    },
    {
      kind: 'data',
      describe: '`data.to:bob` (3 matching actions a transaction), from a seeded start block',
      requests: async (sort) =>
        Array.from({ length: VARIANTS }, () => ({ query: 'data.to:bob', limit: 100, sort, startBlock: startBlock() })),
    },
    {
      kind: 'cursor',
      describe:
        'deep cursor page: the dense query resumed from the cursor of a page at a seeded block (no start_block)',
      requests: async (sort) => {
        const out: SearchRequest[] = []
        for (let i = 0; i < VARIANTS; i++) {
          const query = 'receiver:eosio.token action:transfer'
          const first = await search.searchTransactions({ query, limit: 1, sort, startBlock: startBlock() })
          out.push({ query, limit: 100, sort, cursor: first.cursor })
        }
        return out
      },
    },
  ]
  const out: SearchConfiguration[] = []
  for (const k of smoke ? kinds.slice(0, 1) : kinds) {
    for (const sort of smoke ? (['asc'] as const) : (['asc', 'desc'] as const)) {
      const requests = (await k.requests(sort)).map((s) => ({ path: pathOf(s), search: s }))
      out.push({
        key: `${adapter}-${k.kind}-${sort}`,
        adapter,
        name: `${adapter}: ${k.describe}, limit 100, ${sort}`,
        server,
        search,
        requests,
        connections: 1,
        local: localReads(search, requests),
      })
    }
  }
  return out
}

/** The index's bytes and the chain's action traces and input actions (25 a block on the bench chain). */
async function indexSize(
  adapter: 'SQLite' | 'PostgreSQL',
  where: string,
): Promise<{ bytes: number; traces: number; inputs: number }> {
  if (adapter === 'SQLite') {
    const db = new Database(where, { readonly: true })
    try {
      const { traces, blocks } = db
        .prepare(
          'SELECT (SELECT COUNT(*) FROM actions) AS traces, (SELECT COUNT(*) FROM blocks WHERE action_count > 0) AS blocks',
        )
        .get() as { traces: number; blocks: number }
      return { bytes: sqlitePostingsBytes(where), traces, inputs: blocks * 25 }
    } finally {
      db.close()
    }
  }
  const client = new pg.Client({ connectionString: where })
  await client.connect()
  try {
    const { traces, blocks } = (
      await client.query(
        'SELECT (SELECT COUNT(*) FROM actions)::int AS traces, (SELECT COUNT(*) FROM blocks WHERE action_count > 0)::int AS blocks',
      )
    ).rows[0]
    return { bytes: await postgresPostingsBytes(client), traces, inputs: blocks * 25 }
  } finally {
    await client.end()
  }
}

/**
 * Issue 16's search figures: `GET /v0/search/transactions` on `antler api --no-auth` over a kept 1,000,000-action bench
 * store (SQLite, PostgreSQL or both at once, each server in its own process), loaded by autocannon in another process,
 * 1 connection (the latency of a request): a dense two-term query, a rare three-term one, a negation, a `data.*` query
 * and a deep cursor page, ascending and descending, limit 100; each next to the same requests answered by the search
 * service in this process on a read-only store of the same adapter (searchTransactions and its JSON, no HTTP: the
 * limit). Every distinct request is first fetched through HTTP and compared with the in-process answer (the same JSON);
 * under load every answer must be 200 with that length. Configurations are warmed up, then take turns (`rounds` runs of
 * `seconds`, the order rotated).
 */
export function benchSearchApi(options: SearchApiBenchOptions): Promise<Figures> {
  return keptStoresBench('search-api', options, (run, adapters, readOnly) => measure(options, run, adapters, readOnly))
}

async function measure(
  options: SearchApiBenchOptions,
  run: BenchRun,
  adapters: KeptStore[],
  readOnly: (store: KeptStore) => Promise<Store>,
): Promise<void> {
  const { dir, children, figures } = run
  const configurations: SearchConfiguration[] = []
  const pageServers: Parameters<typeof pageFigures>[1] = []
  const sizes = new Map<string, [number, number]>()
  for (const adapter of adapters) {
    const size = await indexSize(adapter.label, adapter.where)
    figures[`${adapter.label}: search index bytes per action trace (per input action)`] =
      `${(size.bytes / size.traces).toFixed(1)} (${(size.bytes / size.inputs).toFixed(1)}); ${fmt(size.bytes)} bytes, ${fmt(size.traces)} traces`
    sizes.set(adapter.label, [size.bytes / size.traces, size.bytes / size.inputs])
    const store = await readOnly(adapter)
    const position = await store.position()
    if (!position) throw new Error(`${adapter.label}: the store is empty`)
    const lifecycle = createLifecycleService({ store })
    const search = createSearchService({ store, lifecycle, cursorKey: await store.secret('cursor_key') })
    const server = await startApiServer(children, adapter.label, adapter.storeArgs, join(dir, `${adapter.label}.log`))
    pageServers.push({ label: adapter.label, server, search, lib: position.lib })
    if (options.pagesOnly) continue
    const own = await configurationsOf(adapter.label, server, search, position.lib, seededRandom(16), options.smoke)
    for (const c of own) await verify(server, search, c.requests)
    configurations.push(...own)
    figures[`${adapter.label}: store LIB, transactions per page (mean of the requests)`] =
      `${position.lib}; ${own.map((c) => `${c.key.slice(adapter.label.length + 1)} ${meanTransactions(c).toFixed(1)}`).join(', ')}`
  }
  Object.assign(figures, await pageFigures(run, pageServers, options))
  figures['every distinct request checked before the runs'] =
    'HTTP answer identical to the in-process service answer (JSON), at least one transaction; under load every answer must be 200 with that length'

  console.error(`  search-api bench: ${configurations.length} configurations, warming up`)
  const measured = await measureTurns(run, configurations, options)
  for (const c of configurations) {
    const m = measured.get(c.key)!
    const bytes = median(c.requests.map((r) => r.expectLength!))
    figures[`${c.name} · HTTP`] = describeRuns(m.http, `, answers ${fmt(bytes)} bytes (median)`)
    figures[`${c.name} · in-process limit`] = describeLoops(m.local, 'answers/s')
  }
  for (const adapter of options.pagesOnly ? [] : adapters) {
    const own = configurations.filter((c) => c.adapter === adapter.label)
    const worst = own.reduce(
      (w, c) => {
        const p99 = median(measured.get(c.key)!.http.map((r) => r.p99))
        return p99 > w.p99 ? { p99, key: c.key } : w
      },
      { p99: 0, key: '' },
    )
    figures[
      `${adapter.label}: issue 16 bar, p99 < ${BAR_P99_MS} ms through HTTP for each query and order (median p99 of the runs)`
    ] = `${worst.p99 < BAR_P99_MS ? 'HOLDS' : 'DOES NOT HOLD'} (worst ${worst.p99} ms, ${worst.key})`
    const [perTrace, perInput] = sizes.get(adapter.label)!
    const verdict = (bytes: number) =>
      `${bytes < BAR_BYTES_PER_ACTION ? 'HOLDS' : 'DOES NOT HOLD'} (${bytes.toFixed(1)})`
    figures[`${adapter.label}: issue 16 bar, index < ${BAR_BYTES_PER_ACTION} bytes per action`] =
      `per action trace ${verdict(perTrace)}; per input action ${verdict(perInput)}`
  }
}

/** The mean number of transactions on the pages of a configuration's requests. */
function meanTransactions(c: { requests: readonly { transactions?: number }[] }): number {
  return c.requests.reduce((s, r) => s + r.transactions!, 0) / c.requests.length
}

/** The 25-transaction page of the dense query from a start block, ascending. */
const page25 = (startBlock: number): SearchRequest => ({
  query: 'receiver:eosio.token action:transfer',
  limit: 25,
  sort: 'asc',
  startBlock,
})

/**
 * Issue 26's figures: 25-transaction pages of the dense query through HTTP, 1 connection, warm and unwarmed side by
 * side. Warm: VARIANTS pages (seeded start blocks) cycled, each answered before the runs (the server keeps what cannot
 * change: final lifecycles, irreversible executions and blocks, pinned answers). Unwarmed: for each run,
 * UNWARMED_PER_RUN pages that no request has asked before (start blocks drawn without replacement, UNWARMED_SPACING
 * blocks apart), their expected lengths from the in-process service (a process of its own: the server's caches are not
 * touched); after each run three of them are fetched again through HTTP and compared with the in-process JSON. A run
 * that answered more than it was given is reported as a failure (its last answers were warm).
 */
async function pageFigures(
  { children, failures, check }: BenchRun,
  servers: { label: string; server: ApiServer; search: SearchService; lib: number }[],
  options: SearchApiBenchOptions,
): Promise<Record<string, string>> {
  // An unwarmed run ends once it has asked each of its pages (a small store's runs: more would be warm).
  const load = (server: ApiServer, requests: readonly Request[], stopAfter?: number) =>
    cannon(children, server.api, requests, {
      seconds: options.seconds,
      connections: 1,
      pid: server.child.pid,
      stopAfter,
    })
  const figures: Record<string, string> = {}
  const runs = new Map<string, Cannon[]>()
  const plans = servers.map((s) => {
    const random = seededRandom(26)
    const warm: Request[] = Array.from({ length: VARIANTS }, () => {
      const search = page25(1 + Math.floor(random() * (s.lib - 100)))
      return { path: pathOf(search), search }
    })
    // Every UNWARMED_SPACING-th block, shuffled (seeded): drawn without replacement.
    const starts = Array.from(
      { length: Math.floor((s.lib - 100) / UNWARMED_SPACING) },
      (_, i) => 1 + i * UNWARMED_SPACING,
    )
    for (let i = starts.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1))
      ;[starts[i], starts[j]] = [starts[j], starts[i]]
    }
    // Not the warm pages' blocks.
    const warmBlocks = new Set(warm.map((w) => w.search.startBlock!))
    const fresh = starts.filter((b) => ![...warmBlocks].some((w) => Math.abs(w - b) < 40))
    return { ...s, warm, fresh }
  })
  for (const plan of plans) {
    await verify(plan.server, plan.search, plan.warm)
    runs.set(`${plan.label}-warm`, [])
    runs.set(`${plan.label}-unwarmed`, [])
    const run = { seconds: options.warmupSeconds, connections: 1 }
    if (run.seconds > 0)
      check(
        `${plan.label} warm 25-transaction pages (warm-up)`,
        await cannon(children, plan.server.api, plan.warm, run),
      )
  }
  for (let round = 0; round < options.rounds; round++) {
    console.error(`  search-api bench: 25-transaction pages, round ${round + 1} of ${options.rounds}`)
    for (const plan of plans) {
      const batch: Request[] = []
      // Each round takes its share of the unasked pages (a small store has fewer than UNWARMED_PER_RUN a round).
      const share = Math.min(
        options.smoke ? 20 : UNWARMED_PER_RUN,
        Math.floor(plan.fresh.length / (options.rounds - round)),
      )
      if (share < 10) throw new Error(`${plan.label}: too few blocks for ${options.rounds} rounds of unwarmed pages`)
      for (const startBlock of plan.fresh.splice(0, share)) {
        const search = page25(startBlock)
        const json = JSON.stringify(await plan.search.searchTransactions(search))
        batch.push({ path: pathOf(search), search, expectLength: json.length })
      }
      for (const kind of round % 2 ? (['unwarmed', 'warm'] as const) : (['warm', 'unwarmed'] as const)) {
        const requests = kind === 'warm' ? plan.warm : batch
        const run = await load(plan.server, requests, kind === 'unwarmed' ? batch.length : undefined)
        const label = `${plan.label} ${kind} 25-transaction pages, round ${round + 1}`
        check(label, run)
        if (kind === 'unwarmed' && run.answered + run.failed > batch.length)
          failures.push(`${label}: ${run.answered + run.failed} answers of ${batch.length} pages (some were warm)`)
        runs.get(`${plan.label}-${kind}`)!.push(run)
      }
      for (const request of batch.slice(0, 3)) {
        const text = await (await fetch(plan.server.api + request.path, { signal: AbortSignal.timeout(60_000) })).text()
        if (text !== JSON.stringify(await plan.search.searchTransactions(request.search)))
          failures.push(`${plan.label} ${request.path}: the HTTP answer differs from the in-process one`)
      }
    }
  }
  for (const plan of plans) {
    const warm = runs.get(`${plan.label}-warm`)!
    const unwarmed = runs.get(`${plan.label}-unwarmed`)!
    figures[
      `${plan.label}: 25-transaction pages (dense query, asc), warm (${VARIANTS} pages cycled) · HTTP, 1 connection`
    ] = describeRuns(warm)
    figures[`${plan.label}: 25-transaction pages, unwarmed (each page asked once) · HTTP, 1 connection`] =
      describeRuns(unwarmed)
    const p99 = median(warm.map((r) => r.p99))
    figures[
      `${plan.label}: issue 26 bar, warm 25-transaction pages p99 ≤ ${BAR_WARM_P99_MS} ms (median p99 of the runs)`
    ] =
      `${p99 <= BAR_WARM_P99_MS ? 'HOLDS' : 'DOES NOT HOLD'} (${p99} ms; unwarmed ${median(unwarmed.map((r) => r.p99))} ms)`
  }
  return figures
}
