import type { FastifyReply, FastifyRequest } from 'fastify'
import { AntlerError } from '../../antelope/index.ts'
import { sameToken, type AccountsService, type ActiveSession } from '../../accounts/index.ts'
import { requestOrigin, sessionCookie } from './session-cookie.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * A portal route: `page` needs a session (without one: sent to sign in), `data` a session (JSON for the page's
     * script: 401 without one), `action` a session and its CSRF token.
     */
    portal?: 'open' | 'page' | 'data' | 'action'
  }
  interface FastifyRequest {
    /** The portal session of a `page` or `action` route. */
    portalSession?: ActiveSession
  }
}

/** The route config of each kind of portal route (public to the API's auth: the portal checks its own session). */
export const PORTAL_ROUTE = {
  open: { public: true, portal: 'open' },
  page: { public: true, portal: 'page' },
  data: { public: true, portal: 'data' },
  action: { public: true, portal: 'action' },
} as const

/** Where a page sends a visitor without a session. */
export const SIGN_IN_PATH = '/portal/login'

/**
 * A form posted from another site carries that site's Origin: refused before anything else. (Chromium sends no
 * Sec-Fetch-Site on a LAN address over plain HTTP, but it does send Origin on every POST.)
 */
export function checkSameOrigin(request: FastifyRequest): void {
  const origin = request.headers.origin
  if (
    request.method !== 'GET' &&
    request.method !== 'HEAD' &&
    origin !== undefined &&
    origin !== requestOrigin(request)
  )
    throw new AntlerError('portal_csrf_error', { reason: 'cross-origin request' })
}

/**
 * The portal's preHandler: every route refuses a cross-origin state change; `page` and `action` routes need a live
 * session (a page without one redirects to sign in); `action` routes need the session's CSRF token in the form's
 * `_csrf` field or the `X-CSRF-Token` header.
 */
export function portalGuard(accounts: AccountsService) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    checkSameOrigin(request)
    const kind = request.routeOptions.config.portal ?? 'open'
    if (kind === 'open') return
    const active = await accounts.sessionOf(sessionCookie(request))
    if (!active) {
      if (kind === 'page') return reply.redirect(SIGN_IN_PATH, 303)
      throw new AntlerError('portal_session_required_error', {})
    }
    if (kind === 'action') {
      const body = request.body as { _csrf?: unknown } | undefined
      const header = request.headers['x-csrf-token']
      const presented = typeof body?._csrf === 'string' ? body._csrf : typeof header === 'string' ? header : ''
      if (!sameToken(presented, active.session.csrfToken))
        throw new AntlerError('portal_csrf_error', { reason: 'missing or wrong CSRF token' })
    }
    request.portalSession = active
  }
}
