import { setTimeout as sleep } from 'node:timers/promises'
import { createFailureLog, type FailureLogger, type FailureReport } from '../antelope/index.ts'
import type { KeyStore, WebhookRecord, WebhookStore } from '../store/index.ts'
import { openDeliveryMessages, positionOf, type MessageSource } from './delivery-messages.ts'
import type { OwnerRate } from './owner-rate.ts'
import { nextRetryDelay, type RetrySchedule } from './retry-schedule.ts'
import { trySigned, type PostMessage } from './send-signed.ts'
import type { WebhookSigner } from './signing.ts'

/** What one subscription's worker needs (the dispatcher builds it once for all). */
export interface WorkerDeps extends MessageSource {
  readonly store: MessageSource['store'] & WebhookStore & Pick<KeyStore, 'revokedApiKeyIds'>
  readonly post: PostMessage
  readonly sign: WebhookSigner
  readonly retries: RetrySchedule
  /** A subscription failing continuously for this long is disabled. */
  readonly disableAfterMs: number
  readonly ownerRate: OwnerRate
  readonly now: () => number
  /**
   * Where a broken pass (the stream or the store failed, not the endpoint: its failures are attempts) is logged, per
   * subscription: the first of a kind in full, repeats as a count.
   */
  readonly log?: FailureLogger
  /** Called after each 2xx (benchmarks, metrics). */
  readonly onDelivered?: (info: {
    webhookId: string
    ownerKeyId: string
    messageId: string
    blockNum: number
    atMs: number
  }) => void
}

/** The cursor a worker holds (or is about to write): the dispatcher restarts it when the stored one differs. */
export interface WorkerProgress {
  cursor: string
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
 * Delivers one subscription's messages in order until it is paused, disabled, deleted or `signal` aborts: a pass
 * follows the GraphQL forward subscription from the stored cursor, sends each message until a 2xx, then advances the
 * cursor (compare-and-set: a replay or another dispatcher wins). A failed message ends the pass; the next one starts
 * from the cursor after the retry delay and finds the same message (same id) first.
 */
export async function runWebhookWorker(
  id: string,
  deps: WorkerDeps,
  signal: AbortSignal,
  progress: WorkerProgress = { cursor: '' },
): Promise<void> {
  const passFailures = createFailureLog({
    log: deps.log,
    label: 'webhook worker: a delivery pass',
    fields: { webhook_id: id },
  })
  let failing: Failing | undefined
  try {
    while (!signal.aborted) {
      const record = await deps.store.webhook(id)
      if (!record || record.paused || record.disabled) return
      progress.cursor = record.cursor
      let end: PassEnd
      try {
        end = await deliverPass(record, deps, signal, failing, progress, passFailures)
        passFailures.recovered()
      } catch (error) {
        // The stream broke (the live hub dropped a slow pass, the store failed): start again from the cursor.
        if (!signal.aborted) passFailures.failed(error)
        await sleep(STREAM_RETRY_MS, undefined, { signal }).catch(() => undefined)
        continue
      }
      if (end.kind === 'stop') return
      if (end.kind === 'failed') {
        failing = { messageId: end.messageId, failures: end.failures }
        await sleep(end.delayMs, undefined, { signal }).catch(() => undefined)
      }
    }
  } finally {
    passFailures.close()
  }
}

async function deliverPass(
  record: WebhookRecord,
  deps: WorkerDeps,
  signal: AbortSignal,
  failing: Failing | undefined,
  progress: WorkerProgress,
  passFailures: FailureReport,
): Promise<PassEnd> {
  const opened = await openDeliveryMessages(deps, { webhookId: record.id, ...record })
  if ('refused' in opened) {
    await deps.store.updateWebhook(record.id, { disabled: { reason: opened.refused, atMs: deps.now() } }, deps.now())
    return { kind: 'stop' }
  }
  signal.addEventListener('abort', opened.close, { once: true })
  let cursor = record.cursor
  let current = record
  try {
    for await (const message of opened.messages) {
      if (signal.aborted) return { kind: 'stop' }
      // A message arrived: whatever broke the passes before this one works again.
      passFailures.recovered()
      // A change of the subscription (pause, PATCH, rotation, deletion) reaches this pass through the dispatcher,
      // which stops it; a replay (or another dispatcher) fails the compare-and-set below.
      await deps.ownerRate.take(current.ownerKeyId, signal)
      const attempt = (failing?.messageId === message.id ? failing.failures : 0) + 1
      const after = positionOf({ cursor, startBlock: record.startBlock })
      const tried = await trySigned(deps, current, { id: message.id, body: message.body, attempt, after }, signal)
      const outcome = tried.outcome
      // A try cut by the worker's own stop is not the endpoint's failure; a 2xx still advances the cursor.
      if (!outcome.ok) {
        await deps.store.insertWebhookAttempt(tried.attempt)
        return signal.aborted ? { kind: 'stop' } : failed(deps, current, message.id, attempt, outcome)
      }
      progress.cursor = message.cursor
      const advanced = await deps.store.recordWebhookDelivery(tried.attempt, {
        cursor: message.cursor,
        expectCursor: cursor,
        nowMs: deps.now(),
      })
      if (!advanced) return { kind: 'restart' }
      current = advanced
      cursor = message.cursor
      failing = undefined
      deps.onDelivered?.({
        webhookId: record.id,
        ownerKeyId: current.ownerKeyId,
        messageId: message.id,
        blockNum: message.blockNum,
        atMs: deps.now(),
      })
    }
    return { kind: 'stop' }
  } finally {
    signal.removeEventListener('abort', opened.close)
    opened.close()
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
