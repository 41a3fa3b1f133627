import type { TestContext } from 'node:test'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { onCleanup } from './cleanup.ts'

/** A delivery as the receiver got it. */
export interface Delivery {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  /** What the receiver answered (0: the connection died first). */
  status: number
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
 * A webhook receiver on loopback (a real HTTP server): records every delivery per path, answers as `answers` say
 * (200 by default), and checks each one with the Standard Webhooks library once the path's secret is known.
 */
export async function startWebhookReceiver(t: TestContext, answers: Record<string, Answer> = {}) {
  const deliveries: Delivery[] = []
  let inFlight = 0
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const path = request.url ?? '/'
      const delivery: Delivery = { path, headers: request.headers, body: Buffer.concat(chunks).toString(), status: 0 }
      deliveries.push(delivery)
      const index = deliveries.filter((d) => d.path === path).length - 1
      const { status, delayMs = 0 } = answers[path]?.(delivery, index) ?? { status: 200 }
      inFlight++
      setTimeout(() => {
        inFlight--
        if (response.destroyed) return
        delivery.status = status
        response.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'not now')
      }, delayMs)
    })
  })
  server.keepAliveTimeout = 1_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  onCleanup(t, () => new Promise<void>((resolve) => server.close(() => resolve())))
  server.unref()
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url: (path: string) => `${base}${path}`,
    deliveries,
    inFlight: () => inFlight,
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
  }
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
