import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { WebhookAttemptRecord, WebhookRecord } from '../../store/index.ts'
import type { DeliveryOutcome, WebhookService } from '../../webhooks/index.ts'
import { RequestValidationError } from '../errors.ts'
import { errorResponses } from '../schemas.ts'

const Finality = Type.Union([Type.Literal('reversible'), Type.Literal('irreversible')])
const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL deliveries are POSTed to' })
const Query = Type.String({ minLength: 1, maxLength: 4096, description: 'the /v0/search/transactions language' })
const Cursor = Type.String({ minLength: 1, maxLength: 1000 })
const BlockNum = Type.Integer({ minimum: 1, maximum: 4294967295 })
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) })

const Webhook = Type.Object({
  id: Type.String(),
  url: Type.String(),
  query: Type.String(),
  finality: Finality,
  state: Type.Union([Type.Literal('active'), Type.Literal('paused'), Type.Literal('disabled')]),
  disabled_reason: Type.Union([Type.String(), Type.Null()]),
  cursor: Type.String({ description: "the last acknowledged message's cursor; empty before the first" }),
  start_block: Type.Integer({ description: 'where delivery began (before the first acknowledged message)' }),
  failing_since: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
})
const CreatedWebhook = Type.Intersect([Webhook, Type.Object({ secret: Type.String() })])

const Attempt = Type.Object({
  message_id: Type.String(),
  attempt: Type.Integer(),
  at: Type.String(),
  status: Type.Union([Type.Integer(), Type.Null()]),
  duration_ms: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()]),
  response_body: Type.Union([Type.String(), Type.Null()]),
})

/** How a message sent now (test, resend) went. */
const TestOutcome = Type.Object({
  message_id: Type.String(),
  ok: Type.Boolean(),
  status: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  duration_ms: Type.Integer(),
})

const outcomeView = ({ messageId, outcome }: { messageId: string; outcome: DeliveryOutcome }) => ({
  message_id: messageId,
  ok: outcome.ok,
  status: outcome.status,
  error: outcome.error,
  duration_ms: outcome.durationMs,
})

const iso = (ms: number) => new Date(ms).toISOString()

/** A subscription as the API answers it (the portal shows the same fields). */
export function webhookView(r: WebhookRecord) {
  return {
    id: r.id,
    url: r.url,
    query: r.query,
    finality: r.finality,
    state: r.disabled ? ('disabled' as const) : r.paused ? ('paused' as const) : ('active' as const),
    disabled_reason: r.disabled?.reason ?? null,
    cursor: r.cursor,
    start_block: r.startBlock,
    failing_since: r.failingSinceMs === undefined ? null : iso(r.failingSinceMs),
    created_at: iso(r.createdAtMs),
    updated_at: iso(r.updatedAtMs),
  }
}

/** An attempt as the API answers it (the portal shows the same fields). */
export const attemptView = (a: WebhookAttemptRecord) => ({
  message_id: a.messageId,
  attempt: a.attempt,
  at: iso(a.atMs),
  status: a.status,
  duration_ms: a.durationMs,
  error: a.error,
  response_body: a.responseBody,
})

/** The key that owns what a request touches ('' with --no-auth: one shared owner). */
const ownerOf = (request: FastifyRequest) => request.auth?.aki ?? ''

/**
 * `/v1/webhooks`: subscriptions of the calling API key (another key's answer 404), their secrets, replays, test
 * messages and delivery attempts. docs/WEBHOOKS.md describes the messages.
 */
