import { fork } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  cpuSeconds,
  inProcesses,
  peakRss,
  rssMiB,
  startDev,
  type Antler,
  type BenchRun,
  type Children,
} from './children.ts'
import type { SubscribersConfig, SubscribersMessage, SubscribersResult } from './graphql-subscribers.ts'
import { benchGraphqlQueries } from './graphql-queries.ts'
import { cpuPercent, f1, fmt, gap, held, loadAverage, msMax, type Figures } from './timing.ts'

export interface GraphqlBenchOptions {
  /** Measured window of each subscription configuration, seconds. */
  readonly subscriberSeconds: number
  /** Subscriber counts, run over the WebSocket then over gRPC; the first is the limit (1). */
  readonly subscriberCounts: readonly number[]
  /** Length of each query run and of the warm-up, seconds; runs of each query; autocannon connections. */
  readonly querySeconds: number
  readonly warmupSeconds: number
  readonly queryRounds: number
  readonly connections: number
  /** One `antler dev` for both transports and the queries. */
  readonly smoke?: boolean
}

const SUBSCRIBERS = fileURLToPath(new URL('./graphql-subscribers.ts', import.meta.url))
/** The bars of the issue: live p99 within 100 ms of a lone subscriber's; antler's RSS at most 512 MiB. */
const BAR_P99_MS = 100
const BAR_RSS_MIB = 512

export interface SubscribersRun {
  readonly result: SubscribersResult
  readonly connectSeconds: number
  /** antler's peak RSS from the first connection to the end of the window, MiB. */
  readonly peakRssMiB: number | undefined
  /** antler's CPU in the window, percent of one core. */
  readonly serverCpuPercent: number | undefined
}

/** One configuration: the subscriber process forked, antler's RSS sampled every 100 ms until it reports. */
export async function runSubscribers(
  children: Children,
  config: SubscribersConfig,
  server: Antler,
): Promise<SubscribersRun> {
  const timeoutMs = (config.seconds + 240) * 1000
  const child = children.track(fork(SUBSCRIBERS, [JSON.stringify(config)], { stdio: 'inherit' }), timeoutMs)
  const pid = server.child.pid
  const rss = peakRss(pid)
  let connectSeconds = NaN
  let cpuFrom: { cpu: number | undefined; at: number } | undefined
  try {
    const result = await new Promise<SubscribersResult>((resolve, reject) => {
      child.on('message', (message: SubscribersMessage) => {
        if (message.kind === 'subscribed') {
          connectSeconds = message.connectSeconds
          cpuFrom = { cpu: cpuSeconds(pid), at: performance.now() }
        } else if (message.kind === 'result') resolve(message.result)
        else reject(new Error(message.error))
      })
      child.once('exit', (code, signal) => reject(new Error(`the subscriber process exited (${code ?? signal})`)))
    })
    const serverCpuPercent = cpuPercent(cpuFrom?.cpu, cpuSeconds(pid), performance.now() - (cpuFrom?.at ?? NaN))
    return { result, connectSeconds, peakRssMiB: rss.stop(), serverCpuPercent }
  } finally {
    rss.stop()
    await children.stop(child)
  }
}

/** The figures of one configuration against the lone subscriber's run (`lone`) of its transport. */
export function describe(
  label: string,
  run: SubscribersRun,
  lone: SubscribersRun,
  seconds: number,
  failures: string[],
  barRssMiB = BAR_RSS_MIB,
): Figures {
  const figures: Figures = {}
  const { result: r } = run
  const limit = lone.result
  const offset = r.timestampOffset
  figures[`${label}: latency since the block reached a SHiP reader`] =
    `${msMax(r.sinceShip)} (${fmt(r.sinceShip.samples)} messages); p99 ${gap(r.sinceShip.p99, limit.sinceShip.p99)} ` +
    `ms against the lone subscriber; a block's first to last receipt p50 ${f1(r.spread.p50)} ms, max ` +
    `${f1(r.spread.max)} ms`
  figures[`${label}: latency since the block timestamp`] =
    `${msMax(r.sinceTimestamp)}; p99 ${gap(r.sinceTimestamp.p99, limit.sinceTimestamp.p99)} ms against the lone ` +
    `subscriber (SHiP arrival − timestamp: ${f1(offset.min)}–${f1(offset.max)} ms, p50 ${f1(offset.p50)} ms)`
  figures[`${label}: throughput and cost`] =
    `${f1(r.perSecond)} messages/s (${r.blocks} blocks, ${r.matchedTransactions} matching transactions in ` +
    `${seconds} s); antler peak RSS ${f1(run.peakRssMiB ?? NaN)} MiB, CPU ${f1(run.serverCpuPercent ?? NaN)} %; ` +
    `subscriber process CPU ${f1(r.clientCpuPercent)} %; connected and first message in ${f1(run.connectSeconds)} s`
  const problems = [
    r.missed > 0 ? `${fmt(r.missed)} messages missed` : '',
    r.undos > 0 ? `${r.undos} undos` : '',
    r.ended > 0 ? `${r.ended} subscriptions ended: ${r.endReasons.join(' | ')}` : '',
  ].filter(Boolean)
  if (problems.length > 0) failures.push(`${label}: ${problems.join('; ')}`)
  if (run !== lone) {
    const over = r.sinceShip.p99 - limit.sinceShip.p99
    figures[`${label}: bar p99 within ${BAR_P99_MS} ms of the lone subscriber's (by SHiP arrival)`] =
      `${held(over <= BAR_P99_MS)} (${gap(r.sinceShip.p99, limit.sinceShip.p99)} ms; by ` +
      `timestamp ${gap(r.sinceTimestamp.p99, limit.sinceTimestamp.p99)} ms, of which the timestamp offset's p50 ` +
      `moved ${gap(offset.p50, limit.timestampOffset.p50)} ms)`
  }
  if (run.peakRssMiB !== undefined)
    figures[`${label}: bar antler RSS ≤ ${barRssMiB} MiB`] =
      `${held(run.peakRssMiB <= barRssMiB)} (${f1(run.peakRssMiB)} MiB)`
  return figures
}

