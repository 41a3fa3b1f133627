import helmet from '@fastify/helmet'
import type { FastifyInstance } from 'fastify'

/**
 * The portal's policy: scripts, styles, images and requests from this origin only (no inline script, no eval), no
 * plugins, no <base>, never framed, forms posted only here. No `upgrade-insecure-requests` (the portal may run on
 * plain HTTP on a LAN) and HSTS only over HTTPS.
 */
export const PORTAL_CSP_DIRECTIVES = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  fontSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'none'"],
  frameAncestors: ["'none'"],
  formAction: ["'self'"],
}

/** Registers the portal's security headers on its scope (helmet), and HSTS on HTTPS requests only. */
export async function portalSecurityHeaders(app: FastifyInstance): Promise<void> {
  await app.register(helmet, {
    contentSecurityPolicy: { useDefaults: false, directives: PORTAL_CSP_DIRECTIVES },
    hsts: false,
    referrerPolicy: { policy: 'same-origin' },
    crossOriginEmbedderPolicy: false,
    frameguard: { action: 'deny' },
  })
  app.addHook('onSend', async (request, reply) => {
    if (request.protocol === 'https') reply.header('Strict-Transport-Security', 'max-age=31536000')
  })
}
