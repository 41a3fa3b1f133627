import type { TestContext } from 'node:test'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { fileURLToPath } from 'node:url'
import { onCleanup } from './cleanup.ts'

/** A delivery as the receiver got it. */
export interface Delivery {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  /** What the receiver answered (0: the connection died first). */
  status: number
  /** When the body had arrived: performance.now() and the wall clock (ms since the epoch). */
  readonly at: number
  readonly wall: number
}

/** How the receiver answers a request on a path: a status, after an optional delay. */
export type Answer = (delivery: Delivery, index: number) => { status: number; delayMs?: number }

/** A match as a blind receiver holds it: the transaction in its block, with the matching actions' sequences. */
export interface WebhookMatch {
  readonly undo: boolean
  readonly cursor: string
  readonly isIrreversible: boolean
  readonly irreversibleBlockNum: number
  readonly block: { readonly num: number; readonly id: string; readonly timestamp: string }
  readonly trace: {
    readonly id: string
    readonly status: string
    readonly matchingActions: readonly { seq: string; receiver: string; account: string; name: string }[]
  }
}

/**
 * A webhook receiver on loopback (a real HTTP server): records every delivery per path (with its receipt times),
 * answers as `answers` say (200 by default), counts the connections made to it, and checks each delivery with the
 * Standard Webhooks library once the path's secret is known. `onDelivery` sees each delivery as it arrives; with
 * `keep: false` deliveries are not kept (a bench's thousands of them: bench/webhooks.ts).
 */
