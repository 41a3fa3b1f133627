import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import WebSocket from 'ws'
import { cannon, inProcesses, startAntler, type ApiServer, type Children } from './children.ts'
import { median, percentile, type Figures } from './timing.ts'
import { withBenchDatabase } from './bench-database.ts'

export interface ReplicasBenchOptions {
  /** A PostgreSQL server URL; the bench creates its own database there and drops it at the end. */
  readonly postgresUrl: string
  /** Length of each load run, seconds; runs of each configuration (taking turns); total autocannon connections. */
  readonly seconds: number
  readonly rounds: number
  readonly connections: number
  /** Length of the stream latency run, seconds (one head a block, 500 ms blocks). */
  readonly streamSeconds: number
  readonly warmupSeconds: number
  /** History of one matching transaction (else a page of 10) before the runs. */
  readonly smoke?: boolean
}

/** The bar of issue 26: a replica sees a block within this long of the all-in-one process, p99. */
const BAR_STREAM_P99_MS = 50

const LOADS = {
  'state read (1 row)': '/v0/state/table?account=eosio.token&scope=alice&table=accounts&json=true',
  'search (10 a page)': '/v0/search/transactions?q=receiver:eosio.token&limit=10',
} as const

/** Heads as they arrive on a `get_head_info` listen stream: block number → arrival time (ms since the epoch). */
async function headArrivals(api: string): Promise<{ arrivals: Map<number, number>; close: () => void }> {
  const arrivals = new Map<number, number>()
  const socket = new WebSocket(`${api.replace(/^http/, 'ws')}/v1/stream`)
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
  socket.on('message', (data) => {
    const at = performance.timeOrigin + performance.now() // sub-millisecond: the lag is often under 1 ms
    const message = JSON.parse(String(data)) as { type: string; data: { head_block_num: number } }
    if (message.type === 'head_info' && !arrivals.has(message.data.head_block_num))
      arrivals.set(message.data.head_block_num, at)
  })
  socket.send(JSON.stringify({ type: 'get_head_info', req_id: 'head', listen: true }))
  return { arrivals, close: () => socket.terminate() }
}

/** Waits (90 s at most) for the search to match `transactions` and the state read to answer a row. */
async function history(api: string, transactions: number): Promise<void> {
  const read = async (path: string) => {
    const response = await fetch(api + path, { signal: AbortSignal.timeout(30_000) })
    return response.ok ? ((await response.json()) as { transactions?: unknown[] | null; rows?: unknown[] }) : {}
  }
  for (const deadline = Date.now() + 90_000; ; await delay(250)) {
    const page = await read(LOADS['search (10 a page)'])
    const state = await read(LOADS['state read (1 row)'])
    if ((page.transactions?.length ?? 0) >= transactions && (state.rows?.length ?? 0) > 0) return
    if (Date.now() > deadline) throw new Error(`no history after 90 s: ${JSON.stringify([page, state]).slice(0, 300)}`)
  }
}

/** Load on several servers at once (one autocannon process each, connections split): the sum of req/s, worst p99. */
async function loadAll(
  children: Children,
  servers: readonly ApiServer[],
  path: string,
  seconds: number,
  connections: number,
) {
  const each = Math.max(1, Math.floor(connections / servers.length))
  const runs = await Promise.all(
    servers.map((server) => cannon(children, server.api, [{ path }], { seconds, connections: each })),
  )
  return {
    perSecond: runs.reduce((sum, r) => sum + r.perSecond, 0),
    p99: Math.max(...runs.map((r) => r.p99)),
    failed: runs.reduce((sum, r) => sum + r.failed, 0),
  }
}

/**
 * `npm run bench -- --only replicas`: one indexing process and two `antler api` replicas on one PostgreSQL store, with
 * the devchain's demo workload (500 ms blocks). The indexing process is `antler serve` (indexer and API in one process:
 * the all-in-one the replicas are compared with). Figures: requests/s and p99 of a 1-row state read and of a search on
 * one replica against both (autocannon in processes of their own, connections split between the replicas), taking
 * turns; and for each block, when a `get_head_info` stream on a replica received it, less when the stream on the
 * all-in-one process did (the replica learns of it by LISTEN/NOTIFY).
 */
export async function benchReplicas(options: ReplicasBenchOptions): Promise<Figures> {
  return withBenchDatabase(options.postgresUrl, (store) =>
    inProcesses('replicas', 'failed requests', async ({ dir, children, figures, failures }) => {
      const log = (name: string) => join(dir, `${name}.log`)
      const common = ['--no-auth', '--port', '0', '--grpc-port', '0', '--log-level', 'warn']
      const chainArgs = ['devchain', '--data-dir', join(dir, 'chain'), '--chain-port', '0', '--ship-port', '0']
      const devchain = await startAntler(children, [...chainArgs, '--workload', 'demo'], log('devchain'))
      const { ship, chainApi } = devchain.ready
      const serveArgs = ['serve', '--ship', ship, '--chain-api', chainApi, '--store', store, ...common]
      const allInOne = await startAntler(children, serveArgs, log('serve'))
      const replicas: ApiServer[] = await Promise.all(
        ['replica-a', 'replica-b'].map(async (name) => {
          const args = ['api', '--store', store, '--data-dir', join(dir, name), ...common]
          const started = await startAntler(children, args, log(name))
          return { label: name, child: started.child, api: started.ready.api }
        }),
      )
      await history(replicas[0].api, options.smoke ? 1 : 10)

      const streams = await Promise.all([headArrivals(allInOne.ready.api), headArrivals(replicas[0].api)])
      await delay(options.streamSeconds * 1000)
      for (const s of streams) s.close()
      const [atAllInOne, atReplica] = streams.map((s) => s.arrivals)
      const lags = [...atReplica].filter(([num]) => atAllInOne.has(num)).map(([num, at]) => at - atAllInOne.get(num)!)
      lags.sort((a, b) => a - b)
      figures['replica stream: blocks compared'] = lags.length
      figures['replica stream: replica − all-in-one p50 (ms)'] = percentile(lags, 0.5).toFixed(2)
      figures['replica stream: replica − all-in-one p99 (ms)'] = percentile(lags, 0.99).toFixed(2)
      figures['replica stream: bar'] = `p99 ≤ ${BAR_STREAM_P99_MS} ms`

      for (const [name, path] of Object.entries(LOADS)) {
        // A warm-up of both.
        if (options.warmupSeconds > 0)
          await loadAll(children, replicas, path, options.warmupSeconds, options.connections)
        const one: number[] = []
        const two: number[] = []
        const p99One: number[] = []
        const p99Two: number[] = []
        for (let round = 0; round < options.rounds; round++) {
          const single = await loadAll(children, replicas.slice(0, 1), path, options.seconds, options.connections)
          const both = await loadAll(children, replicas, path, options.seconds, options.connections)
          if (single.failed + both.failed > 0) failures.push(`${name}: ${single.failed + both.failed} failed requests`)
          one.push(single.perSecond)
          two.push(both.perSecond)
          p99One.push(single.p99)
          p99Two.push(both.p99)
        }
        figures[`${name}: one replica req/s (median)`] = Math.round(median(one))
        figures[`${name}: one replica p99 ms (median)`] = median(p99One)
        figures[`${name}: two replicas req/s (median)`] = Math.round(median(two))
        figures[`${name}: two replicas p99 ms (median)`] = median(p99Two)
        figures[`${name}: two / one`] = (median(two) / median(one)).toFixed(2)
      }
    }),
  )
}
