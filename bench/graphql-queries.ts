import { fork } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { cpuSeconds, type Children } from './children.ts'
import type { Antler, GraphqlBenchOptions } from './graphql.ts'
import type { LoadConfig, LoadRequest, LoadResult } from './graphql-load.ts'

const LOAD = fileURLToPath(new URL('./graphql-load.ts', import.meta.url))
/** The bar of the issue: GraphQL's p99 within 1.2 × REST's, same search, same connections. */
const BAR_RATIO = 1.2
const WARMUP_SECONDS = 3

const GRAPHQL_QUERY =
  '{ searchTransactionsForward(query: "receiver:eosio.token", limit: 10, irreversibleOnly: true) ' +
  '{ cursor results { cursor trace { id matchingActions { seq json } } } } }'
const REST_PATH = '/v0/search/transactions?q=receiver:eosio.token&limit=10'

interface Query {
  readonly key: 'graphql' | 'rest'
  readonly name: string
  readonly request: LoadRequest
  /** The transaction ids of its answer (both must answer the same ones). */
  readonly ids: readonly string[]
}

interface Run extends LoadResult {
  /** antler's CPU per good answer, ms (all its threads, the demo workload's and the indexer's included). */
  readonly serverCpuMs: number | undefined
}

async function load(children: Children, config: LoadConfig, pid: number | undefined): Promise<Run> {
  const cpuBefore = cpuSeconds(pid)
  const child = children.track(
    fork(LOAD, [JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] }),
    (config.seconds + 60) * 1000,
  )
  let out = ''
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()))
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null]
  const cpuAfter = cpuSeconds(pid)
  if (code !== 0) throw new Error(`the load process exited (${code ?? signal})`)
  const result = JSON.parse(out.trim().split('\n').at(-1)!) as LoadResult
  const serverCpuMs =
    cpuBefore !== undefined && cpuAfter !== undefined && result.answered > 0
      ? ((cpuAfter - cpuBefore) * 1000) / result.answered
      : undefined
  return { ...result, serverCpuMs }
}

const median = (xs: readonly number[]) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}
const f1 = (n: number) => n.toFixed(1)

