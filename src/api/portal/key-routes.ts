import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AntlerError } from '../../antelope/index.ts'
import { hourOf, USAGE_HISTORY_MS } from '../../accounts/index.ts'
import type { ApiKeyLimits, ApiKeyRecord } from '../../store/index.ts'
import { frame, sendFormError, type PortalContext } from './context.ts'
import { PORTAL_ROUTE } from './guard.ts'
import { keyRow, keyState, usageRows } from './key-view.ts'
import { CreateKeyBody, EditKeyBody, KeyParams, RevokeKeyBody, RotateKeyBody } from './schemas.ts'
import { formatTime, sendPage } from './views.ts'

/** One origin per line (or separated by spaces or commas); blank lines dropped. */
const originList = (text: string | undefined): string[] =>
  (text ?? '')
    .split(/[\s,]+/)
    .map((o) => o.trim())
    .filter(Boolean)

/** A limit field: empty is no override; anything else must be a whole number (checked by the key service). */
function limitField(field: string, text: string | undefined): number | undefined {
  const trimmed = (text ?? '').trim()
  if (trimmed === '') return undefined
  if (!/^\d{1,9}$/.test(trimmed))
    throw new AntlerError('request_validation_error', { errors: { [field]: ['must be a whole number'] } })
  return Number(trimmed)
}

