import { randomBytes } from 'node:crypto'
import { AntlerError } from '../antelope/index.ts'
import { parseSearchQuery, type CursorCodec } from '../search/index.ts'
import type {
  StorePosition,
  WebhookAttemptRecord,
  WebhookFinality,
  WebhookPatch,
  WebhookRecord,
  WebhookStore,
} from '../store/index.ts'
import {
  fromPosition,
  openDeliveryMessages,
  type DeliveryMessage,
  type MessageSource,
  type MessagesFrom,
} from './delivery-messages.ts'
import { messageBody } from './messages.ts'
import { sendSigned, type DeliveryOutcome, type PostMessage } from './send-signed.ts'
import { newWebhookSecret, type WebhookSigner } from './signing.ts'

/** How long the old secret still signs after a rotation. */
export const SECRET_GRACE_MS = 24 * 3_600_000

/** Per-key limits of the webhooks surface. */
export interface WebhookLimits {
  readonly maxSubscriptionsPerKey: number
}

export const DEFAULT_WEBHOOK_LIMITS: WebhookLimits = { maxSubscriptionsPerKey: 100 }

export interface WebhookServiceDeps {
  readonly store: WebhookStore & { position(): Promise<StorePosition | undefined> }
  /** Where a resend finds a message again. */
  readonly messages: MessageSource
  readonly cursors: Pick<CursorCodec, 'decode'>
  /** Refuses (webhook_target_refused_error) a URL deliveries may not reach. */
  checkTarget(url: string): Promise<void>
  readonly post: PostMessage
  readonly sign: WebhookSigner
  readonly limits: WebhookLimits
  /** Tells the dispatcher to look at the subscriptions now (and to restart the worker of `restart`). */
  notify(restart?: string): void
  now(): number
}

export interface NewWebhook {
  readonly url: string
  readonly query: string
  readonly finality?: WebhookFinality
  readonly startBlock?: number
  readonly cursor?: string
}

export interface WebhookChanges {
  readonly url?: string
  readonly query?: string
  readonly paused?: boolean
}

/** Parses a webhook's query, naming the `query` field where the search routes name `q`. */
function checkQuery(query: string): void {
  try {
    parseSearchQuery(query)
  } catch (error) {
    if (!(error instanceof AntlerError) || error.code !== 'request_validation_error') throw error
    const { position = 0, reason = 'invalid' } = error.details as { position?: number; reason?: string }
    throw new AntlerError('request_validation_error', { param: 'q', field: 'query', query, position, reason })
  }
}

/** Decodes a cursor given in `field`, naming that field if it is refused. */
function checkCursor(cursors: Pick<CursorCodec, 'decode'>, field: string, cursor: string): void {
  try {
    cursors.decode(cursor)
  } catch (error) {
    if (!(error instanceof AntlerError) || error.code !== 'request_validation_error') throw error
    const { reason = 'invalid' } = error.details as { reason?: string }
    throw new AntlerError('request_validation_error', { param: 'cursor', field, reason })
  }
}

/** A resend looks this far past the message's position before it gives up (forks drop and reorder little). */
const RESEND_SCAN = { messages: 100, ms: 3_000 }

/** The message `messageId` among the first messages from a position, or undefined. */
async function findMessage(
  source: MessageSource,
  from: MessagesFrom,
  messageId: string,
): Promise<DeliveryMessage | undefined> {
  const opened = await openDeliveryMessages(source, from)
  if ('refused' in opened) return undefined
  const timer = setTimeout(opened.close, RESEND_SCAN.ms)
  try {
    let seen = 0
    for await (const message of opened.messages) {
      if (message.id === messageId) return message
      if (++seen >= RESEND_SCAN.messages) return undefined
    }
    return undefined
  } finally {
    clearTimeout(timer)
    opened.close()
  }
}

