import { setTimeout as sleep } from 'node:timers/promises'
import type { DocumentNode } from 'graphql'
import { formatRfc3339 } from '../antelope/index.ts'
import type { GraphqlRuntime, SharedSubscriptions } from '../graphql/index.ts'
import type { StepReader, WebhookRecord, WebhookStore } from '../store/index.ts'
import { DELIVERY_DOCUMENT, forkedOutAfter, messageBody, messageId, undoneBefore } from './messages.ts'
import type { OwnerRate } from './owner-rate.ts'
import { nextRetryDelay, type RetrySchedule } from './retry-schedule.ts'
import { sendSigned, type PostMessage } from './send-signed.ts'

/** What one subscription's worker needs (the dispatcher builds it once for all). */
export interface WorkerDeps {
  readonly store: WebhookStore & Pick<StepReader, 'stepsOfBlock'>
  readonly graphql: GraphqlRuntime
  readonly shared: SharedSubscriptions<string>
  readonly document: DocumentNode
  readonly post: PostMessage
  readonly retries: RetrySchedule
  /** A subscription failing continuously for this long is disabled. */
  readonly disableAfterMs: number
  readonly ownerRate: OwnerRate
  readonly now: () => number
  /** Called after each 2xx (benchmarks, metrics). */
  readonly onDelivered?: (info: { webhookId: string; messageId: string; blockNum: number; atMs: number }) => void
}

/** An event of the delivery subscription: a `SearchTransactionForwardResponse` before execution. */
interface DeliveryEvent {
  readonly undo: boolean
  readonly cursor: string
  readonly block: { readonly id: string; readonly num: number; readonly timestamp: number }
  readonly trace: { readonly id: string } | null
}

/** How one pass over the subscription's stream ended. */
type PassEnd =
  | { readonly kind: 'restart' }
  | { readonly kind: 'stop' }
  | { readonly kind: 'failed'; readonly messageId: string; readonly failures: number; readonly delayMs: number }

/** A message that failed, and how many times: the next pass counts on from it if it is still the next message. */
interface Failing {
  readonly messageId: string
  readonly failures: number
}

/** How long a pass whose stream broke (the live hub dropped it, the store failed) waits before it starts again. */
const STREAM_RETRY_MS = 1_000

/**
 * Whether the subscription changed under the pass (a PATCH of its query, a replay, another dispatcher's delivery): the
 * pass then starts again from what is stored.
 */
const movedElsewhere = (opened: WebhookRecord, fresh: WebhookRecord, cursor: string) =>
  fresh.query !== opened.query ||
  fresh.finality !== opened.finality ||
  fresh.cursor !== cursor ||
  (cursor === '' && fresh.startBlock !== opened.startBlock)

/**
 * Delivers one subscription's messages in order until it is paused, disabled, deleted or `signal` aborts: a pass
 * follows the GraphQL forward subscription from the stored cursor, sends each message until a 2xx, then advances the
 * cursor (compare-and-set: a replay or another dispatcher wins). A failed message ends the pass; the next one starts
 * from the cursor after the retry delay and finds the same message (same id) first.
 */
export async function runWebhookWorker(id: string, deps: WorkerDeps, signal: AbortSignal): Promise<void> {
  let failing: Failing | undefined
  while (!signal.aborted) {
    const record = await deps.store.webhook(id)
    if (!record || record.paused || record.disabled) return
    let end: PassEnd
    try {
      end = await deliverPass(record, deps, signal, failing)
    } catch {
      // The stream broke (the live hub dropped a slow pass, the store failed): start again from the cursor.
      await sleep(STREAM_RETRY_MS, undefined, { signal }).catch(() => undefined)
      continue
    }
    if (end.kind === 'stop') return
    if (end.kind === 'failed') {
      failing = { messageId: end.messageId, failures: end.failures }
      await sleep(end.delayMs, undefined, { signal }).catch(() => undefined)
    }
  }
}

