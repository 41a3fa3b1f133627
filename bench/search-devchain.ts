import { cannon, describeRuns, inProcesses, startDev, type Cannon } from './children.ts'
import { median, takeTurns, type Figures } from './timing.ts'

export interface SearchDevchainBenchOptions {
  /** Length of each measured run, seconds. */
  readonly seconds: number
  /** Runs of each route (taking turns). */
  readonly rounds: number
  readonly connections: number
  readonly warmupSeconds: number
  /** A page of 1 (two irreversible matches come sooner than eleven). */
  readonly smoke?: boolean
}

/** Issue 26's bar: search at least this fraction of `/healthz`'s requests/s, and its p99 at most BAR_P99_MS. */
const BAR_RATIO = 0.25
const BAR_P99_MS = 50
const searchPath = (limit: number) => `/v0/search/transactions?q=receiver:eosio.token&limit=${limit}`

/** The page's length, once `limit` + 1 irreversible transactions match (LIB trails a fresh chain's head). */
async function probe(api: string, limit: number): Promise<{ length: number; transactions: number }> {
  const path = searchPath(limit)
  for (const deadline = Date.now() + 90_000; ;) {
    const response = await fetch(api + path, { signal: AbortSignal.timeout(30_000) })
    const text = await response.text()
    if (response.status !== 200) throw new Error(`${path}: HTTP ${response.status} ${text.slice(0, 300)}`)
    const answer = JSON.parse(text) as { cursor: string; transactions: unknown[] | null }
    const transactions = answer.transactions?.length ?? 0
    // A cursor once a match follows the tenth: from then on the page never changes.
    if (transactions === limit && answer.cursor !== '') return { length: text.length, transactions }
    if (Date.now() > deadline)
      throw new Error(`fewer than ${limit + 1} irreversible matches after 90 s (${transactions})`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

/**
 * Issue 26's search figure on the devchain store: `antler dev --workload demo --block-time 500 --no-auth` (one token
 * transfer every 500 ms, SQLite), `GET /v0/search/transactions?q=receiver:eosio.token&limit=10` (the first 10
 * irreversible transactions, 1 under `--smoke`: after the first answer, cached pages) and `GET /healthz` (its limit)
 * loaded in turn by autocannon in a process of its own, `connections` connections, `rounds` runs of `seconds` each
 * after a warm-up of each. Every search answer must be 200 with the length of the first (the page of irreversible
 * blocks never changes).
 */
export async function benchSearchDevchain(options: SearchDevchainBenchOptions): Promise<Figures> {
  const failuresName = 'failed requests (non-200, wrong length, errors, time-outs), all runs'
  return inProcesses('search-devchain', failuresName, async ({ dir, children, figures, check }) => {
    const { child, ready } = await startDev(children, dir, 'dev', { flags: ['--no-auth'] })
    const limit = options.smoke ? 1 : 10
    const page = await probe(ready.api, limit)
    const routes = [
      { key: 'search', requests: [{ path: searchPath(limit), expectLength: page.length }] },
      { key: 'healthz', requests: [{ path: '/healthz' }] },
    ] as const
    const runs = new Map<string, Cannon[]>(routes.map((r) => [r.key, []]))
    const load = async (route: (typeof routes)[number], seconds: number, label: string) => {
      const run = { seconds, connections: options.connections, pid: child.pid }
      const result = await cannon(children, ready.api, route.requests, run)
      check(`${route.key} ${label}`, result)
      return result
    }
    for (const route of options.warmupSeconds > 0 ? routes : []) await load(route, options.warmupSeconds, 'warm-up')
    await takeTurns(routes, options.rounds, async (route, round) => {
      runs.get(route.key)!.push(await load(route, options.seconds, `round ${round + 1}`))
    })
    const search = runs.get('search')!
    const health = runs.get('healthz')!
    figures[
      `GET ${searchPath(limit)} (${page.transactions} transactions, ${page.length} B), ${options.connections} connections`
    ] = describeRuns(search)
    figures[`GET /healthz, ${options.connections} connections`] = describeRuns(health)
    const ratio = median(search.map((r) => r.perSecond)) / median(health.map((r) => r.perSecond))
    const p99 = median(search.map((r) => r.p99))
    figures['search / healthz, req/s'] = ratio.toFixed(3)
    figures[`issue 26 bar, search ≥ ${BAR_RATIO} × /healthz req/s and p99 ≤ ${BAR_P99_MS} ms`] =
      `${ratio >= BAR_RATIO && p99 <= BAR_P99_MS ? 'HOLDS' : 'DOES NOT HOLD'} (${ratio.toFixed(3)} ×, p99 ${p99} ms)`
  })
}