/** The subscriptions of API keys: what `/v1/webhooks` does, with ownership checked on every call. */
export function createWebhookService(deps: WebhookServiceDeps) {
  const { store } = deps

  /** The owner's subscription, or webhook_not_found_error (another key's is not told apart from none). */
  async function owned(owner: string, id: string): Promise<WebhookRecord> {
    const record = await store.webhook(id)
    if (!record || record.ownerKeyId !== owner) throw new AntlerError('webhook_not_found_error', { id })
    return record
  }

  async function update(id: string, patch: WebhookPatch): Promise<WebhookRecord> {
    const updated = await store.updateWebhook(id, patch, deps.now())
    if (!updated) throw new AntlerError('webhook_not_found_error', { id })
    // A change restarts the subscription's worker, also one waiting out a retry delay at the same position.
    deps.notify(id)
    return updated
  }

  return {
    async create(owner: string, input: NewWebhook): Promise<WebhookRecord> {
      checkQuery(input.query)
      if (input.cursor !== undefined) checkCursor(deps.cursors, 'cursor', input.cursor)
      await deps.checkTarget(input.url)
      const now = deps.now()
      const head = (await store.position())?.head.blockNum ?? 0
      const record: WebhookRecord = {
        id: `wh_${randomBytes(12).toString('base64url')}`,
        ownerKeyId: owner,
        url: input.url,
        query: input.query,
        finality: input.finality ?? 'reversible',
        secret: newWebhookSecret(),
        paused: false,
        cursor: input.cursor ?? '',
        startBlock: input.startBlock ?? head + 1,
        createdAtMs: now,
        updatedAtMs: now,
      }
      // The store counts and inserts atomically: concurrent creates (two replicas) never pass the limit together.
      const limit = deps.limits.maxSubscriptionsPerKey
      if (!(await store.insertWebhook(record, limit)))
        throw new AntlerError('webhook_limit_exceeded_error', { kind: 'webhook subscriptions', limit })
      deps.notify()
      return record
    },

    list: (owner: string): Promise<WebhookRecord[]> => store.webhooksOf(owner),

    get: owned,

    async change(owner: string, id: string, changes: WebhookChanges): Promise<WebhookRecord> {
      await owned(owner, id)
      if (changes.query !== undefined) checkQuery(changes.query)
      if (changes.url !== undefined) await deps.checkTarget(changes.url)
      // Resuming clears a disabled state too: delivery goes on from the cursor, with no gap.
      const resume = changes.paused === false ? { disabled: null, failingSinceMs: null } : {}
      return update(id, { ...changes, ...resume })
    },

    async remove(owner: string, id: string): Promise<void> {
      await owned(owner, id)
      await store.deleteWebhook(id)
      deps.notify()
    },

    async rotateSecret(owner: string, id: string): Promise<string> {
      const record = await owned(owner, id)
      const secret = newWebhookSecret()
      await update(id, { secret, previousSecret: { secret: record.secret, untilMs: deps.now() + SECRET_GRACE_MS } })
      return secret
    },

    /** Delivers again from a cursor (after it) or from a block: the same messages, with the same ids. */
    async replay(owner: string, id: string, from: { cursor?: string; block?: number }): Promise<WebhookRecord> {
      await owned(owner, id)
      if (from.cursor !== undefined) checkCursor(deps.cursors, 'from_cursor', from.cursor)
      const position = from.cursor !== undefined ? { cursor: from.cursor } : { cursor: '', startBlock: from.block }
      return update(id, { ...position, failingSinceMs: null })
    },

    /** Sends a signed `webhook.test` message now, outside the subscription's order, and answers how it went. */
    async test(owner: string, id: string): Promise<{ messageId: string; outcome: DeliveryOutcome }> {
      const record = await owned(owner, id)
      const messageId = `msg_test_${randomBytes(12).toString('base64url')}`
      const at = new Date(deps.now()).toISOString()
      const body = messageBody('webhook.test', at, JSON.stringify({ webhook_id: id }))
      const outcome = await sendSigned(
        deps,
        record,
        { id: messageId, body, attempt: 1, after: '' },
        AbortSignal.timeout(20_000),
      )
      return { messageId, outcome }
    },

    /** Sends one message again (same id, a fresh signature), outside the subscription's order. */
    async resend(
      owner: string,
      id: string,
      messageId: string,
    ): Promise<{ messageId: string; outcome: DeliveryOutcome }> {
      const record = await owned(owner, id)
      const last = await store.lastWebhookAttempt(id, messageId)
      const found = last?.afterPosition
        ? await findMessage(deps.messages, { webhookId: id, ...record, ...fromPosition(last.afterPosition) }, messageId)
        : undefined
      if (!last || !found) throw new AntlerError('webhook_message_not_found_error', { id, message_id: messageId })
      const message = { id: messageId, body: found.body, attempt: last.attempt + 1, after: last.afterPosition }
      return { messageId, outcome: await sendSigned(deps, record, message, AbortSignal.timeout(20_000)) }
    },

    async attempts(
      owner: string,
      id: string,
      page: { limit: number; beforeMs?: number },
    ): Promise<WebhookAttemptRecord[]> {
      await owned(owner, id)
      return store.webhookAttempts(id, page)
    },
  }
}

export type WebhookService = ReturnType<typeof createWebhookService>
