import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import type { Percentiles } from './graphql-subscribers.ts'
import { percentile } from './timing.ts'

/**
 * The webhook receiver of bench/webhooks.ts: `node webhook-receiver.ts`, forked with an IPC channel. A node:http
 * server on 127.0.0.1 that answers 200 at once and records, per delivery, its receipt time, the subscription (the path
 * `/s/<index>`), the block number and timestamp and the transaction id from the body; deliveries to the subscriptions
 * whose secrets it is given are checked with the `standardwebhooks` library. The parent drives it with ReceiverRequest
 * messages (one at a time, each answered by one ReceiverReply of the same kind) and reads the window's figures from it.
 */

export type ReceiverRequest =
  /** Secrets by subscription index: every delivery to those is verified (the sample). */
  | { readonly kind: 'secrets'; readonly secrets: Readonly<Record<number, string>> }
  /** Answered once subscriptions 0..count−1 have each received a block at or after `minBlock`. */
  | { readonly kind: 'caught-up'; readonly count: number; readonly minBlock: number; readonly timeoutMs: number }
  | { readonly kind: 'window-start' }
  | { readonly kind: 'window-end' }
  /** Matches (transaction ids) of subscriptions 0..count−1 not received by the window's end, or by now. */
  | {
      readonly kind: 'backlog'
      readonly count: number
      readonly expected: readonly string[]
      readonly cutoff: 'window-end' | 'now'
    }

export type ReceiverReply =
  | { readonly kind: 'listening'; readonly url: string }
  | { readonly kind: 'secrets' }
  | { readonly kind: 'caught-up'; readonly caughtUp: number; readonly seconds: number }
  | { readonly kind: 'window-start' }
  | { readonly kind: 'window-end'; readonly window: WindowFigures }
  | { readonly kind: 'backlog'; readonly missing: number; readonly behind: number }
  | { readonly kind: 'failed'; readonly error: string }

export interface WindowFigures {
  readonly seconds: number
  /** Deliveries received in the window (applies and undos), and per second. */
  readonly deliveries: number
  readonly perSecond: number
  /** Receipt (wall clock) minus the block timestamp of the body, deliveries received in the window, ms. */
  readonly sinceTimestamp: Percentiles
  /** Per transaction delivered in the window: last receipt minus first over the subscriptions, ms. */
  readonly spread: Percentiles
  /** Deliveries in the window of the subscription that got the fewest, and of the one that got the most. */
  readonly fewestPerSubscription: number
  readonly mostPerSubscription: number
  /** Over the whole run so far. */
  readonly verified: number
  readonly verifyFailures: number
  readonly verifyReasons: readonly string[]
  readonly duplicates: number
  readonly undos: number
  readonly malformed: number
  /** CPU this process used in the window, percent of one core. */
  readonly cpuPercent: number
  /** Connections antler opened to the receiver so far, and the most open at once. */
  readonly connections: number
  readonly mostConnections: number
}

interface Receipt {
  readonly at: number
  readonly wall: number
  readonly sub: number
  readonly num: number
  readonly timestamp: number
  readonly trx: string
  readonly undo: boolean
}

interface Body {
  readonly type?: string
  readonly data?: { readonly block?: { num?: number | string; timestamp?: string }; readonly trace?: { id?: string } }
}

const receipts: Receipt[] = []
/** The highest block each subscription has received. */
const highest = new Map<number, number>()
const verifiers = new Map<number, Webhook>()
const seenIds = new Set<string>()
const verifyReasons: string[] = []
const counts = { verified: 0, verifyFailures: 0, duplicates: 0, undos: 0, malformed: 0 }
const sockets = { open: 0, connections: 0, mostConnections: 0 }
let onReceipt: (() => void) | undefined

const parseTimestamp = (t: string) => Date.parse(t.endsWith('Z') ? t : `${t}Z`)

function receive(url: string | undefined, headers: IncomingHttpHeaders, body: string, at: number, wall: number): void {
  const sub = /^\/s\/(\d+)$/.exec(url ?? '')?.[1]
  let parsed: Body
  try {
    parsed = JSON.parse(body) as Body
  } catch {
    parsed = {}
  }
  const block = parsed.data?.block
  const trx = parsed.data?.trace?.id
  if (sub === undefined || !block?.timestamp || !trx || !parsed.type?.startsWith('antelope.transaction')) {
    counts.malformed++
    return
  }
  const index = Number(sub)
  const verifier = verifiers.get(index)
  if (verifier) {
    try {
      verifier.verify(body, headers as Record<string, string>)
      counts.verified++
    } catch (error) {
      counts.verifyFailures++
      if (verifyReasons.length < 3) verifyReasons.push((error as Error).message)
    }
  }
  const id = `${index}:${String(headers['webhook-id'])}`
  if (seenIds.has(id)) counts.duplicates++
  seenIds.add(id)
  const undo = parsed.type === 'antelope.transaction.undo'
  if (undo) counts.undos++
  const num = Number(block.num)
  receipts.push({ at, wall, sub: index, num, timestamp: parseTimestamp(block.timestamp), trx, undo })
  highest.set(index, Math.max(highest.get(index) ?? 0, num))
  onReceipt?.()
}

