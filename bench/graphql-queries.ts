import { fork } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { cpuSeconds, type Children } from './children.ts'
import type { Antler, GraphqlBenchOptions } from './graphql.ts'
import type { LoadConfig, LoadResult } from './graphql-load.ts'

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
  readonly load: Omit<LoadConfig, 'connections' | 'seconds'>
  /** The transaction ids of its answer (both must answer the same ones). */
  readonly ids: readonly string[]
}

interface Run extends LoadResult {
  /** antler's CPU per answer, ms (all its threads, the demo workload's and indexer's included). */
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

/** Answers the query once, checked; its length and transaction ids. */
async function probe(api: string, token: string, key: Query['key']): Promise<Query> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` }
  const graphql = key === 'graphql'
  if (graphql) headers['content-type'] = 'application/json'
  const body = graphql ? JSON.stringify({ query: GRAPHQL_QUERY }) : undefined
  const path = graphql ? '/graphql' : REST_PATH
  const response = await fetch(`${api}${path}`, {
    method: graphql ? 'POST' : 'GET',
    headers,
    body,
    signal: AbortSignal.timeout(30_000),
  })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`${path}: HTTP ${response.status} ${text.slice(0, 300)}`)
  type GraphqlAnswer = { data: { searchTransactionsForward: { results: { trace: { id: string } }[] } }; errors?: [] }
  const ids = graphql
    ? (JSON.parse(text) as GraphqlAnswer).data.searchTransactionsForward.results.map((r) => r.trace.id)
    : (JSON.parse(text) as { transactions: { lifecycle: { id: string } }[] }).transactions.map((t) => t.lifecycle.id)
  if (graphql && (JSON.parse(text) as GraphqlAnswer).errors) throw new Error(`/graphql: ${text.slice(0, 300)}`)
  return {
    key,
    name: graphql
      ? `POST /graphql searchTransactionsForward, limit 10, irreversibleOnly (${text.length} B answers)`
      : `GET /v0/search/transactions, limit 10 (${text.length} B answers)`,
    load: { url: api, method: graphql ? 'POST' : 'GET', path, headers, body, expectLength: text.length },
    ids,
  }
}

/**
 * Query latency: the same search (`receiver:eosio.token`, the first 10 irreversible transactions) through
 * `POST /graphql` and `GET /v0/search/transactions` on the same server, autocannon in a process of its own with the
 * same connections, each warmed up, then `queryRounds` runs of `querySeconds` each, the two taking turns (the order
 * swapped each round). The answers differ in size: REST answers whole lifecycles, the GraphQL query asks for ids and
 * matching actions only.
 */
export async function benchGraphqlQueries(
  children: Children,
  server: Antler,
  options: GraphqlBenchOptions,
  failures: string[],
): Promise<Record<string, string | number>> {
  const figures: Record<string, string | number> = {}
  const { api } = server.ready
  const queries = [await probe(api, server.token, 'graphql'), await probe(api, server.token, 'rest')]
  if (queries[0].ids.join() !== queries[1].ids.join())
    failures.push(`GraphQL and REST answered different transactions: ${queries[0].ids} / ${queries[1].ids}`)
  const pid = server.child.pid
  const check = (label: string, r: Run) => {
    if (r.failed > 0 || r.answered === 0)
      failures.push(`${label}: ${r.failed} failed, ${r.answered} answered (${r.failures.join(' | ') || 'no answers'})`)
  }
  const { connections } = options
  console.error(`  graphql bench: queries, ${connections} connections`)
  for (const q of queries)
    check(`${q.name} (warm-up)`, await load(children, { ...q.load, connections, seconds: WARMUP_SECONDS }, pid))
  const runs = new Map<Query['key'], Run[]>(queries.map((q) => [q.key, []]))
  for (let round = 0; round < options.queryRounds; round++)
    for (let i = 0; i < queries.length; i++) {
      const q = queries[(round + i) % queries.length]
      const r = await load(children, { ...q.load, connections, seconds: options.querySeconds }, pid)
      check(`${q.name}, round ${round + 1}`, r)
      runs.get(q.key)!.push(r)
    }
  const p99 = new Map<Query['key'], number>()
  for (const q of queries) {
    const rs = runs.get(q.key)!
    p99.set(q.key, median(rs.map((r) => r.p99)))
    const cpu = rs.every((r) => r.serverCpuMs !== undefined)
      ? `, server CPU ${median(rs.map((r) => r.serverCpuMs!)).toFixed(2)} ms/answer`
      : ''
    figures[`${q.name}, ${connections} connections`] =
      `${Math.round(rs.reduce((sum, r) => sum + r.perSecond, 0) / rs.length)} req/s, ` +
      `p50 ${median(rs.map((r) => r.p50))} ms, p99 ${p99.get(q.key)} ms${cpu}; each run: ` +
      rs.map((r) => `${Math.round(r.perSecond)} req/s p50 ${r.p50} p99 ${r.p99}`).join(', ')
  }
  const ratio = p99.get('graphql')! / p99.get('rest')!
  const rounds = runs.get('graphql')!.map((r, i) => (r.p99 / runs.get('rest')![i].p99).toFixed(2))
  figures[`GraphQL p99 / REST p99 (bar ≤ ${BAR_RATIO})`] =
    `${ratio.toFixed(2)}: ${ratio <= BAR_RATIO ? 'holds' : 'NOT HELD'} (round by round: ${rounds.join(', ')})`
  return figures
}