/**
 * Subscriber counts on one server, the first (1) the limit of the others: each count's figures (describe()); a count
 * that fails is a failure, and without its lone subscriber the larger counts are not run.
 */
export async function subscriberLevels(
  children: Children,
  server: Antler,
  name: string,
  config: Omit<SubscribersConfig, 'count' | 'api' | 'grpc' | 'ship' | 'token'>,
  counts: readonly number[],
  { figures, failures }: { figures: Figures; failures: string[] },
  barRssMiB?: number,
): Promise<void> {
  const { api, grpc, ship } = server.ready
  let lone: SubscribersRun | undefined
  for (const count of counts) {
    const label = `${name}, ${fmt(count)} subscriber${count === 1 ? '' : 's'}`
    console.error(`  ${label}`)
    try {
      const run = await runSubscribers(children, { ...config, count, api, grpc, ship, token: server.token }, server)
      lone ??= run
      Object.assign(figures, describe(label, run, lone, config.seconds, failures, barRssMiB))
    } catch (error) {
      const message = (error as Error).message.slice(0, 300)
      failures.push(`${label}: ${message}`)
      figures[label] = `FAILED: ${message}`
      if (!lone) break
    }
  }
}

/**
 * Each kind of subscriber on a fresh `antler dev` (V8 keeps the pages a 1,000-subscriber run grew: the next kind's RSS
 * would carry the last one's peak), or all on `shared` (the smoke): antler's RSS before any subscriber, then the
 * subscriber counts (subscriberLevels()). A gRPC kind reads the server's graphql.proto first.
 */
export async function subscriberKinds(
  bench: BenchRun,
  kinds: readonly { transport: SubscribersConfig['transport']; name: string }[],
  o: { seconds: number; counts: readonly number[]; shared?: Antler; barRssMiB?: number },
): Promise<void> {
  const { dir, children, figures, failures } = bench
  for (const { transport, name } of kinds) {
    let server: Antler
    try {
      server = o.shared ?? (await startDev(children, dir, `dev-${transport}`))
    } catch (error) {
      failures.push(`${name}: ${(error as Error).message.slice(0, 500)}`)
      continue
    }
    figures[`${name}: antler dev RSS before any subscriber`] = `${f1(rssMiB(server.child.pid) ?? NaN)} MiB`
    const protoPath = join(dir, 'graphql.proto')
    const proto =
      transport === 'grpc'
        ? await fetch(`${server.ready.api}/graphql/graphql.proto`, { signal: AbortSignal.timeout(10_000) })
        : undefined
    if (proto && !proto.ok) failures.push(`GET /graphql/graphql.proto: HTTP ${proto.status}; gRPC skipped`)
    else {
      if (proto) writeFileSync(protoPath, await proto.text())
      const config = { transport, seconds: o.seconds, protoPath }
      await subscriberLevels(children, server, name, config, o.counts, bench, o.barRssMiB)
    }
    if (server !== o.shared) await children.stop(server.child)
  }
}

/**
 * GraphQL figures. (a) Subscription fan-out: an `antler dev` (demo workload: one eosio.token transfer every 500 ms, 500
 * ms blocks) serves live `searchTransactionsForward` subscriptions to a subscriber process of its own, 1, 100 and 1,000
 * subscribers, one configuration after another on the same server, over the WebSocket, then the same over gRPC on a
 * fresh server (subscriberKinds()). Each transport's lone subscriber is the limit of its larger counts. Latency is
 * measured two ways per message: receipt minus the block's timestamp (the devchain stamps a block with a slot taken
 * when it opened: from 200 ms after to over a second before it is produced, drifting with its timer), and receipt minus
 * the arrival of the same block at a SHiP reader in the subscriber process (production, give or take a loopback hop);
 * the bar is judged on the second. (b) Query latency, on a third fresh server: bench/graphql-queries.ts. Under
 * `--smoke` one server serves all three.
 */
export async function benchGraphql(options: GraphqlBenchOptions): Promise<Figures> {
  const failuresName = 'failures (missed messages, ended subscriptions, failed requests)'
  return inProcesses('graphql', failuresName, async (bench) => {
    const { dir, children, figures, failures } = bench
    const shared = options.smoke ? await startDev(children, dir, 'dev') : undefined
    const kinds = [
      { transport: 'ws', name: 'WebSocket' },
      { transport: 'grpc', name: 'gRPC' },
    ] as const
    await subscriberKinds(bench, kinds, {
      seconds: options.subscriberSeconds,
      counts: options.subscriberCounts,
      shared,
    })
    figures['load average (1, 5, 15 min) after the subscriptions'] = loadAverage()
    const server = shared ?? (await startDev(children, dir, 'dev-queries'))
    try {
      Object.assign(figures, await benchGraphqlQueries(children, server, options, bench))
    } catch (error) {
      failures.push(`queries: ${(error as Error).message.slice(0, 300)}`)
    }
    await children.stop(server.child)
  })
}