function percentiles(xs: number[]): Percentiles {
  const sorted = Array.from(Float64Array.from(xs).sort())
  return {
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted.length === 0 ? NaN : sorted[sorted.length - 1],
    samples: sorted.length,
  }
}

function windowFigures(start: number, end: number, cpu: NodeJS.CpuUsage): WindowFigures {
  const inWindow = receipts.filter((r) => r.at >= start && r.at < end)
  const firstLast = new Map<string, [number, number]>()
  const perSubscription = new Map<number, number>()
  for (const r of inWindow) {
    const seen = firstLast.get(r.trx)
    if (seen) seen[1] = Math.max(seen[1], r.at)
    else firstLast.set(r.trx, [r.at, r.at])
    perSubscription.set(r.sub, (perSubscription.get(r.sub) ?? 0) + 1)
  }
  const perSub = [...highest.keys()].map((sub) => perSubscription.get(sub) ?? 0)
  const seconds = (end - start) / 1000
  return {
    seconds,
    deliveries: inWindow.length,
    perSecond: inWindow.length / seconds,
    sinceTimestamp: percentiles(inWindow.filter((r) => !r.undo).map((r) => r.wall - r.timestamp)),
    spread: percentiles([...firstLast.values()].map(([first, last]) => last - first)),
    fewestPerSubscription: perSub.length === 0 ? 0 : Math.min(...perSub),
    mostPerSubscription: perSub.length === 0 ? 0 : Math.max(...perSub),
    ...counts,
    verifyReasons,
    connections: sockets.connections,
    mostConnections: sockets.mostConnections,
    cpuPercent: ((cpu.user + cpu.system) / 1000 / (end - start)) * 100,
  }
}

function backlog(count: number, expected: readonly string[], cutoff: number): { missing: number; behind: number } {
  const got = Array.from({ length: count }, () => new Set<string>())
  for (const r of receipts) if (r.at <= cutoff && !r.undo && r.sub < count) got[r.sub].add(r.trx)
  let missing = 0
  let behind = 0
  for (const set of got) {
    const lacking = expected.filter((trx) => !set.has(trx)).length
    missing += lacking
    if (lacking > 0) behind++
  }
  return { missing, behind }
}

const caughtUp = (count: number, minBlock: number) => {
  let n = 0
  for (let sub = 0; sub < count; sub++) if ((highest.get(sub) ?? 0) >= minBlock) n++
  return n
}

function awaitCaughtUp(count: number, minBlock: number, timeoutMs: number): Promise<ReceiverReply> {
  const started = performance.now()
  const reply = (): ReceiverReply => ({
    kind: 'caught-up',
    caughtUp: caughtUp(count, minBlock),
    seconds: (performance.now() - started) / 1000,
  })
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      onReceipt = undefined
      resolve(reply())
    }, timeoutMs)
    onReceipt = () => {
      // Counting every subscription on every receipt is O(count) each: cheap next to an HTTP request.
      if (caughtUp(count, minBlock) < count) return
      clearTimeout(timer)
      onReceipt = undefined
      resolve(reply())
    }
    onReceipt()
  })
}

const send = (message: ReceiverReply) => new Promise<void>((resolve) => process.send!(message, () => resolve()))

async function main(): Promise<void> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const at = performance.now()
      const wall = Date.now()
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok')
      receive(request.url, request.headers, Buffer.concat(chunks).toString(), at, wall)
    })
  })
  server.on('connection', (socket) => {
    sockets.connections++
    sockets.mostConnections = Math.max(sockets.mostConnections, ++sockets.open)
    socket.once('close', () => sockets.open--)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  let window: { start: number; cpu: NodeJS.CpuUsage; end?: number } | undefined
  process.on('message', (request: ReceiverRequest) => {
    void (async (): Promise<ReceiverReply> => {
      switch (request.kind) {
        case 'secrets':
          for (const [sub, secret] of Object.entries(request.secrets)) verifiers.set(Number(sub), new Webhook(secret))
          return { kind: 'secrets' }
        case 'caught-up':
          return awaitCaughtUp(request.count, request.minBlock, request.timeoutMs)
        case 'window-start':
          window = { start: performance.now(), cpu: process.cpuUsage() }
          return { kind: 'window-start' }
        case 'window-end': {
          if (!window) throw new Error('window-end before window-start')
          window.end = performance.now()
          return { kind: 'window-end', window: windowFigures(window.start, window.end, process.cpuUsage(window.cpu)) }
        }
        case 'backlog': {
          const cutoff = request.cutoff === 'now' ? performance.now() : window?.end
          if (cutoff === undefined) throw new Error('backlog at the window end before window-end')
          return { kind: 'backlog', ...backlog(request.count, request.expected, cutoff) }
        }
      }
    })().then(send, (error: unknown) => send({ kind: 'failed', error: String(error) }))
  })
  await send({ kind: 'listening', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })
}

process.on('disconnect', () => process.exit(0))
await main()
