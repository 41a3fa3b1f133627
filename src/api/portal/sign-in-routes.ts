import { rm } from 'node:fs/promises'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { SESSION_TTL_MS } from '../../accounts/index.ts'
import { frame, sendFormError, type PortalContext } from './context.ts'
import { PORTAL_ROUTE } from './guard.ts'
import { CsrfBody, SetupBody, SignInBody } from './schemas.ts'
import { clearSessionCookie, sessionCookie, setSessionCookie } from './session-cookie.ts'
import { sendPage } from './views.ts'

const open = PORTAL_ROUTE.open

/** `/portal` (where to go), `/portal/setup` (the first account, with the setup token), sign-in and sign-out. */
export const signInRoutes: FastifyPluginAsyncTypebox<PortalContext> = async (app, context) => {
  const setupPending = async () => (await context.store.accountCount()) === 0 && (await context.store.hasSetupToken())

  app.get('/portal', { config: open, schema: { hide: true } }, async (request, reply) => {
    const signedIn = await context.accounts.sessionOf(sessionCookie(request))
    if (signedIn) return reply.redirect('/portal/keys', 303)
    return reply.redirect((await setupPending()) ? '/portal/setup' : '/portal/login', 303)
  })

  app.get('/portal/setup', { config: open, schema: { hide: true } }, async (request, reply) => {
    if (!(await setupPending())) return reply.redirect('/portal/login', 303)
    return sendPage(reply, './setup', frame(context, request, 'Set up'))
  })
  app.post('/portal/setup', { config: open, schema: { body: SetupBody, hide: true } }, async (request, reply) => {
    const { token, login, password } = request.body
    try {
      const started = await context.accounts.setUp({ token: token.trim(), login, password, ip: request.ip })
      // The spent token is worthless, but no reason to leave it lying in the data dir.
      if (context.setupFile) await rm(context.setupFile, { force: true })
      setSessionCookie(request, reply, started.cookie, SESSION_TTL_MS)
      return reply.redirect('/portal/keys', 303)
    } catch (error) {
      return sendFormError(reply, './setup', { ...frame(context, request, 'Set up'), login }, error)
    }
  })

  app.get('/portal/login', { config: open, schema: { hide: true } }, async (request, reply) =>
    sendPage(reply, './login', { ...frame(context, request, 'Sign in'), setupPending: await setupPending() }),
  )
  app.post('/portal/login', { config: open, schema: { body: SignInBody, hide: true } }, async (request, reply) => {
    const { login, password } = request.body
    try {
      const started = await context.accounts.signIn({ login, password, ip: request.ip })
      setSessionCookie(request, reply, started.cookie, SESSION_TTL_MS)
      return reply.redirect('/portal/keys', 303)
    } catch (error) {
      return sendFormError(reply, './login', { ...frame(context, request, 'Sign in'), login }, error)
    }
  })

  // Ends the session on the server (its row is deleted), then the cookie.
  app.post(
    '/portal/logout',
    { config: PORTAL_ROUTE.action, schema: { body: CsrfBody, hide: true } },
    async (request, reply) => {
      await context.accounts.signOut(sessionCookie(request) ?? '', request.ip)
      clearSessionCookie(request, reply)
      return reply.redirect('/portal/login', 303)
    },
  )
}
