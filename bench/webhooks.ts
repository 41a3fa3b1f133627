import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import type { ReceiverReply, ReceiverRequest, ReceiverWindow } from '../test/_helpers/webhook-receiver.ts'
import { cpuSeconds, inProcesses, peakRss, rssMiB, startDev, type Antler, type Children } from './children.ts'
import { runSubscribers, type SubscribersRun } from './graphql.ts'
import { cpuPercent, f1, fmt, gap, held, msMax, percentiles, type Figures, type Percentiles } from './timing.ts'

export interface WebhooksBenchOptions {
  /** Measured window of each level, seconds. */
  readonly seconds: number
  /** Subscription counts, one level each on the same server; the first is the limit of the others (1). */
  readonly subscriptionCounts: readonly number[]
}

const RECEIVER = fileURLToPath(new URL('../test/_helpers/webhook-receiver.ts', import.meta.url))
/** The demo workload's transfers (one every 500 ms), the query of the streams bench's subscribers. */
const QUERY = 'receiver:eosio.token action:transfer'
/** Issue 27's aims: block → delivery p99 ≤ 200 ms, antler's RSS ≤ 512 MiB at 1,000 subscriptions. */
const BAR_P99_MS = 200
const BAR_RSS_MIB = 512
/** Subscriptions whose every delivery the receiver verifies with `standardwebhooks`. */
const VERIFIED_SAMPLE = 20
/** Concurrent requests when subscriptions are created and deleted. */
const API_CONCURRENCY = 16
/** How long the subscriptions may take to deliver the head of the moment they were all created. */
const CATCH_UP_TIMEOUT_MS = 180_000
/** After the window, how long before the backlog is counted again (at most the window's length). */
const GRACE_MS = 5_000
/** `antler dev`'s webhook flags (from the environment: startDev's command line is shared with the streams bench). */
const DEV_ENV = { ANTLER_WEBHOOK_MAX_SUBSCRIPTIONS: '2000', ANTLER_WEBHOOK_DELIVERY_RATE: '100000' }

/**
 * Sends `request` to the forked receiver (nothing for `listening`, its first message) and answers its reply, which must
 * be of the same kind: the receiver answers each request once, in order.
 */
async function ask<R extends ReceiverRequest | { kind: 'listening' }>(
  child: ChildProcess,
  request: R,
): Promise<Extract<ReceiverReply, { kind: R['kind'] }>> {
  const exited = child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : once(child, 'exit')
  const replied = once(child, 'message') as Promise<[ReceiverReply]>
  if (request.kind !== 'listening') child.send(request)
  const [reply] = await Promise.race([replied, exited.then(() => [{ kind: 'failed', error: 'it exited' }] as const)])
  if (reply.kind === 'failed') throw new Error(`receiver: ${reply.error}`)
  if (reply.kind !== request.kind) throw new Error(`receiver: expected ${request.kind}, got ${reply.kind}`)
  return reply as Extract<ReceiverReply, { kind: R['kind'] }>
}

