import type { Antler, BenchRun, Cannon, Children } from './children.ts'
import { cannon } from './children.ts'
import type { GraphqlBenchOptions } from './graphql.ts'
import type { LoadRequest } from './load-process.ts'
import { f1, mean, median, type Figures } from './timing.ts'

/** The bar of the issue: GraphQL's p99 within 1.2 × REST's, same search, same connections. */
const BAR_RATIO = 1.2

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
  /** A cursor once a match follows the tenth: from then on the answer never changes (nor its length). */
  readonly final: boolean
}

/** Answers the query once, checked; its length and transaction ids. */
async function probe(api: string, token: string, key: Query['key']): Promise<Query> {
  // The same headers as the load's: what a client accepts can change the answer (its length is checked).
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' }
  const graphql = key === 'graphql'
  if (graphql) headers['content-type'] = 'application/json'
  const body = graphql ? JSON.stringify({ query: GRAPHQL_QUERY }) : undefined
  const path = graphql ? '/graphql' : REST_PATH
  const method = graphql ? 'POST' : 'GET'
  const response = await fetch(`${api}${path}`, { method, headers, body, signal: AbortSignal.timeout(30_000) })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`${path}: HTTP ${response.status} ${text.slice(0, 300)}`)
  type GraphqlPage = { cursor: string | null; results: { trace: { id: string } }[] }
  type GraphqlAnswer = { data: { searchTransactionsForward: GraphqlPage }; errors?: [] }
  if (graphql && (JSON.parse(text) as GraphqlAnswer).errors) throw new Error(`/graphql: ${text.slice(0, 300)}`)
  type RestAnswer = { cursor: string; transactions: { lifecycle: { id: string } }[] | null }
  const page = graphql ? (JSON.parse(text) as GraphqlAnswer).data.searchTransactionsForward : undefined
  const rest = graphql ? undefined : (JSON.parse(text) as RestAnswer)
  const ids = page ? page.results.map((r) => r.trace.id) : (rest!.transactions ?? []).map((t) => t.lifecycle.id)
  return {
    key,
    name: graphql
      ? `POST /graphql searchTransactionsForward, limit 10, irreversibleOnly (${text.length} B answers)`
      : `GET /v0/search/transactions, limit 10 (${text.length} B answers)`,
    request: { method, path, headers, body, expectLength: text.length },
    ids,
    final: Boolean(page ? page.cursor : rest!.cursor),
  }
}

/**
 * Query latency: the same search (`receiver:eosio.token`, the first 10 irreversible transactions) through `POST
 * /graphql` and `GET /v0/search/transactions` on the same server, autocannon in a process of its own with the same
 * connections. After a warm-up, `queryRounds` rounds of `querySeconds` runs: each query alone (their order swapped each
 * round), then both interleaved on the same connections (each connection alternating them, so both see the same moments
 * of this shared machine). The answers differ in size: REST answers whole lifecycles, the GraphQL query asks for ids
 * and matching actions only.
 */
export async function benchGraphqlQueries(
  children: Children,
  server: Antler,
  options: GraphqlBenchOptions,
  { failures, check }: Pick<BenchRun, 'failures' | 'check'>,
): Promise<Figures> {
  const figures: Figures = {}
  const { api } = server.ready
  // A fresh chain has fewer than 10 irreversible matches for a few seconds (LIB trails the head by 12 blocks).
  let queries = [await probe(api, server.token, 'graphql'), await probe(api, server.token, 'rest')]
  for (const deadline = Date.now() + 60_000; queries.some((q) => q.ids.length < 10 || !q.final);) {
    if (Date.now() > deadline) throw new Error(`fewer than 10 irreversible matches after 60 s`)
    await new Promise((resolve) => setTimeout(resolve, 1000))
    queries = [await probe(api, server.token, 'graphql'), await probe(api, server.token, 'rest')]
  }
  if (queries[0].ids.join() !== queries[1].ids.join())
    failures.push(`GraphQL and REST answered different transactions: ${queries[0].ids} / ${queries[1].ids}`)
  const run = async (requests: LoadRequest[], seconds: number, label: string) => {
    const r = await cannon(children, api, requests, { seconds, connections, pid: server.child.pid })
    check(label, r)
    return r
  }
  const { connections, querySeconds: seconds } = options
  const both = queries.map((q) => q.request)
  console.error(`  graphql bench: queries, ${connections} connections`)
  if (options.warmupSeconds > 0) await run(both, options.warmupSeconds, 'both queries interleaved (warm-up)')
  const alone = new Map<Query['key'], Cannon[]>(queries.map((q) => [q.key, []]))
  const interleaved: Cannon[] = []
  for (let round = 0; round < options.queryRounds; round++) {
    for (let i = 0; i < queries.length; i++) {
      const q = queries[(round + i) % queries.length]
      alone.get(q.key)!.push(await run([q.request], seconds, `${q.name}, round ${round + 1}`))
    }
    interleaved.push(await run(both, seconds, `both queries interleaved, round ${round + 1}`))
  }
  const p99 = (runs: readonly Cannon[], i = 0) => median(runs.map((r) => r.latencies[i].p99))
  const p50 = (runs: readonly Cannon[], i = 0) => median(runs.map((r) => r.latencies[i].p50))
  for (const q of queries) {
    const rs = alone.get(q.key)!
    const cpu = rs.every((r) => r.serverCpuMs !== undefined)
      ? `, server CPU ${median(rs.map((r) => r.serverCpuMs!)).toFixed(2)} ms/answer`
      : ''
    figures[`${q.name}, alone, ${connections} connections`] =
      `${Math.round(mean(rs.map((r) => r.latencies[0].perSecond)))} req/s, ` +
      `p50 ${f1(p50(rs))} ms, p99 ${f1(p99(rs))} ms${cpu}; each run: ` +
      rs
        .map((r) => r.latencies[0])
        .map((l) => `${Math.round(l.perSecond)} req/s p50 ${f1(l.p50)} p99 ${f1(l.p99)}`)
        .join(', ')
  }
  queries.forEach((q, i) => {
    figures[`${q.name}, interleaved with the other on the same ${connections} connections`] =
      `${Math.round(mean(interleaved.map((r) => r.latencies[i].perSecond)))} req/s, ` +
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