export const webhookRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhookService }> = async (app, { webhooks }) => {
  app.post(
    '/v1/webhooks',
    {
      schema: {
        summary: 'Create a webhook subscription (its secret is returned once)',
        body: Type.Object(
          {
            url: Url,
            query: Query,
            finality: Type.Optional(Finality),
            start_block: Type.Optional(BlockNum),
            cursor: Type.Optional(Cursor),
          },
          { additionalProperties: false },
        ),
        response: { 201: CreatedWebhook, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { url, query, finality, start_block: startBlock, cursor } = request.body
      if (startBlock !== undefined && cursor !== undefined)
        throw RequestValidationError({ errors: { cursor: ['Give start_block or cursor, not both.'] } })
      const record = await webhooks.create(ownerOf(request), { url, query, finality, startBlock, cursor })
      reply.code(201).header('cache-control', 'no-store')
      return { ...webhookView(record), secret: record.secret }
    },
  )

  app.get(
    '/v1/webhooks',
    {
      schema: {
        summary: "The calling key's subscriptions",
        response: { 200: Type.Object({ webhooks: Type.Array(Webhook) }), ...errorResponses },
      },
    },
    async (request) => ({ webhooks: (await webhooks.list(ownerOf(request))).map(webhookView) }),
  )

  app.get(
    '/v1/webhooks/:id',
    { schema: { summary: 'One subscription', params: IdParams, response: { 200: Webhook, ...errorResponses } } },
    async (request) => webhookView(await webhooks.get(ownerOf(request), request.params.id)),
  )

  app.patch(
    '/v1/webhooks/:id',
    {
      schema: {
        summary: 'Pause, resume (also re-enables a disabled subscription), change the URL or the query',
        params: IdParams,
        body: Type.Object(
          { paused: Type.Optional(Type.Boolean()), url: Type.Optional(Url), query: Type.Optional(Query) },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: Webhook, ...errorResponses },
      },
    },
    async (request) => webhookView(await webhooks.change(ownerOf(request), request.params.id, request.body)),
  )

  app.delete(
    '/v1/webhooks/:id',
    {
      schema: {
        summary: 'Delete a subscription and its attempts',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await webhooks.remove(ownerOf(request), request.params.id)
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/v1/webhooks/:id/rotate-secret',
    {
      schema: {
        summary: 'A new signing secret (returned once); the old one also signs for 24 h',
        params: IdParams,
        response: { 200: Type.Object({ secret: Type.String() }), ...errorResponses },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store')
      return { secret: await webhooks.rotateSecret(ownerOf(request), request.params.id) }
    },
  )

  app.post(
    '/v1/webhooks/:id/replay',
    {
      schema: {
        summary: 'Deliver again after a cursor or from a block (the same messages, with the same ids)',
        params: IdParams,
        body: Type.Object(
          { from_cursor: Type.Optional(Cursor), from_block: Type.Optional(BlockNum) },
          { additionalProperties: false },
        ),
        response: { 200: Webhook, ...errorResponses },
      },
    },
    async (request) => {
      const { from_cursor: cursor, from_block: block } = request.body
      if ((cursor === undefined) === (block === undefined))
        throw RequestValidationError({ errors: { from_cursor: ['Give exactly one of from_cursor and from_block.'] } })
      return webhookView(await webhooks.replay(ownerOf(request), request.params.id, { cursor, block }))
    },
  )

  app.post(
    '/v1/webhooks/:id/test',
    {
      schema: {
        summary: 'Send a signed webhook.test message now and answer how the endpoint took it',
        params: IdParams,
        response: { 200: TestOutcome, ...errorResponses },
      },
    },
    async (request) => outcomeView(await webhooks.test(ownerOf(request), request.params.id)),
  )

  app.post(
    '/v1/webhooks/:id/messages/:message_id/resend',
    {
      schema: {
        summary: 'Send one message again (same webhook-id, new signature), found from its last attempt',
        params: Type.Object({
          id: Type.String({ minLength: 1, maxLength: 100 }),
          message_id: Type.String({ minLength: 1, maxLength: 100 }),
        }),
        response: { 200: TestOutcome, ...errorResponses },
      },
    },
    async (request) => {
      const { id, message_id: messageId } = request.params
      return outcomeView(await webhooks.resend(ownerOf(request), id, messageId))
    },
  )

  app.get(
    '/v1/webhooks/:id/attempts',
    {
      schema: {
        summary: 'Delivery attempts, newest first (kept 7 days); page with before = the last at of a page',
        params: IdParams,
        querystring: Type.Object({
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
          before: Type.Optional(Type.String({ format: 'date-time', maxLength: 40 })),
        }),
        response: { 200: Type.Object({ attempts: Type.Array(Attempt) }), ...errorResponses },
      },
    },
    async (request) => {
      const { limit = 100, before } = request.query
      const beforeMs = before === undefined ? undefined : Date.parse(before)
      if (beforeMs !== undefined && !Number.isFinite(beforeMs))
        throw RequestValidationError({ errors: { before: ['The before field must be a date-time such as at gives.'] } })
      const page = await webhooks.attempts(ownerOf(request), request.params.id, { limit, beforeMs })
      return { attempts: page.map(attemptView) }
    },
  )
}
