import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AntlerError } from '../../antelope/index.ts'
import type { ApiKeyRecord, WebhookRecord } from '../../store/index.ts'
import type { WebhookService } from '../../webhooks/index.ts'
import { attemptView, webhookView } from '../routes/webhooks.ts'
import { frame, sendFormError, type PortalContext } from './context.ts'
import { PORTAL_ROUTE } from './guard.ts'
import { keyState } from './key-view.ts'
import { CreateWebhookBody, CsrfBody, ReplayWebhookBody, WebhookParams } from './schemas.ts'
import { sendPage } from './views.ts'

/** Attempts shown on a subscription's page. */
const ATTEMPTS_SHOWN = 50

/** A change of one subscription, made with the key that owns it. */
type WebhookChange = (webhooks: WebhookService, key: ApiKeyRecord, id: string) => Promise<unknown>

/** The block a replay form names: a whole number, 1 or more (shown again in the form otherwise). */
function replayBlock(text: string): number {
  const block = Number(text)
  if (!/^\d{1,10}$/.test(text.trim()) || block < 1)
    throw new AntlerError('request_validation_error', { errors: { from_block: ['must be a block number, 1 or more'] } })
  return block
}

/**
 * The portal's webhooks: the subscriptions of the account's keys (list, create with the secret shown once), one
 * subscription's page (state, recent attempts) with pause/resume, test and replay. Through the webhook service, as
 * `/v1/webhooks` is: the same checks (SSRF, query, limits) and errors.
 */
export const webhookRoutes: FastifyPluginAsyncTypebox<PortalContext> = async (app, context) => {
  const now = context.now ?? Date.now
  /** The webhook service; without one (a read-only store) every webhook page is 503. */
  const service = (): WebhookService => {
    if (context.webhooks) return context.webhooks
    throw new AntlerError('service_unavailable_error', {
      reason: 'webhooks need a writable store (see docs/WEBHOOKS.md)',
    })
  }

  const accountKeys = (request: FastifyRequest) => context.keys.listOf(request.portalSession!.account.id)

  /** The account's subscription with this id and its key: another account's (or none) is a 404, alike. */
  async function ownWebhook(
    request: FastifyRequest,
    id: string,
  ): Promise<{ record: WebhookRecord; key: ApiKeyRecord }> {
    const record = await context.store.webhook(id)
    const key = record && (await context.store.apiKeyById(record.ownerKeyId))
    if (!record || !key || key.accountId !== request.portalSession!.account.id)
      throw new AntlerError('webhook_not_found_error', { id })
    return { record, key }
  }

  async function listPage(request: FastifyRequest, webhooks: WebhookService, extra: object = {}) {
    const keys = await accountKeys(request)
    const rows = []
    for (const key of keys)
      for (const record of await webhooks.list(key.id)) rows.push({ ...webhookView(record), keyName: key.name })
    const usable = keys.filter((k) => !keyState(k, now()).revoked)
    return { ...frame(context, request, 'Webhooks', 'webhooks'), webhooks: rows, keys: usable, ...extra }
  }

  async function detailPage(request: FastifyRequest, webhooks: WebhookService, id: string, extra: object = {}) {
    const { record, key } = await ownWebhook(request, id)
    const attempts = await webhooks.attempts(key.id, id, { limit: ATTEMPTS_SHOWN })
    return {
      ...frame(context, request, 'Webhook', 'webhooks'),
      webhook: webhookView(record),
      keyName: key.name,
      attempts: attempts.map(attemptView),
      ...extra,
    }
  }

  app.get('/portal/webhooks', { config: PORTAL_ROUTE.page, schema: { hide: true } }, async (request, reply) =>
    sendPage(reply, './webhooks', await listPage(request, service())),
  )

  app.post(
    '/portal/webhooks',
    { config: PORTAL_ROUTE.action, schema: { body: CreateWebhookBody, hide: true } },
    async (request, reply) => {
      const webhooks = service()
      const body = request.body
      try {
        const key = (await accountKeys(request)).find((k) => k.id === body.key_id && !keyState(k, now()).revoked)
        if (!key) throw new AntlerError('portal_key_not_found_error', { id: body.key_id })
        const record = await webhooks.create(key.id, { url: body.url, query: body.query, finality: body.finality })
        await context.accounts.audit({
          accountId: key.accountId,
          action: 'webhook_create',
          ip: request.ip,
          keyId: key.id,
          detail: JSON.stringify({ webhook_id: record.id, url: record.url, query: record.query }),
        })
        return sendPage(reply, './webhook', {
          ...(await detailPage(request, webhooks, record.id)),
          secret: record.secret,
        })
      } catch (error) {
        return sendFormError(reply, './webhooks', await listPage(request, webhooks, { form: body }), error)
      }
    },
  )

  app.get(
    '/portal/webhooks/:id',
    { config: PORTAL_ROUTE.page, schema: { params: WebhookParams, hide: true } },
    async (request, reply) => sendPage(reply, './webhook', await detailPage(request, service(), request.params.id)),
  )

  /** A POST on one subscription: done through the service with the owning key, audited, then back to its page. */
  async function changeWebhook(
    request: FastifyRequest,
    reply: FastifyReply,
    id: string,
    action: 'pause' | 'resume' | 'test' | 'replay',
    work: WebhookChange,
  ): Promise<FastifyReply> {
    const webhooks = service()
    const { key } = await ownWebhook(request, id)
    try {
      const outcome = await work(webhooks, key, id)
      await context.accounts.audit({
        accountId: key.accountId,
        action: `webhook_${action}`,
        ip: request.ip,
        keyId: key.id,
        detail: JSON.stringify({ webhook_id: id }),
      })
      return action === 'test'
        ? sendPage(reply, './webhook', await detailPage(request, webhooks, id, { tested: outcome }))
        : reply.redirect(`/portal/webhooks/${id}`, 303)
    } catch (error) {
      return sendFormError(reply, './webhook', await detailPage(request, webhooks, id), error)
    }
  }

  const csrfOnly = { config: PORTAL_ROUTE.action, schema: { params: WebhookParams, body: CsrfBody, hide: true } }
  app.post('/portal/webhooks/:id/pause', csrfOnly, (request, reply) =>
    changeWebhook(request, reply, request.params.id, 'pause', (webhooks, key, id) =>
      webhooks.change(key.id, id, { paused: true }),
    ),
  )
  app.post('/portal/webhooks/:id/resume', csrfOnly, (request, reply) =>
    changeWebhook(request, reply, request.params.id, 'resume', (webhooks, key, id) =>
      webhooks.change(key.id, id, { paused: false }),
    ),
  )
  app.post('/portal/webhooks/:id/test', csrfOnly, (request, reply) =>
    changeWebhook(request, reply, request.params.id, 'test', async (webhooks, key, id) => {
      const { messageId, outcome } = await webhooks.test(key.id, id)
      return { messageId, ok: outcome.ok, status: outcome.status, error: outcome.ok ? null : outcome.error }
    }),
  )
  app.post(
    '/portal/webhooks/:id/replay',
    { config: PORTAL_ROUTE.action, schema: { params: WebhookParams, body: ReplayWebhookBody, hide: true } },
    (request, reply) =>
      changeWebhook(request, reply, request.params.id, 'replay', (webhooks, key, id) =>
        webhooks.replay(key.id, id, { block: replayBlock(request.body.from_block) }),
      ),
  )
}
