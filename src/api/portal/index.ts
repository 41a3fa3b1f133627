import cookie from '@fastify/cookie'
import formbody from '@fastify/formbody'
import type { FastifyError, FastifyPluginAsync } from 'fastify'
import { sendError } from '../plugins/errors.ts'
import { toAntlerError } from '../wire-error.ts'
import { servePortalAssets } from './assets.ts'
import { frame, type PortalContext, type PortalServices } from './context.ts'
import { portalGuard } from './guard.ts'
import { keyRoutes } from './key-routes.ts'
import { usageRoutes } from './usage-routes.ts'
import { webhookRoutes } from './webhook-routes.ts'
import { portalSecurityHeaders } from './security-headers.ts'
import { signInRoutes } from './sign-in-routes.ts'
import { sendPage } from './views.ts'

export type { PortalServices } from './context.ts'

/** Largest form the portal accepts (a key's origins are the longest field). */
const FORM_LIMIT_BYTES = 16 * 1024

/**
 * The management portal at `/portal`: server-rendered pages (Eta) for account holders, signed in with a session cookie;
 * every state change is a POST carrying the session's CSRF token. Errors are pages for a browser, the standard error
 * object for the page's own JSON requests. Its own scope: its cookies, form parser, security headers and error pages
 * apply to nothing else.
 */
export const portalRoutes: FastifyPluginAsync<PortalServices> = async (app, services) => {
  await app.register(cookie)
  await app.register(formbody, { bodyLimit: FORM_LIMIT_BYTES })
  await portalSecurityHeaders(app)
  const context: PortalContext = { ...services, assets: await servePortalAssets(app) }
  app.addHook('preValidation', portalGuard(services.accounts))
  app.setErrorHandler((thrown: FastifyError, request, reply) => {
    const wantsPage = request.method !== 'GET' || !request.url.endsWith('.json')
    if (!wantsPage) return sendError(request, reply, thrown)
    const { error, unexpected } = toAntlerError(thrown, {})
    if (unexpected) request.log.error({ err: thrown }, 'unexpected error')
    reply.failure = error
    const retryAfter = error.details.retry_after_seconds
    if (typeof retryAfter === 'number') reply.header('retry-after', String(retryAfter))
    reply.header('x-trace-id', String(request.id))
    return sendPage(
      reply,
      './error',
      {
        ...frame(context, request, error.status === 404 ? 'Not found' : 'Refused'),
        error: { message: error.message, code: error.code },
        traceId: String(request.id),
      },
      error.status,
    )
  })
  await app.register(signInRoutes, context)
  await app.register(keyRoutes, context)
  await app.register(usageRoutes, context)
  await app.register(webhookRoutes, context)
}
