import type { WebhookAttemptRecord, WebhookRecord, WebhookStore } from '../store/index.ts'
import type { DeliveryOutcome } from './http-sender.ts'
import type { WebhookSigner } from './signing.ts'

export type { DeliveryOutcome } from './http-sender.ts'

/** Posts a body to a subscription's URL (resolving and checking its address first) and answers the outcome. */
export type PostMessage = (
  url: string,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
) => Promise<DeliveryOutcome>

/** The secrets a message is signed with: the current one, and the previous one during its grace period. */
export function signingSecrets(record: WebhookRecord, nowMs: number): string[] {
  const previous = record.previousSecret
  return previous && previous.untilMs > nowMs ? [record.secret, previous.secret] : [record.secret]
}

/** What a try needs: the sender, the signer and the clock. */
interface TryDeps {
  readonly post: PostMessage
  readonly sign: WebhookSigner
  now(): number
}

/** One message's try: its id, body, attempt number and position. */
interface MessageTry {
  readonly id: string
  readonly body: string
  readonly attempt: number
  /** Where the message follows (positionOf), kept in the attempt log for a resend; '' for a test message. */
  readonly after: string
}

/**
 * Signs one try of a message (Standard Webhooks headers, timestamp of the try) and sends it: answers the outcome and
 * the attempt to log, which the caller writes (the worker with its cursor advance, in one write).
 */
export async function trySigned(
  deps: TryDeps,
  record: WebhookRecord,
  message: MessageTry,
  signal: AbortSignal,
): Promise<{ outcome: DeliveryOutcome; attempt: WebhookAttemptRecord }> {
  const atMs = deps.now()
  const timestamp = Math.floor(atMs / 1000)
  const headers = {
    'webhook-id': message.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': deps.sign(signingSecrets(record, atMs), message.id, timestamp, message.body),
  }
  const outcome = await deps.post(record.url, headers, message.body, signal)
  const attempt: WebhookAttemptRecord = {
    webhookId: record.id,
    messageId: message.id,
    attempt: message.attempt,
    atMs,
    status: outcome.status,
    durationMs: outcome.durationMs,
    error: outcome.ok ? null : outcome.error,
    responseBody: outcome.responseBody,
    afterPosition: message.after,
  }
  return { outcome, attempt }
}

/** trySigned, with the attempt logged. */
export async function sendSigned(
  deps: TryDeps & { readonly store: Pick<WebhookStore, 'insertWebhookAttempt'> },
  record: WebhookRecord,
  message: MessageTry,
  signal: AbortSignal,
): Promise<DeliveryOutcome> {
  const { outcome, attempt } = await trySigned(deps, record, message, signal)
  await deps.store.insertWebhookAttempt(attempt)
  return outcome
}
