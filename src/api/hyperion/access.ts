import type { FastifyInstance } from 'fastify'
import type { AuthService } from '../../auth/index.ts'
import { rateHeaders } from '../plugins/auth.ts'

/**
 * Who may call Hyperion's routes. Public Hyperion endpoints need no key, so by default they are served without a
 * token and limited per client IP (`publicCallsPerIp`, 1,000 a minute like Hyperion's; `--rate-limits` changes it).
 * With `requireToken` (`--hyperion-auth token`) they are admitted like every dfuse route: a token in
 * `Authorization: Bearer` or `?token=`, counted per (key, IP).
 */
export function hyperionAccess(app: FastifyInstance, opts: { auth: AuthService; requireToken: boolean }): void {
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, public: !opts.requireToken }
  })
  if (opts.requireToken) return
  app.addHook('onRequest', async (request, reply) => {
    if (request.method === 'OPTIONS') return
    const decision = await opts.auth.admitPublic({ caller: { ip: request.ip, origin: request.headers.origin } })
    rateHeaders(reply, decision)
  })
}
