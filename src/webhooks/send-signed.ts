import type { WebhookRecord, WebhookStore } from '../store/index.ts'
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

/** Signs one try of a message (Standard Webhooks headers, timestamp of the try), sends it and logs the attempt. */
export async function sendSigned(
  deps: {
    readonly post: PostMessage
    readonly sign: WebhookSigner
    readonly store: Pick<WebhookStore, 'insertWebhookAttempt'>
    now(): number
  },
  record: WebhookRecord,
  /** `after`: where the message follows (positionOf), kept in the attempt log for a resend; '' for a test message. */
  message: { readonly id: string; readonly body: string; readonly attempt: number; readonly after: string },
  signal: AbortSignal,
): Promise<DeliveryOutcome> {
  const atMs = deps.now()
  const timestamp = Math.floor(atMs / 1000)
  const headers = {
    'webhook-id': message.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': deps.sign(signingSecrets(record, atMs), message.id, timestamp, message.body),
  }
  const outcome = await deps.post(record.url, headers, message.body, signal)
  await deps.store.insertWebhookAttempt({
    webhookId: record.id,
    messageId: message.id,
    attempt: message.attempt,
    atMs,
    status: outcome.status,
    durationMs: outcome.durationMs,
    error: outcome.ok ? null : outcome.error,
    responseBody: outcome.responseBody,
    afterPosition: message.after,
  })
  return outcome
}
