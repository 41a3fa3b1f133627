import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { hourOf, rowsByKey, USAGE_HISTORY_MS } from '../../accounts/index.ts'
import { frame, type PortalContext } from './context.ts'
import { PORTAL_ROUTE } from './guard.ts'
import { keyRow, usageRows } from './key-view.ts'
import { AuditQuery } from './schemas.ts'
import { formatTime, sendPage } from './views.ts'

const page = PORTAL_ROUTE.page

/** Audit entries per page. */
const AUDIT_PAGE = 100

/**
 * `/portal/usage`: every key of the account with its usage over 24 h, 7 d and 30 d (two reads whatever the number of
 * keys: the keys, then all their hourly rows at once); `/portal/audit`: the account's audit log, newest first, paged.
 */
export const usageRoutes: FastifyPluginAsyncTypebox<PortalContext> = async (app, context) => {
  const now = context.now ?? Date.now

  app.get('/portal/usage', { config: page, schema: { hide: true } }, async (request, reply) => {
    const keys = await context.keys.listOf(request.portalSession!.account.id)
    const rows = await context.store.keyUsage(
      keys.map((k) => k.id),
      hourOf(now()) - USAGE_HISTORY_MS,
    )
    const byKey = rowsByKey(rows)
    return sendPage(reply, './usage', {
      ...frame(context, request, 'Usage', 'usage'),
      keys: keys.map((key) => ({ ...keyRow(key, now()), usage: usageRows(byKey.get(key.id) ?? [], now()) })),
    })
  })

  app.get(
    '/portal/audit',
    { config: page, schema: { querystring: AuditQuery, hide: true } },
    async (request, reply) => {
      const { before } = request.query
      const entries = await context.store.auditEntries({
        accountId: request.portalSession!.account.id,
        limit: AUDIT_PAGE,
        ...(before === undefined ? {} : { beforeSeq: before }),
      })
      const last = entries.at(-1)?.seq
      return sendPage(reply, './audit', {
        ...frame(context, request, 'Audit log', 'audit'),
        entries: entries.map((e) => ({ ...e, at: formatTime(e.atMs) })),
        older: entries.length === AUDIT_PAGE && last !== undefined ? `/portal/audit?before=${last}` : undefined,
      })
    },
  )
}
