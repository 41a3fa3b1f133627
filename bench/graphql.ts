import { fork, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os, { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Children, cpuSeconds, logTail, startAntler } from './children.ts'
import type { SubscribersConfig, SubscribersMessage, SubscribersResult } from './graphql-subscribers.ts'
import { benchGraphqlQueries } from './graphql-queries.ts'

export interface GraphqlBenchOptions {
  /** Measured window of each subscription configuration, seconds. */
  readonly subscriberSeconds: number
  /** Subscriber counts, run over the WebSocket then over gRPC; the first is the limit (1). */
  readonly subscriberCounts: readonly number[]
  /** Length of each query run, seconds; runs of each query; autocannon connections. */
  readonly querySeconds: number
  readonly queryRounds: number
  readonly connections: number
}

const SUBSCRIBERS = fileURLToPath(new URL('./graphql-subscribers.ts', import.meta.url))
/** The bars of the issue: live p99 within 100 ms of a lone subscriber's; antler's RSS at most 512 MiB. */
const BAR_P99_MS = 100
const BAR_RSS_MIB = 512
/** Limits high enough that nothing in a run is refused (as bench/api.ts). */
const LIFTED_LIMITS = JSON.stringify({
  callsPerIp: { server: { limit: 100_000_000, windowMs: 60_000 } },
  issuancePerKey: { server: { limit: 100_000_000, windowMs: 60_000 } },
  issuancePerIp: { limit: 100_000_000, windowMs: 60_000 },
})

export interface Antler {
  readonly child: ChildProcess
  readonly ready: Record<string, string>
  readonly token: string
}

/** `antler dev --workload demo --block-time 500` (one transfer every 500 ms), limits lifted; a token of its key. */
export async function startDev(children: Children, dir: string, name: string): Promise<Antler> {
  const logPath = join(dir, `${name}.log`)
  const args = ['dev', '--data-dir', join(dir, name), '--port', '0', '--grpc-port', '0', '--chain-port', '0']
  args.push('--ship-port', '0', '--block-time', '500', '--workload', 'demo', '--rate-limits', LIFTED_LIMITS)
  const { child, ready } = await startAntler(children, args, logPath, 180_000)
  try {
    const response = await fetch(`${ready.api}/v1/auth/issue`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: ready.apiKey }),
      signal: AbortSignal.timeout(30_000),
    })
    if (!response.ok) throw new Error(`token issuance: HTTP ${response.status} ${await response.text()}`)
    return { child, ready, token: ((await response.json()) as { token: string }).token }
  } catch (error) {
    await children.stop(child)
    throw new Error(`${(error as Error).message}; its log ends:\n${logTail(logPath)}`, { cause: error })
  }
}

/** Resident memory of a process, MiB (Linux /proc); undefined elsewhere or once it has gone. */
export function rssMiB(pid: number | undefined): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? Number(match[1]) / 1024 : undefined
  } catch {
    return undefined
  }
}

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
  let peak = rssMiB(pid)
  const sampler = setInterval(() => {
    const rss = rssMiB(pid)
    if (rss !== undefined) peak = Math.max(peak ?? 0, rss)
  }, 100)
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
    const cpuTo = cpuSeconds(pid)
    const serverCpuPercent =
      cpuFrom?.cpu !== undefined && cpuTo !== undefined
        ? ((cpuTo - cpuFrom.cpu) / ((performance.now() - cpuFrom.at) / 1000)) * 100
        : undefined
    return { result, connectSeconds, peakRssMiB: peak, serverCpuPercent }
  } finally {
    clearInterval(sampler)
    await children.stop(child)
  }
}

const f1 = (n: number) => n.toFixed(1)
const fmt = (n: number) => Math.round(n).toLocaleString('en-US')
export const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')

const gap = (mine: number, limit: number) => `${mine - limit >= 0 ? '+' : ''}${f1(mine - limit)}`

/** The figures of one configuration against the lone subscriber's run (`lone`) of its transport. */
export function describe(
  label: string,
  run: SubscribersRun,
  lone: SubscribersRun,
  seconds: number,
  failures: string[],
  barRssMiB = BAR_RSS_MIB,
): Record<string, string> {
  const figures: Record<string, string> = {}
  const { result: r } = run
  const limit = lone.result
  const ms = (p: { p50: number; p99: number; max: number }) =>
    `p50 ${f1(p.p50)} ms, p99 ${f1(p.p99)} ms, max ${f1(p.max)} ms`
  const offset = r.timestampOffset
  figures[`${label}: latency since the block reached a SHiP reader`] =
    `${ms(r.sinceShip)} (${fmt(r.sinceShip.samples)} messages); p99 ${gap(r.sinceShip.p99, limit.sinceShip.p99)} ` +
    `ms against the lone subscriber; a block's first to last receipt p50 ${f1(r.spread.p50)} ms, max ` +
    `${f1(r.spread.max)} ms`
  figures[`${label}: latency since the block timestamp`] =
    `${ms(r.sinceTimestamp)}; p99 ${gap(r.sinceTimestamp.p99, limit.sinceTimestamp.p99)} ms against the lone ` +
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
      `${over <= BAR_P99_MS ? 'holds' : 'NOT HELD'} (${gap(r.sinceShip.p99, limit.sinceShip.p99)} ms; by ` +
      `timestamp ${gap(r.sinceTimestamp.p99, limit.sinceTimestamp.p99)} ms, of which the timestamp offset's p50 ` +
      `moved ` +
      `${gap(offset.p50, limit.timestampOffset.p50)} ms)`
  }
  if (run.peakRssMiB !== undefined)
    figures[`${label}: bar antler RSS ≤ ${barRssMiB} MiB`] =
      `${run.peakRssMiB <= barRssMiB ? 'holds' : 'NOT HELD'} (${f1(run.peakRssMiB)} MiB)`
  return figures
}