/** Answers the query once, checked; its length and transaction ids. */
async function probe(api: string, token: string, key: Query['key']): Promise<Query> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` }
  const graphql = key === 'graphql'
  if (graphql) headers['content-type'] = 'application/json'
  const body = graphql ? JSON.stringify({ query: GRAPHQL_QUERY }) : undefined
  const path = graphql ? '/graphql' : REST_PATH
  const method = graphql ? 'POST' : 'GET'
  const response = await fetch(`${api}${path}`, { method, headers, body, signal: AbortSignal.timeout(30_000) })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`${path}: HTTP ${response.status} ${text.slice(0, 300)}`)
  type GraphqlAnswer = { data: { searchTransactionsForward: { results: { trace: { id: string } }[] } }; errors?: [] }
  if (graphql && (JSON.parse(text) as GraphqlAnswer).errors) throw new Error(`/graphql: ${text.slice(0, 300)}`)
  const ids = graphql
    ? (JSON.parse(text) as GraphqlAnswer).data.searchTransactionsForward.results.map((r) => r.trace.id)
    : ((JSON.parse(text) as { transactions: { lifecycle: { id: string } }[] | null }).transactions ?? []).map(
        (t) => t.lifecycle.id,
      )
  return {
    key,
    name: graphql
      ? `POST /graphql searchTransactionsForward, limit 10, irreversibleOnly (${text.length} B answers)`
      : `GET /v0/search/transactions, limit 10 (${text.length} B answers)`,
    request: { method, path, headers, body, expectLength: text.length },
    ids,
  }
}

/**
 * Query latency: the same search (`receiver:eosio.token`, the first 10 irreversible transactions) through
 * `POST /graphql` and `GET /v0/search/transactions` on the same server, autocannon in a process of its own with the
 * same connections. After a warm-up, `queryRounds` rounds of `querySeconds` runs: each query alone (their order swapped
 * each round), then both interleaved on the same connections (each connection alternating them, so both see the same
 * moments of this shared machine). The answers differ in size: REST answers whole lifecycles, the GraphQL query asks
 * for ids and matching actions only.
 */
export async function benchGraphqlQueries(
  children: Children,
  server: Antler,
  options: GraphqlBenchOptions,
  failures: string[],
): Promise<Record<string, string | number>> {
  const figures: Record<string, string | number> = {}
  const { api } = server.ready
  // A fresh chain has fewer than 10 irreversible matches for a few seconds (LIB trails the head by 12 blocks).
  let queries = [await probe(api, server.token, 'graphql'), await probe(api, server.token, 'rest')]
  for (const deadline = Date.now() + 60_000; queries.some((q) => q.ids.length < 10);) {
    if (Date.now() > deadline) throw new Error(`fewer than 10 irreversible matches after 60 s`)
    await new Promise((resolve) => setTimeout(resolve, 1000))
    queries = [await probe(api, server.token, 'graphql'), await probe(api, server.token, 'rest')]
  }
  if (queries[0].ids.join() !== queries[1].ids.join())
    failures.push(`GraphQL and REST answered different transactions: ${queries[0].ids} / ${queries[1].ids}`)
  const pid = server.child.pid
  const check = (label: string, r: Run) => {
    if (r.failed > 0 || r.answered === 0)
      failures.push(`${label}: ${r.failed} failed, ${r.answered} answered (${r.failures.join(' | ') || 'no answers'})`)
  }
  const { connections, querySeconds: seconds } = options
  const both = { url: api, requests: queries.map((q) => q.request), connections }
  console.error(`  graphql bench: queries, ${connections} connections`)
  check('both queries interleaved (warm-up)', await load(children, { ...both, seconds: WARMUP_SECONDS }, pid))
  const alone = new Map<Query['key'], Run[]>(queries.map((q) => [q.key, []]))
  const interleaved: Run[] = []
  for (let round = 0; round < options.queryRounds; round++) {
    for (let i = 0; i < queries.length; i++) {
      const q = queries[(round + i) % queries.length]
      const r = await load(children, { url: api, requests: [q.request], connections, seconds }, pid)
      check(`${q.name}, round ${round + 1}`, r)
      alone.get(q.key)!.push(r)
    }
    const r = await load(children, { ...both, seconds }, pid)
    check(`both queries interleaved, round ${round + 1}`, r)
    interleaved.push(r)
  }
  const p99 = (runs: readonly Run[], i = 0) => median(runs.map((r) => r.latencies[i].p99))
  const p50 = (runs: readonly Run[], i = 0) => median(runs.map((r) => r.latencies[i].p50))
  for (const q of queries) {
    const rs = alone.get(q.key)!
    const cpu = rs.every((r) => r.serverCpuMs !== undefined)
      ? `, server CPU ${median(rs.map((r) => r.serverCpuMs!)).toFixed(2)} ms/answer`
      : ''
    figures[`${q.name}, alone, ${connections} connections`] =
      `${Math.round(rs.reduce((sum, r) => sum + r.latencies[0].perSecond, 0) / rs.length)} req/s, ` +
      `p50 ${f1(p50(rs))} ms, p99 ${f1(p99(rs))} ms${cpu}; each run: ` +
      rs
        .map(
          (r) =>
            `${Math.round(r.latencies[0].perSecond)} req/s p50 ${f1(r.latencies[0].p50)} p99 ${f1(r.latencies[0].p99)}`,
        )
        .join(', ')
  }
  queries.forEach((q, i) => {
    figures[`${q.name}, interleaved with the other on the same ${connections} connections`] =
      `${Math.round(interleaved.reduce((sum, r) => sum + r.latencies[i].perSecond, 0) / interleaved.length)} req/s, ` +
      `p50 ${f1(p50(interleaved, i))} ms, p99 ${f1(p99(interleaved, i))} ms; each run: ` +
      interleaved.map((r) => `p50 ${f1(r.latencies[i].p50)} p99 ${f1(r.latencies[i].p99)}`).join(', ')
  })
  const verdict = (ratio: number) => `${ratio.toFixed(2)}: ${ratio <= BAR_RATIO ? 'holds' : 'NOT HELD'}`
  const [graphqlRuns, restRuns] = [alone.get('graphql')!, alone.get('rest')!]
  figures[`GraphQL p99 / REST p99, each alone, runs taking turns (bar ≤ ${BAR_RATIO})`] =
    `${verdict(p99(graphqlRuns) / p99(restRuns))} (round by round: ` +
    `${graphqlRuns.map((r, i) => (r.latencies[0].p99 / restRuns[i].latencies[0].p99).toFixed(2)).join(', ')})`
  figures[`GraphQL p99 / REST p99, interleaved (bar ≤ ${BAR_RATIO})`] =
    `${verdict(p99(interleaved, 0) / p99(interleaved, 1))} (round by round: ` +
    `${interleaved.map((r) => (r.latencies[0].p99 / r.latencies[1].p99).toFixed(2)).join(', ')})`
  return figures
}