/** A JSON call to the API with the bench's token. */
async function call<T>(
  server: Antler,
  method: string,
  path: string,
  body?: object,
): Promise<{ status: number; json: T }> {
  const response = await fetch(`${server.ready.api}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${server.token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  })
  const text = await response.text()
  return { status: response.status, json: (text === '' ? null : JSON.parse(text)) as T }
}

/** `fn` over 0..count−1, API_CONCURRENCY at a time. */
async function eachIndex(count: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  const lane = async () => {
    while (next < count) await fn(next++)
  }
  await Promise.all(Array.from({ length: Math.min(API_CONCURRENCY, count) }, lane))
}

const head = async (server: Antler): Promise<number> =>
  (await call<{ head_block_num: number }>(server, 'GET', '/healthz')).json.head_block_num

/** The ids of the transactions matching QUERY in blocks `from..to`, by the search API (reversible blocks too). */
async function matchesOf(server: Antler, from: number, to: number): Promise<string[]> {
  const ids: string[] = []
  let cursor = ''
  for (let page = 0; page < 1000; page++) {
    const params = new URLSearchParams({ q: QUERY, start_block: String(from), block_count: String(to - from) })
    params.set('limit', '100')
    params.set('with_reversible', 'true')
    params.set('cursor', cursor)
    type Page = { cursor: string; transactions: { lifecycle: { id: string } }[] | null }
    const { status, json } = await call<Page>(server, 'GET', `/v0/search/transactions?${params}`)
    if (status !== 200) throw new Error(`search: HTTP ${status} ${JSON.stringify(json).slice(0, 200)}`)
    for (const row of json.transactions ?? []) ids.push(row.lifecycle.id)
    cursor = json.cursor
    if (!cursor) return ids
  }
  throw new Error('search: more than 1,000 pages')
}

/** The receiver's window with the percentiles of its samples. */
type Window = Omit<ReceiverWindow, 'sinceTimestamp' | 'spread'> & Record<'sinceTimestamp' | 'spread', Percentiles>

/** What one level measured. */
interface LevelRun {
  readonly count: number
  readonly createSeconds: number
  readonly caughtUp: { readonly caughtUp: number; readonly seconds: number }
  readonly window: Window
  readonly expected: number
  readonly backlogAtEnd: { readonly missing: number; readonly behind: number }
  readonly backlogAfterGrace: { readonly missing: number; readonly behind: number }
  readonly graceSeconds: number
  /** A `/v1/stream` action-trace subscriber alongside the window (the streams bench's lone subscriber). */
  readonly stream: SubscribersRun | undefined
  readonly streamError: string | undefined
  readonly peakRssMiB: number | undefined
  readonly cpuPercent: number | undefined
  /** Subscriptions not `active`, and those failing, at the window's end. */
  readonly notActive: number
  readonly failing: number
}

/**
 * One level: a fresh receiver, `count` subscriptions to it from the next block on, the window once every one has
 * delivered the head of the moment they were all created, the backlog, then the subscriptions deleted.
 */
async function runLevel(children: Children, server: Antler, count: number, seconds: number): Promise<LevelRun> {
  const killAfterMs = CATCH_UP_TIMEOUT_MS + (seconds + 600) * 1000
  const receiver = children.track(fork(RECEIVER, [], { stdio: 'inherit' }), killAfterMs)
  const pid = server.child.pid
  const rss = peakRss(pid)
  const ids: string[] = []
  try {
    const { url } = await ask(receiver, { kind: 'listening' })
    const startBlock = (await head(server)) + 1
    const secrets: Record<number, string> = {}
    const creating = performance.now()
    await eachIndex(count, async (i) => {
      const body = { url: `${url}/s/${i}`, query: QUERY, start_block: startBlock }
      const { status, json } = await call<{ id: string; secret: string }>(server, 'POST', '/v1/webhooks', body)
      if (status !== 201) throw new Error(`POST /v1/webhooks: HTTP ${status} ${JSON.stringify(json).slice(0, 300)}`)
      ids.push(json.id)
      if (i < VERIFIED_SAMPLE) secrets[i] = json.secret
    })
    const createSeconds = (performance.now() - creating) / 1000
    await ask(receiver, { kind: 'secrets', secrets })
    const minBlock = await head(server)
    const caughtUp = await ask(receiver, { kind: 'caught-up', count, minBlock, timeoutMs: CATCH_UP_TIMEOUT_MS })
    let streamError: string | undefined
    const { api, grpc, ship } = server.ready
    const streamConfig = { transport: 'stream-actions' as const, count: 1, api, grpc, ship, token: server.token }
    const streaming = runSubscribers(children, { ...streamConfig, seconds }, server).catch((error: unknown) => {
      streamError = (error as Error).message.slice(0, 300)
      return undefined
    })
    const cpuFrom = { cpu: cpuSeconds(pid), at: performance.now() }
    await ask(receiver, { kind: 'window-start' })
    await delay(seconds * 1000)
    // The head is read first: every block up to it was indexed before the window ended.
    const endBlock = await head(server)
    const { window: raw } = await ask(receiver, { kind: 'window-end' })
    const window = { ...raw, sinceTimestamp: percentiles(raw.sinceTimestamp), spread: percentiles(raw.spread) }
    const serverCpu = cpuPercent(cpuFrom.cpu, cpuSeconds(pid), performance.now() - cpuFrom.at)
    type Listed = { webhooks: { state: string; failing_since: string | null }[] }
    const states = (await call<Listed>(server, 'GET', '/v1/webhooks')).json
    const expected = await matchesOf(server, startBlock, endBlock)
    const backlogAtEnd = await ask(receiver, { kind: 'backlog', count, expected, cutoff: 'end' })
    await delay(Math.min(GRACE_MS, seconds * 1000))
    const backlogAfterGrace = await ask(receiver, { kind: 'backlog', count, expected, cutoff: 'now' })
    return {
      count,
      createSeconds,
      caughtUp,
      window,
      expected: expected.length * count,
      backlogAtEnd,
      backlogAfterGrace,
      graceSeconds: Math.min(GRACE_MS, seconds * 1000) / 1000,
      stream: await streaming,
      streamError,
      peakRssMiB: rss.stop(),
      cpuPercent: serverCpu,
      notActive: states.webhooks.filter((w) => w.state !== 'active').length,
      failing: states.webhooks.filter((w) => w.failing_since !== null).length,
    }
  } finally {
    rss.stop()
    await eachIndex(ids.length, async (i) => {
      const { status } = await call(server, 'DELETE', `/v1/webhooks/${ids[i]}`)
      if (status !== 204) console.error(`  webhooks bench: DELETE /v1/webhooks/${ids[i]}: HTTP ${status}`)
    })
    await children.stop(receiver)
  }
}

/** The figures of one level against the lone subscription's level (`lone`). */
function describeLevel(label: string, run: LevelRun, lone: LevelRun, failures: string[]): Record<string, string> {
  const figures: Record<string, string> = {}
  const w = run.window
  const latency = w.sinceTimestamp
  // A devchain block's timestamp is its slot's, some hundreds of ms before or after it is produced, drifting
  // (bench/graphql.ts): a /v1/stream subscriber with a SHiP reader alongside measures the offset over (about) the same
  // window, and the offset's p50 is taken off the receipts' latency, so levels compare although the offset moved.
  const corrected = (r: LevelRun) => r.window.sinceTimestamp.p99 - (r.stream?.result.timestampOffset.p50 ?? NaN)
  const sinceProductionP99 = corrected(run)
  const stream = run.stream?.result
  if (stream) {
    const offset = stream.timestampOffset
    figures[`${label}: block → delivery (block timestamp → receipt, less the window's timestamp offset)`] =
      `p50 ${f1(latency.p50 - offset.p50)} ms, p99 ${f1(sinceProductionP99)} ms (${fmt(latency.samples)} ` +
      `deliveries); p99 ${gap(sinceProductionP99, corrected(lone))} ms against the lone subscription; SHiP ` +
      `arrival − block timestamp p50 ${f1(offset.p50)} ms, ${f1(offset.min)}–${f1(offset.max)} ms over the window`
    figures[`${label}: a /v1/stream action-trace subscriber alongside (the limit)`] =
      `since SHiP arrival ${msMax(stream.sinceShip)}; since the block timestamp ${msMax(stream.sinceTimestamp)}; ` +
      `webhook p99 ${gap(latency.p99, stream.sinceTimestamp.p99)} ms against it by timestamp`
  } else figures[`${label}: a /v1/stream action-trace subscriber alongside (the limit)`] = `FAILED: ${run.streamError}`
  figures[`${label}: block timestamp → receipt, as measured`] =
    `${msMax(latency)}; p99 ${gap(latency.p99, lone.window.sinceTimestamp.p99)} ms against the lone subscription; a ` +
    `transaction's first to last delivery over the subscriptions p50 ${f1(w.spread.p50)} ms, max ` +
    `${f1(w.spread.max)} ms`
  figures[`${label}: throughput and cost`] =
    `${f1(w.deliveries / w.seconds)} deliveries/s (${fmt(w.deliveries)} in ${f1(w.seconds)} s; per subscription ` +
    `${w.fewestPerSubscription}–${w.mostPerSubscription}); antler peak RSS ${f1(run.peakRssMiB ?? NaN)} MiB, CPU ` +
    `${f1(run.cpuPercent ?? NaN)} %; receiver CPU ${f1(w.cpuPercent)} %, ${w.connections.opened} connections from antler ` +
    `(at most ${w.connections.mostOpen} at once); ${fmt(run.count)} created in ` +
    `${f1(run.createSeconds)} s, ${fmt(run.caughtUp.caughtUp)} caught up with the head in ${f1(run.caughtUp.seconds)} s`
  figures[`${label}: undelivered backlog`] =
    `${fmt(run.backlogAtEnd.missing)} of ${fmt(run.expected)} matches of the indexed blocks at the window's end ` +
    `(${fmt(run.backlogAtEnd.behind)} subscriptions behind); ${fmt(run.backlogAfterGrace.missing)} after ` +
    `${run.graceSeconds} s more (${fmt(run.backlogAfterGrace.behind)} behind)`
  figures[`${label}: checks`] =
    `${fmt(w.counts.verified)} deliveries verified with standardwebhooks (the first ${VERIFIED_SAMPLE} subscriptions), ` +
    `${w.counts.verifyFailures} failed; ${w.counts.duplicates} repeated, ${w.counts.undos} undos, ${w.counts.malformed} malformed; ` +
    `${run.notActive} subscriptions not active, ${run.failing} failing at the end`
  const problems = [
    run.caughtUp.caughtUp < run.count ? `${run.count - run.caughtUp.caughtUp} subscriptions never caught up` : '',
    run.backlogAfterGrace.missing > 0
      ? `${run.backlogAfterGrace.missing} matches still undelivered ${run.graceSeconds} s after the window`
      : '',
    w.counts.verifyFailures > 0
      ? `${w.counts.verifyFailures} signatures did not verify: ${w.verifyReasons.join(' | ')}`
      : '',
    w.counts.malformed > 0 ? `${w.counts.malformed} malformed deliveries` : '',
    w.counts.undos > 0 ? `${w.counts.undos} undos` : '',
    run.notActive > 0 ? `${run.notActive} subscriptions not active` : '',
    run.stream ? '' : `the stream subscriber failed: ${run.streamError}`,
  ].filter(Boolean)
  if (problems.length > 0) failures.push(`${label}: ${problems.join('; ')}`)
  figures[`${label}: bar p99 ≤ ${BAR_P99_MS} ms (less the timestamp offset)`] =
    `${held(sinceProductionP99 <= BAR_P99_MS)} (${f1(sinceProductionP99)} ms; by the block timestamp alone ` +
    `${f1(latency.p99)} ms: ${held(latency.p99 <= BAR_P99_MS)})`
  if (run.peakRssMiB !== undefined)
    figures[`${label}: bar antler RSS ≤ ${BAR_RSS_MIB} MiB`] =
      `${held(run.peakRssMiB <= BAR_RSS_MIB)} (${f1(run.peakRssMiB)} MiB)`
  return figures
}

/**
 * Webhook delivery figures (issue 27): one `antler dev` (demo workload: one eosio.token transfer every 500 ms, 500 ms
 * blocks; 2,000 subscriptions and 100,000 deliveries/s allowed per key) delivers `receiver:eosio.token action:transfer`
 * to a receiver process on loopback (bench/webhook-receiver.ts), 1, 100 and 1,000 subscriptions of one API key, one
 * level after another, deleted between levels. Per level: deliveries/s, block timestamp → receipt p50/p99, that less
 * the timestamp offset a `/v1/stream` subscriber alongside measures (the streams bench's lone subscriber, the limit in
 * the same window), the undelivered backlog, antler's peak RSS and CPU.
 */
export async function benchWebhooks(options: WebhooksBenchOptions): Promise<Figures> {
  const failuresName = 'failures (signatures, malformed or undone deliveries, subscriptions not active or behind)'
  const savedEnv = Object.keys(DEV_ENV).map((name) => [name, process.env[name]] as const)
  Object.assign(process.env, DEV_ENV)
  try {
    return await inProcesses('webhooks', failuresName, async ({ dir, children, figures, failures }) => {
      const server = await startDev(children, dir, 'dev-webhooks')
      figures['antler dev RSS before any subscription'] = `${f1(rssMiB(server.child.pid) ?? NaN)} MiB`
      let lone: LevelRun | undefined
      for (const count of options.subscriptionCounts) {
        const label = `${fmt(count)} subscription${count === 1 ? '' : 's'}`
        console.error(`  webhooks bench: ${label}`)
        try {
          const run = await runLevel(children, server, count, options.seconds)
          lone ??= run
          Object.assign(figures, describeLevel(label, run, lone, failures))
        } catch (error) {
          const message = (error as Error).message.slice(0, 300)
          failures.push(`${label}: ${message}`)
          figures[label] = `FAILED: ${message}`
          if (!lone) break
        }
      }
      await children.stop(server.child)
    })
  } finally {
    for (const [name, value] of savedEnv) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  }
}