/**
 * GraphQL figures. (a) Subscription fan-out: an `antler dev` (demo workload: one eosio.token transfer every 500 ms,
 * 500 ms blocks) serves live `searchTransactionsForward` subscriptions to a subscriber process of its own, 1, 100 and
 * 1,000 subscribers, one configuration after another on the same server, over the WebSocket, then the same over gRPC
 * on a fresh server (V8 keeps the pages a 1,000-subscriber run grew: the second transport's RSS would carry the first's
 * peak). Each transport's lone subscriber is the limit of its larger counts. Latency is measured two ways per message:
 * receipt minus the block's timestamp (the devchain stamps a block with a slot taken when it opened: from 200 ms
 * after to over a second before it is produced, drifting with its timer), and receipt minus the arrival of the same
 * block at a SHiP reader in the subscriber process (production, give or take a loopback hop); the bar is judged on the
 * second. (b) Query latency, on a third fresh server: bench/graphql-queries.ts.
 */
export async function benchGraphql(options: GraphqlBenchOptions): Promise<Record<string, string | number>> {
  const dir = mkdtempSync(join(tmpdir(), 'antler-graphql-'))
  const children = new Children(dir)
  const figures: Record<string, string | number> = {}
  const failures: string[] = []
  figures['load average (1, 5, 15 min) at the start'] = loadAverage()
  try {
    const limits = new Map<string, SubscribersRun>()
    for (const transport of ['ws', 'grpc'] as const) {
      const name = transport === 'ws' ? 'WebSocket' : 'gRPC'
      let server: Antler
      try {
        server = await startDev(children, dir, `dev-${transport}`)
      } catch (error) {
        failures.push(`${name}: ${(error as Error).message.slice(0, 500)}`)
        continue
      }
      const { api, grpc, ship } = server.ready
      figures[`${name}: antler dev RSS before any subscriber (devchain + indexer + API in one process)`] =
        `${f1(rssMiB(server.child.pid) ?? NaN)} MiB`
      const protoPath = join(dir, 'graphql.proto')
      if (transport === 'grpc') {
        const proto = await fetch(`${api}/graphql/graphql.proto`, { signal: AbortSignal.timeout(10_000) })
        if (!proto.ok) {
          failures.push(`GET /graphql/graphql.proto: HTTP ${proto.status}; gRPC skipped`)
          await children.stop(server.child)
          continue
        }
        writeFileSync(protoPath, await proto.text())
      }
      for (const count of options.subscriberCounts) {
        const label = `${name}, ${fmt(count)} subscriber${count === 1 ? '' : 's'}`
        console.error(`  graphql bench: ${label}`)
        const config = { transport, count, api, grpc, ship, token: server.token, seconds: options.subscriberSeconds }
        let run: SubscribersRun
        try {
          run = await runSubscribers(children, { ...config, protoPath }, server)
        } catch (error) {
          const message = (error as Error).message.slice(0, 300)
          failures.push(`${label}: ${message}`)
          figures[label] = `FAILED: ${message}`
          // Without its lone subscriber a transport has no limit: the larger counts are not run.
          if (!limits.has(transport)) break
          continue
        }
        if (!limits.has(transport)) limits.set(transport, run)
        Object.assign(figures, describe(label, run, limits.get(transport)!, options.subscriberSeconds, failures))
      }
      await children.stop(server.child)
    }
    figures['load average (1, 5, 15 min) after the subscriptions'] = loadAverage()
    const server = await startDev(children, dir, 'dev-queries')
    try {
      Object.assign(figures, await benchGraphqlQueries(children, server, options, failures))
    } catch (error) {
      failures.push(`queries: ${(error as Error).message.slice(0, 300)}`)
    }
    await children.stop(server.child)
  } finally {
    await children.close()
    rmSync(dir, { recursive: true, force: true })
  }
  figures['load average (1, 5, 15 min) at the end'] = loadAverage()
  figures['failures (missed messages, ended subscriptions, failed requests)'] =
    failures.length === 0 ? 0 : failures.join('; ')
  if (failures.length > 0) {
    console.error(`\n!!! graphql bench: ${failures.join('\n!!! ')}\n`)
    process.exitCode = 1
  }
  return figures
}
