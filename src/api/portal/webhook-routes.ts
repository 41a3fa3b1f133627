import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { Type } from '@fastify/type-provider-typebox'
import { AntlerError } from '../../antelope/index.ts'
import type { ApiKeyRecord, WebhookFinality, WebhookRecord } from '../../store/index.ts'
import type { WebhookService } from '../../webhooks/index.ts'
import { attemptView, webhookView } from '../routes/webhooks.ts'
import { frame, sendFormError, type PortalContext } from './context.ts'
import { keyState } from './key-view.ts'
import { sendPage } from './views.ts'

const page = { public: true, portal: 'page' as const }
const action = { public: true, portal: 'action' as const }
const Csrf = { _csrf: Type.Optional(Type.String({ maxLength: 256 })) }
const WebhookParams = Type.Object({ id: Type.String({ maxLength: 64 }) })
const CreateBody = Type.Object({
  ...Csrf,
  key_id: Type.String({ maxLength: 64 }),
  url: Type.String({ maxLength: 2048 }),
  query: Type.String({ maxLength: 4096 }),
  finality: Type.Union([Type.Literal('reversible'), Type.Literal('irreversible')]),
})
const CsrfBody = Type.Object(Csrf)
const ReplayBody = Type.Object({ ...Csrf, from_block: Type.String({ maxLength: 12 }) })

/** Attempts shown on a subscription's page. */
const ATTEMPTS_SHOWN = 50

/**
 * The portal's webhooks: the subscriptions of the account's keys (list, create with the secret shown once), one
 * subscription's page (state, recent attempts) with pause/resume, test and replay. Through the webhook service, as
 * `/v1/webhooks` is: the same checks (SSRF, query, limits) and errors.
 */
export const webhookRoutes: FastifyPluginAsync<PortalContext> = async (app, context) => {
  const now = context.now ?? Date.now
  const service = context.webhooks
  const unavailable = () =>
    new AntlerError('service_unavailable_error', { reason: 'webhooks need a writable store (see docs/WEBHOOKS.md)' })

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

  app.get('/portal/webhooks', { config: page, schema: { hide: true } }, async (request, reply) => {
    if (!service) throw unavailable()
    return sendPage(reply, './webhooks', await listPage(request, service))
  })

  app.post('/portal/webhooks', { config: action, schema: { body: CreateBody, hide: true } }, async (request, reply) => {
    if (!service) throw unavailable()
    const body = request.body as { key_id: string; url: string; query: string; finality: WebhookFinality }
    try {
      const key = (await accountKeys(request)).find((k) => k.id === body.key_id && !keyState(k, now()).revoked)
      if (!key) throw new AntlerError('portal_key_not_found_error', { id: body.key_id })
      const record = await service.create(key.id, { url: body.url, query: body.query, finality: body.finality })
      await context.accounts.audit({
        accountId: key.accountId,
        action: 'webhook_create',
        ip: request.ip,
        keyId: key.id,
        detail: JSON.stringify({ webhook_id: record.id, url: record.url, query: record.query }),
      })
      return sendPage(reply, './webhook', {
        ...(await detailPage(request, service, record.id)),
        secret: record.secret,
      })
    } catch (error) {
      return sendFormError(reply, './webhooks', await listPage(request, service, { form: body }), error)
    }
  })

  app.get(
    '/portal/webhooks/:id',
    { config: page, schema: { params: WebhookParams, hide: true } },
    async (request, reply) => {
      if (!service) throw unavailable()
      return sendPage(reply, './webhook', await detailPage(request, service, (request.params as { id: string }).id))
    },
  )

  /** A POST on one subscription: done through the service with the owning key, audited, then back to its page. */
  const change = (
    path: string,
    body: typeof CsrfBody | typeof ReplayBody,
    work: (webhooks: WebhookService, key: ApiKeyRecord, id: string, body: Record<string, string>) => Promise<unknown>,
  ) =>
    app.post(
      `/portal/webhooks/:id/${path}`,
      { config: action, schema: { params: WebhookParams, body, hide: true } },
      async (request, reply) => {
        if (!service) throw unavailable()
        const id = (request.params as { id: string }).id
        const { key } = await ownWebhook(request, id)
        try {
          const outcome = await work(service, key, id, request.body as Record<string, string>)
          await context.accounts.audit({
            accountId: key.accountId,
            action: `webhook_${path}`,
            ip: request.ip,
            keyId: key.id,
            detail: JSON.stringify({ webhook_id: id }),
          })
          return path === 'test'
            ? sendPage(reply, './webhook', await detailPage(request, service, id, { tested: outcome }))
            : reply.redirect(`/portal/webhooks/${id}`, 303)
        } catch (error) {
          return sendFormError(reply, './webhook', await detailPage(request, service, id), error)
        }
      },
    )

  change('pause', CsrfBody, (webhooks, key, id) => webhooks.change(key.id, id, { paused: true }))
  change('resume', CsrfBody, (webhooks, key, id) => webhooks.change(key.id, id, { paused: false }))
  change('test', CsrfBody, async (webhooks, key, id) => {
    const { messageId, outcome } = await webhooks.test(key.id, id)
    return { messageId, ok: outcome.ok, status: outcome.status, error: outcome.ok ? null : outcome.error }
  })
  change('replay', ReplayBody, (webhooks, key, id, body) => {
    const block = Number(body.from_block)
    if (!/^\d{1,10}$/.test(body.from_block.trim()) || block < 1)
      throw new AntlerError('request_validation_error', {
        errors: { from_block: ['must be a block number, 1 or more'] },
      })
    return webhooks.replay(key.id, id, { block })
  })
}
