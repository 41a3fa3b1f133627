import { inProcesses, startDev } from './children.ts'
import type { SubscribersConfig } from './graphql-subscribers.ts'
import { subscriberKinds } from './graphql.ts'
import type { Figures } from './timing.ts'

export interface StreamsBenchOptions {
  /** Measured window of each configuration, seconds. */
  readonly seconds: number
  /** Subscriber counts per kind; the first is each kind's limit (1). */
  readonly subscriberCounts: readonly number[]
  /** One `antler dev` for every kind. */
  readonly smoke?: boolean
}

/** Issue 26's bar: at 1,000 subscribers RSS ≤ 1 GiB (and p99 within 100 ms of the lone subscriber's, in describe()). */
const BAR_RSS_MIB = 1024

const KINDS: readonly { transport: SubscribersConfig['transport']; name: string }[] = [
  { transport: 'stream-actions', name: '/v1/stream get_action_traces' },
  { transport: 'stream-rows', name: '/v1/stream get_table_rows' },
  { transport: 'ws', name: 'GraphQL searchTransactionsForward over WebSocket' },
]

/**
 * Stream fan-out figures (issue 26): on a fresh `antler dev` per kind (demo workload: one eosio.token transfer every
 * 500 ms, 500 ms blocks), 1, 100 and 1,000 live subscribers in a process of their own (bench/graphql-subscribers.ts,
 * one connection each) for `/v1/stream` action traces (eosio.token transfers), `/v1/stream` table rows (alice's
 * eosio.token balance) and GraphQL `searchTransactionsForward` over the WebSocket. Per configuration: latency since the
 * block's timestamp and since its arrival at a SHiP reader in the subscriber process (p50/p99), messages/s, antler's
 * peak RSS and CPU; each kind's lone subscriber is the limit of its larger counts. Under `--smoke` one server serves
 * every kind.
 */
export async function benchStreams(options: StreamsBenchOptions): Promise<Figures> {
  return inProcesses('streams', 'failures (missed messages, ended subscriptions)', async (bench) => {
    const shared = options.smoke ? await startDev(bench.children, bench.dir, 'dev') : undefined
    const counts = options.subscriberCounts
    await subscriberKinds(bench, KINDS, { seconds: options.seconds, counts, shared, barRssMiB: BAR_RSS_MIB })
  })
}
