import { defineError } from '../error-definition.ts'

/** The codes of `/v1/webhooks` and of the webhook tables. */
export const WEBHOOK_ERRORS = {
  webhook_not_found_error: defineError<{ id: string }>({
    status: 404,
    message: (d) => `No webhook subscription ${d.id} for this API key.`,
  }),
  webhook_message_not_found_error: defineError<{ id: string; message_id: string }>({
    status: 404,
    message: (d) =>
      `Subscription ${d.id} has no message ${d.message_id} to send again (never tried, older than 7 days, or forked out).`,
  }),
  // `reason` names the rule: `scheme`, `credentials`, `blocked_ip` (with the address), `dns` (no address) …
  webhook_target_refused_error: defineError<{ url: string; reason: string; address?: string }>({
    status: 400,
    message: (d) =>
      d.reason === 'blocked_ip'
        ? `Webhook target ${d.url} resolves to ${d.address ?? 'an address'}, which deliveries may not reach.`
        : `Webhook target ${d.url} refused: ${d.reason}.`,
  }),
  webhook_limit_exceeded_error: defineError<{ kind: string; limit: number }>({
    status: 429,
    message: (d) => `At most ${d.limit} ${d.kind} per API key.`,
  }),
  store_webhook_exists_error: defineError<{ id: string }>({
    status: 409,
    message: (d) => `A webhook subscription ${d.id} is already stored.`,
  }),
} as const