export async function createWebhookReceiver(
  answers: Record<string, Answer> = {},
  { keep = true, onDelivery }: { keep?: boolean; onDelivery?: (delivery: Delivery) => void } = {},
) {
  const deliveries: Delivery[] = []
  const counts = new Map<string, number>()
  const connections = { open: 0, opened: 0, mostOpen: 0 }
  let inFlight = 0
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const [at, wall] = [performance.now(), Date.now()]
      const path = request.url ?? '/'
      const body = Buffer.concat(chunks).toString()
      const delivery: Delivery = { path, headers: request.headers, body, status: 0, at, wall }
      if (keep) deliveries.push(delivery)
      const index = counts.get(path) ?? 0
      counts.set(path, index + 1)
      const { status, delayMs = 0 } = answers[path]?.(delivery, index) ?? { status: 200 }
      inFlight++
      setTimeout(() => {
        inFlight--
        if (response.destroyed) return
        delivery.status = status
        response.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'not now')
      }, delayMs)
      onDelivery?.(delivery)
    })
  })
  server.on('connection', (socket) => {
    connections.opened++
    connections.mostOpen = Math.max(connections.mostOpen, ++connections.open)
    socket.once('close', () => connections.open--)
  })
  server.keepAliveTimeout = 1_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    server,
    base,
    url: (path: string) => `${base}${path}`,
    deliveries,
    inFlight: () => inFlight,
    /** Connections made to the receiver so far, and the most open at once. */
    connections: () => ({ opened: connections.opened, mostOpen: connections.mostOpen }),
    /** Deliveries to `path` the receiver acknowledged (2xx), in order. */
    acknowledged: (path: string) => deliveries.filter((d) => d.path === path && d.status >= 200 && d.status < 300),
    /** Deliveries to `path` whose signature does not verify with `secret` (the library's own check). */
    unverified(path: string, secret: string): string[] {
      const webhook = new Webhook(secret)
      const failures: string[] = []
      for (const d of deliveries.filter((x) => x.path === path)) {
        try {
          webhook.verify(d.body, d.headers as Record<string, string>)
        } catch (error) {
          failures.push(`${String(d.headers['webhook-id'])}: ${(error as Error).message}`)
        }
      }
      return failures
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** createWebhookReceiver for a test: closed after it. */
export async function startWebhookReceiver(t: TestContext, answers: Record<string, Answer> = {}) {
  const receiver = await createWebhookReceiver(answers)
  onCleanup(t, receiver.close)
  receiver.server.unref()
  return receiver
}

export type WebhookReceiver = Awaited<ReturnType<typeof startWebhookReceiver>>

/** The key of a match across forks: the transaction in one block. */
export const matchKey = (m: Pick<WebhookMatch, 'block' | 'trace'>) => `${m.trace.id}@${m.block.id}`
export const matchSeqs = (m: Pick<WebhookMatch, 'trace'>) => m.trace.matchingActions.map((a) => a.seq).join(',')

/**
 * A receiver's copy built by applying every acknowledged message blindly, each `webhook-id` once: an apply adds its
 * match (absent before), an undo removes it (held, with the same actions). It also checks the order forks promise:
 * an undo withdraws the newest held block first, and no block of a new branch arrives while the block it replaces is
 * still held.
 */
export function blindCopy(deliveries: readonly Delivery[]) {
  const held = new Map<string, string>()
  const heldBlocks = new Map<number, { id: string; count: number }>()
  const problems: string[] = []
  const seen = new Set<string>()
  let undos = 0
  let duplicates = 0
  for (const d of deliveries) {
    const id = String(d.headers['webhook-id'])
    if (seen.has(id)) {
      duplicates++
      continue
    }
    seen.add(id)
    const message = JSON.parse(d.body) as { type: string; data: WebhookMatch }
    const m = message.data
    const key = matchKey(m)
    const expectedType = m.undo ? 'antelope.transaction.undo' : 'antelope.transaction'
    if (message.type !== expectedType) problems.push(`${id}: type ${message.type} for undo ${m.undo}`)
    const block = heldBlocks.get(m.block.num)
    if (m.undo) {
      undos++
      const newest = Math.max(0, ...heldBlocks.keys())
      if (m.block.num !== newest) problems.push(`undo of block ${m.block.num} while block ${newest} is held`)
      if (held.get(key) !== matchSeqs(m)) problems.push(`undo of ${key}, held [${held.get(key)}]`)
      held.delete(key)
      if (block && --block.count === 0) heldBlocks.delete(m.block.num)
    } else {
      if (held.has(key)) problems.push(`apply of ${key}, already held`)
      if (block && block.id !== m.block.id)
        problems.push(`block ${m.block.num} ${m.block.id.slice(0, 12)} before the undo of ${block.id.slice(0, 12)}`)
      held.set(key, matchSeqs(m))
      heldBlocks.set(m.block.num, { id: m.block.id, count: (block?.id === m.block.id ? block.count : 0) + 1 })
    }
  }
  return { held, problems, undos, duplicates, messages: seen.size }
}

/**
 * The receiver as a forked process of bench/webhooks.ts, driven over its IPC channel: it answers `listening` with its
 * URL, then each ReceiverRequest with one ReceiverReply of the same kind. Deliveries come to `/s/<subscription>`; each
 * is noted (receipt times, subscription, block number and timestamp, transaction) and those to the subscriptions whose
 * secrets it is given are verified with `standardwebhooks`. Bodies are not kept.
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
      readonly cutoff: 'end' | 'now'
    }

export type ReceiverReply =
  | { readonly kind: 'listening'; readonly url: string }
  | { readonly kind: 'secrets' | 'window-start' }
  | { readonly kind: 'caught-up'; readonly caughtUp: number; readonly seconds: number }
  | { readonly kind: 'window-end'; readonly window: ReceiverWindow }
  | { readonly kind: 'backlog'; readonly missing: number; readonly behind: number }
  | { readonly kind: 'failed'; readonly error: string }

/** What the receiver saw in a window (the samples raw: the bench takes their percentiles). */
export interface ReceiverWindow {
  readonly seconds: number
  /** Deliveries received in the window (applies and undos). */
  readonly deliveries: number
  /** Receipt (wall clock) minus the block timestamp of the body, ms, the window's applies. */
  readonly sinceTimestamp: readonly number[]
  /** Per transaction delivered in the window: last receipt minus first over the subscriptions, ms. */
  readonly spread: readonly number[]
  /** Deliveries in the window of the subscription that got the fewest, and of the one that got the most. */
  readonly fewestPerSubscription: number
  readonly mostPerSubscription: number
  /** Over the whole run so far. */
  readonly counts: Readonly<Record<'verified' | 'verifyFailures' | 'duplicates' | 'undos' | 'malformed', number>>
  readonly verifyReasons: readonly string[]
  /** CPU this process used in the window, percent of one core. */
  readonly cpuPercent: number
  readonly connections: { readonly opened: number; readonly mostOpen: number }
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

async function serveOverIpc(): Promise<void> {
  const receipts: Receipt[] = []
  /** The highest block each subscription has received. */
  const highest = new Map<number, number>()
  const verifiers = new Map<number, Webhook>()
  const seenIds = new Set<string>()
  const verifyReasons: string[] = []
  const counts = { verified: 0, verifyFailures: 0, duplicates: 0, undos: 0, malformed: 0 }
  let onReceipt: (() => void) | undefined
  const receive = ({ path, headers, body, at, wall }: Delivery) => {
    type Body = {
      type?: string
      data?: { block?: { num?: number | string; timestamp?: string }; trace?: { id?: string } }
    }
    let parsed: Body = {}
    try {
      parsed = JSON.parse(body) as Body
    } catch {
      // counted as malformed below
    }
    const sub = /^\/s\/(\d+)$/.exec(path)?.[1]
    const [block, trx] = [parsed.data?.block, parsed.data?.trace?.id]
    if (sub === undefined || !block?.timestamp || !trx || !parsed.type?.startsWith('antelope.transaction'))
      return void counts.malformed++
    const index = Number(sub)
    try {
      verifiers.get(index)?.verify(body, headers as Record<string, string>)
      if (verifiers.has(index)) counts.verified++
    } catch (error) {
      counts.verifyFailures++
      if (verifyReasons.length < 3) verifyReasons.push((error as Error).message)
    }
    const id = `${index}:${String(headers['webhook-id'])}`
    if (seenIds.has(id)) counts.duplicates++
    seenIds.add(id)
    const undo = parsed.type === 'antelope.transaction.undo'
    if (undo) counts.undos++
    const num = Number(block.num)
    const timestamp = Date.parse(block.timestamp.endsWith('Z') ? block.timestamp : `${block.timestamp}Z`)
    receipts.push({ at, wall, sub: index, num, timestamp, trx, undo })
    highest.set(index, Math.max(highest.get(index) ?? 0, num))
    onReceipt?.()
  }
  const receiver = await createWebhookReceiver({}, { keep: false, onDelivery: receive })
  const caughtUp = (count: number, minBlock: number) => {
    let n = 0
    for (let sub = 0; sub < count; sub++) if ((highest.get(sub) ?? 0) >= minBlock) n++
    return n
  }
  const awaitCaughtUp = (count: number, minBlock: number, timeoutMs: number) => {
    const started = performance.now()
    return new Promise<ReceiverReply>((resolve) => {
      const reply = () => {
        clearTimeout(timer)
        onReceipt = undefined
        resolve({
          kind: 'caught-up',
          caughtUp: caughtUp(count, minBlock),
          seconds: (performance.now() - started) / 1000,
        })
      }
      const timer = setTimeout(reply, timeoutMs)
      // Counting every subscription on every receipt is O(count) each: cheap next to an HTTP request.
      onReceipt = () => void (caughtUp(count, minBlock) === count && reply())
      onReceipt()
    })
  }
  const windowOf = (start: number, end: number, cpu: NodeJS.CpuUsage): ReceiverWindow => {
    const inWindow = receipts.filter((r) => r.at >= start && r.at < end)
    const firstLast = new Map<string, [number, number]>()
    const perSubscription = new Map<number, number>([...highest.keys()].map((sub) => [sub, 0]))
    for (const r of inWindow) {
      const seen = firstLast.get(r.trx)
      if (seen) seen[1] = Math.max(seen[1], r.at)
      else firstLast.set(r.trx, [r.at, r.at])
      perSubscription.set(r.sub, (perSubscription.get(r.sub) ?? 0) + 1)
    }
    const perSub = [...perSubscription.values()]
    return {
      seconds: (end - start) / 1000,
      deliveries: inWindow.length,
      sinceTimestamp: inWindow.filter((r) => !r.undo).map((r) => r.wall - r.timestamp),
      spread: [...firstLast.values()].map(([first, last]) => last - first),
      fewestPerSubscription: perSub.length === 0 ? 0 : Math.min(...perSub),
      mostPerSubscription: perSub.length === 0 ? 0 : Math.max(...perSub),
      counts: { ...counts },
      verifyReasons,
      cpuPercent: ((cpu.user + cpu.system) / 1000 / (end - start)) * 100,
      connections: receiver.connections(),
    }
  }
  const backlog = (count: number, expected: readonly string[], cutoff: number) => {
    const got = Array.from({ length: count }, () => new Set<string>())
    for (const r of receipts) if (r.at <= cutoff && !r.undo && r.sub < count) got[r.sub].add(r.trx)
    const lacking = got.map((set) => expected.filter((trx) => !set.has(trx)).length)
    return { missing: lacking.reduce((a, b) => a + b, 0), behind: lacking.filter((n) => n > 0).length }
  }
  let window: { start: number; cpu: NodeJS.CpuUsage; end?: number } | undefined
  const answer = async (request: ReceiverRequest): Promise<ReceiverReply> => {
    switch (request.kind) {
      case 'secrets':
        for (const [sub, secret] of Object.entries(request.secrets)) verifiers.set(Number(sub), new Webhook(secret))
        return { kind: 'secrets' }
      case 'caught-up':
        return awaitCaughtUp(request.count, request.minBlock, request.timeoutMs)
      case 'window-start':
        window = { start: performance.now(), cpu: process.cpuUsage() }
        return { kind: 'window-start' }
      case 'window-end':
        if (!window) throw new Error('window-end before window-start')
        window.end = performance.now()
        return { kind: 'window-end', window: windowOf(window.start, window.end, process.cpuUsage(window.cpu)) }
      case 'backlog': {
        const cutoff = request.cutoff === 'now' ? performance.now() : window?.end
        if (cutoff === undefined) throw new Error('backlog at the window end before window-end')
        return { kind: 'backlog', ...backlog(request.count, request.expected, cutoff) }
      }
    }
  }
  const send = (message: ReceiverReply) => new Promise<void>((resolve) => process.send!(message, () => resolve()))
  process.on('message', (request: ReceiverRequest) => {
    answer(request).then(send, (error: unknown) => send({ kind: 'failed', error: String(error) }))
  })
  process.on('disconnect', () => process.exit(0))
  await send({ kind: 'listening', url: receiver.base })
}

// Forked with an IPC channel as a process of its own (bench/webhooks.ts): serve over it.
if (process.send && process.argv[1] === fileURLToPath(import.meta.url)) await serveOverIpc()