/** The portal's key pages: list and create, one key's page (usage, edit, rotate, revoke), its usage as JSON. */
export const keyRoutes: FastifyPluginAsyncTypebox<PortalContext> = async (app, context) => {
  const now = context.now ?? Date.now

  /** The signed-in account's key with this id: another account's key (or none) is a 404, the same for both. */
  async function ownKey(request: FastifyRequest, id: string): Promise<ApiKeyRecord> {
    const key = await context.store.apiKeyById(id)
    if (!key || key.accountId !== request.portalSession?.account.id)
      throw new AntlerError('portal_key_not_found_error', { id })
    return key
  }

  async function keysPage(request: FastifyRequest, reply: FastifyReply, extra: Record<string, unknown> = {}) {
    const keys = await context.keys.listOf(request.portalSession!.account.id)
    return { ...frame(context, request, 'API keys', 'keys'), keys: keys.map((k) => keyRow(k, now())), ...extra }
  }

  async function keyPage(request: FastifyRequest, key: ApiKeyRecord) {
    const rows = await context.store.keyUsage([key.id], hourOf(now()) - USAGE_HISTORY_MS)
    const limits = context.limits
    return {
      ...frame(context, request, `Key ${key.name}`, 'keys'),
      key,
      view: keyRow(key, now()),
      usage: usageRows(rows, now()),
      defaults: { calls: limits.callsPerIp[key.type].limit, tokens: limits.issuancePerKey[key.type].limit },
    }
  }

  app.get('/portal/keys', { config: PORTAL_ROUTE.page, schema: { hide: true } }, async (request, reply) =>
    sendPage(reply, './keys', await keysPage(request, reply)),
  )

  app.post(
    '/portal/keys',
    { config: PORTAL_ROUTE.action, schema: { body: CreateKeyBody, hide: true } },
    async (request, reply) => {
      const body = request.body
      const account = request.portalSession!.account
      try {
        const origins = originList(body.origins)
        if (body.type === 'web' && origins.length === 0)
          throw new AntlerError('request_validation_error', {
            errors: { origins: ['a web key needs at least one origin'] },
          })
        const created = await context.keys.create({ type: body.type, name: body.name, origins, accountId: account.id })
        await context.accounts.audit({
          accountId: account.id,
          action: 'key_create',
          ip: request.ip,
          keyId: created.record.id,
          detail: JSON.stringify({
            name: created.record.name,
            type: created.record.type,
            origins: created.record.origins,
          }),
        })
        return sendPage(reply, './key-created', {
          ...frame(context, request, 'Key created', 'keys'),
          heading: 'Key created',
          key: created.record,
          secret: created.key,
        })
      } catch (error) {
        return sendFormError(reply, './keys', await keysPage(request, reply, { form: body }), error)
      }
    },
  )

  app.get(
    '/portal/keys/:id',
    { config: PORTAL_ROUTE.page, schema: { params: KeyParams, hide: true } },
    async (request, reply) =>
      sendPage(reply, './key', await keyPage(request, await ownKey(request, request.params.id))),
  )

  app.post(
    '/portal/keys/:id',
    { config: PORTAL_ROUTE.action, schema: { params: KeyParams, body: EditKeyBody, hide: true } },
    async (request, reply) => {
      const key = await ownKey(request, request.params.id)
      const body = request.body
      try {
        const callsPerMinute = limitField('callsPerMinute', body.callsPerMinute)
        const tokensPerHour = limitField('tokensPerHour', body.tokensPerHour)
        const limits: ApiKeyLimits = {
          ...(callsPerMinute === undefined ? {} : { callsPerMinute }),
          ...(tokensPerHour === undefined ? {} : { tokensPerHour }),
        }
        const origins = key.type === 'web' ? originList(body.origins) : undefined
        if (origins?.length === 0)
          throw new AntlerError('request_validation_error', {
            errors: { origins: ['a web key needs at least one origin'] },
          })
        const updated = await context.keys.update(key.id, {
          name: body.name,
          ...(origins ? { origins } : {}),
          limits: Object.keys(limits).length > 0 ? limits : null,
        })
        await context.accounts.audit({
          accountId: key.accountId,
          action: 'key_edit',
          ip: request.ip,
          keyId: key.id,
          detail: JSON.stringify({ name: updated?.name, origins: updated?.origins, limits: updated?.limits ?? null }),
        })
        return reply.redirect(`/portal/keys/${key.id}`, 303)
      } catch (error) {
        return sendFormError(reply, './key', await keyPage(request, key), error)
      }
    },
  )

  app.post(
    '/portal/keys/:id/rotate',
    { config: PORTAL_ROUTE.action, schema: { params: KeyParams, body: RotateKeyBody, hide: true } },
    async (request, reply) => {
      const key = await ownKey(request, request.params.id)
      const graceSeconds = Number(request.body.grace)
      const rotated = await context.keys.rotate(key.id, graceSeconds * 1000)
      if (graceSeconds === 0) await context.refreshRevocations()
      await context.accounts.audit({
        accountId: key.accountId,
        action: 'key_rotate',
        ip: request.ip,
        keyId: key.id,
        detail: JSON.stringify({ new_key_id: rotated.record.id, grace_seconds: graceSeconds }),
      })
      const until = rotated.previous.revokedAtMs ?? now()
      return sendPage(reply, './key-created', {
        ...frame(context, request, 'Key rotated', 'keys'),
        heading: 'Key rotated',
        key: rotated.record,
        secret: rotated.key,
        previous: {
          prefix: rotated.previous.prefix ?? key.type,
          until: until <= now() ? 'stopped working now' : `works until ${formatTime(until)}`,
        },
      })
    },
  )

  app.post(
    '/portal/keys/:id/revoke',
    { config: PORTAL_ROUTE.action, schema: { params: KeyParams, body: RevokeKeyBody, hide: true } },
    async (request, reply) => {
      const key = await ownKey(request, request.params.id)
      if (!keyState(key, now()).revoked) {
        await context.keys.revoke(key.id)
        await context.refreshRevocations()
        await context.accounts.audit({
          accountId: key.accountId,
          action: 'key_revoke',
          ip: request.ip,
          keyId: key.id,
          detail: JSON.stringify({ name: key.name }),
        })
      }
      return reply.redirect('/portal/keys', 303)
    },
  )

  // The key page's chart: requests per hour over the last 7 days, by outcome (JSON, the standard error on failure).
  app.get(
    '/portal/keys/:id/usage.json',
    { config: PORTAL_ROUTE.data, schema: { params: KeyParams, hide: true } },
    async (request) => {
      const key = await ownKey(request, request.params.id)
      const since = hourOf(now()) - 7 * 24 * 3_600_000
      const rows = await context.store.keyUsage([key.id], since)
      return {
        key_id: key.id,
        hours: rows.map((r) => ({
          hour: r.hourMs / 1000,
          ok: r.ok,
          client_errors: r.clientErrors,
          auth_failures: r.authFailures,
          rate_limited: r.rateLimited,
          documents: r.documents,
        })),
      }
    },
  )
}
