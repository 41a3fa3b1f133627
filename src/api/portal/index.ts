import cookie from '@fastify/cookie'
import formbody from '@fastify/formbody'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorHandlerWith } from '../plugins/errors.ts'
import { servePortalAssets } from './assets.ts'
import { renderPortalError, type PortalContext, type PortalServices } from './context.ts'
import { portalGuard } from './guard.ts'
import { keyRoutes } from './key-routes.ts'
import { usageRoutes } from './usage-routes.ts'
import { webhookRoutes } from './webhook-routes.ts'
import { portalSecurityHeaders } from './security-headers.ts'
import { signInRoutes } from './sign-in-routes.ts'

export type { PortalServices } from './context.ts'

/** Largest form the portal accepts (a key's origins are the longest field). */
const FORM_LIMIT_BYTES = 16 * 1024

/**
 * The management portal at `/portal`: server-rendered pages (Eta) for account holders, signed in with a session cookie;
 * every state change is a POST carrying the session's CSRF token. Errors go the app's one way (plugins/errors.ts
 * decides status, log line, headers and trace id); the portal only shows them: a page for a browser, the standard
 * error object for the page's own JSON requests. Its own scope: its cookies, form parser, security headers and error
 * pages apply to nothing else. Every request's fields are its route's schema (schemas.ts).
 */
export const portalRoutes: FastifyPluginAsyncTypebox<PortalServices> = async (app, services) => {
  await app.register(cookie)
  await app.register(formbody, { bodyLimit: FORM_LIMIT_BYTES })
  await portalSecurityHeaders(app)
  const context: PortalContext = { ...services, assets: await servePortalAssets(app) }
  app.addHook('preValidation', portalGuard(services.accounts))
  app.setErrorHandler(errorHandlerWith(renderPortalError(context)))
  await app.register(signInRoutes, context)
  await app.register(keyRoutes, context)
  await app.register(usageRoutes, context)
  await app.register(webhookRoutes, context)
}