async function deliverPass(
  record: WebhookRecord,
  deps: WorkerDeps,
  signal: AbortSignal,
  failing: Failing | undefined,
): Promise<PassEnd> {
  const variables = record.cursor
    ? { query: record.query, cursor: record.cursor, irreversibleOnly: record.finality === 'irreversible' }
    : { query: record.query, low: record.startBlock, irreversibleOnly: record.finality === 'irreversible' }
  const started = await deps.shared.subscribe(
    deps.document,
    { query: DELIVERY_DOCUMENT, variables },
    deps.graphql.context(),
  )
  if (!('events' in started)) {
    const reason = started.errors?.map((e) => e.message).join('; ') || 'the subscription could not start'
    await deps.store.updateWebhook(record.id, { disabled: { reason, atMs: deps.now() } }, deps.now())
    return { kind: 'stop' }
  }
  const events = started.events
  const stop = () => void events.return?.()
  signal.addEventListener('abort', stop, { once: true })
  const forkedOut = new Set<string>()
  let cursor = record.cursor
  try {
    for (;;) {
      const next = await events.next()
      if (next.done || signal.aborted) return { kind: 'stop' }
      const event = next.value as DeliveryEvent
      if (!event.trace) continue
      const match = `${event.block.id}:${event.trace.id}`
      const step = deps.graphql.services.cursors.decode(event.cursor).step
      const steps = await deps.store.stepsOfBlock(event.block.id)
      // A match forked out before it was delivered is dropped, and so is its undo.
      if (event.undo && forkedOut.delete(match)) continue
      if (!event.undo && step && forkedOutAfter(steps, step.seq)) {
        forkedOut.add(match)
        continue
      }
      const fresh = await deps.store.webhook(record.id)
      if (!fresh || fresh.paused || fresh.disabled) return { kind: 'stop' }
      if (movedElsewhere(record, fresh, cursor)) return { kind: 'restart' }
      const id = messageId(record.id, event.block.id, event.trace.id, event.undo, undoneBefore(steps, step?.seq))
      const type = event.undo ? 'antelope.transaction.undo' : 'antelope.transaction'
      const body = messageBody(type, formatRfc3339(event.block.timestamp), await started.payload(event))
      await deps.ownerRate.take(fresh.ownerKeyId, signal)
      const attempt = (failing?.messageId === id ? failing.failures : 0) + 1
      const outcome = await sendSigned(deps, fresh, { id, body, attempt }, signal)
      if (!outcome.ok) return failed(deps, fresh, id, attempt, outcome)
      const advanced = await deps.store.updateWebhook(
        record.id,
        { cursor: event.cursor, failingSinceMs: null },
        deps.now(),
        cursor,
      )
      if (!advanced) return { kind: 'restart' }
      cursor = event.cursor
      failing = undefined
      deps.onDelivered?.({ webhookId: record.id, messageId: id, blockNum: event.block.num, atMs: deps.now() })
    }
  } finally {
    signal.removeEventListener('abort', stop)
    stop()
  }
}

/** A failed try: disables on 410 or after disableAfterMs of failures, else schedules the next try. */
async function failed(
  deps: WorkerDeps,
  record: WebhookRecord,
  id: string,
  attempt: number,
  outcome: { status: number | null; error: string | null; retryAfterMs?: number },
): Promise<PassEnd> {
  const now = deps.now()
  const since = record.failingSinceMs ?? now
  const disabled =
    outcome.status === 410
      ? 'the endpoint answered 410 Gone'
      : now - since >= deps.disableAfterMs
        ? `deliveries failed continuously since ${new Date(since).toISOString()}`
        : undefined
  if (disabled) {
    await deps.store.updateWebhook(record.id, { disabled: { reason: disabled, atMs: now } }, now)
    return { kind: 'stop' }
  }
  if (record.failingSinceMs === undefined) await deps.store.updateWebhook(record.id, { failingSinceMs: now }, now)
  return { kind: 'failed', messageId: id, failures: attempt, delayMs: nextRetryDelay(deps.retries, attempt, outcome) }
}
