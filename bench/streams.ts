import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Children } from './children.ts'
import type { SubscribersConfig } from './graphql-subscribers.ts'
import { describe, loadAverage, rssMiB, runSubscribers, startDev, type Antler, type SubscribersRun } from './graphql.ts'

export interface StreamsBenchOptions {
  /** Measured window of each configuration, seconds. */
  readonly seconds: number
  /** Subscriber counts per kind; the first is each kind's limit (1). */
  readonly subscriberCounts: readonly number[]
}

/** Issue 26's bar: at 1,000 subscribers RSS ≤ 1 GiB (and p99 within 100 ms of the lone subscriber's, in describe()). */
const BAR_RSS_MIB = 1024

const KINDS: readonly { transport: SubscribersConfig['transport']; name: string }[] = [
  { transport: 'stream-actions', name: '/v1/stream get_action_traces' },
  { transport: 'stream-rows', name: '/v1/stream get_table_rows' },
  { transport: 'ws', name: 'GraphQL searchTransactionsForward over WebSocket' },
]

const f1 = (n: number) => n.toFixed(1)
const fmt = (n: number) => Math.round(n).toLocaleString('en-US')

/**
 * Stream fan-out figures (issue 26): on a fresh `antler dev` per kind (demo workload: one eosio.token transfer every
 * 500 ms, 500 ms blocks), 1, 100 and 1,000 live subscribers in a process of their own (bench/graphql-subscribers.ts,
 * one connection each) for `/v1/stream` action traces (eosio.token transfers), `/v1/stream` table rows (alice's
 * eosio.token balance) and GraphQL `searchTransactionsForward` over the WebSocket. Per configuration: latency since
 * the block's timestamp and since its arrival at a SHiP reader in the subscriber process (p50/p99), messages/s,
 * antler's peak RSS and CPU; each kind's lone subscriber is the limit of its larger counts.
 */
export async function benchStreams(options: StreamsBenchOptions): Promise<Record<string, string | number>> {
  const dir = mkdtempSync(join(tmpdir(), 'antler-streams-'))
  const children = new Children(dir)
  const figures: Record<string, string | number> = {}
  const failures: string[] = []
  figures['load average (1, 5, 15 min) at the start'] = loadAverage()
  try {
    for (const { transport, name } of KINDS) {
      let server: Antler
      try {
        server = await startDev(children, dir, `dev-${transport}`)
      } catch (error) {
        failures.push(`${name}: ${(error as Error).message.slice(0, 500)}`)
        continue
      }
      const { api, grpc, ship } = server.ready
      figures[`${name}: antler dev RSS before any subscriber`] = `${f1(rssMiB(server.child.pid) ?? NaN)} MiB`
      let lone: SubscribersRun | undefined
      for (const count of options.subscriberCounts) {
        const label = `${name}, ${fmt(count)} subscriber${count === 1 ? '' : 's'}`
        console.error(`  streams bench: ${label}`)
        try {
          const run = await runSubscribers(
            children,
            { transport, count, api, grpc, ship, token: server.token, seconds: options.seconds },
            server,
          )
          lone ??= run
          Object.assign(figures, describe(label, run, lone, options.seconds, failures, BAR_RSS_MIB))
        } catch (error) {
          const message = (error as Error).message.slice(0, 300)
          failures.push(`${label}: ${message}`)
          figures[label] = `FAILED: ${message}`
          if (!lone) break
        }
      }
      await children.stop(server.child)
    }
  } finally {
    await children.close()
    rmSync(dir, { recursive: true, force: true })
  }
  figures['load average (1, 5, 15 min) at the end'] = loadAverage()
  figures['failures (missed messages, ended subscriptions)'] = failures.length === 0 ? 0 : failures.join('; ')
  if (failures.length > 0) {
    console.error(`\n!!! streams bench: ${failures.join('\n!!! ')}\n`)
    process.exitCode = 1
  }
  return figures
}
