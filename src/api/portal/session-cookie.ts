import type { FastifyReply, FastifyRequest } from 'fastify'

/** Host names that are this machine: browsers treat plain-HTTP pages on them as secure contexts. */
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]', '::1'])

/**
 * Whether the browser keeps a `Secure` (and `__Host-`) cookie for this request: over HTTPS, and on loopback even over
 * plain HTTP. Chromium drops such cookies on a LAN address over plain HTTP, so there the cookie goes without them.
 */
export function secureContext(request: FastifyRequest): boolean {
  return request.protocol === 'https' || LOOPBACK_HOSTS.has(request.hostname.toLowerCase())
}

/** The session cookie's name: `__Host-` (Secure, path /, no Domain) where the browser keeps it. */
export const sessionCookieName = (request: FastifyRequest): string =>
  secureContext(request) ? '__Host-antler_portal' : 'antler_portal'

/** The session id the request carries, if any. */
export function sessionCookie(request: FastifyRequest): string | undefined {
  const value = request.cookies[sessionCookieName(request)]
  return value && value.length <= 128 ? value : undefined
}

/** HttpOnly, SameSite=Strict, path /; Secure where the browser keeps it. A new id at every sign-in. */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, value: string, maxAgeMs: number): void {
  reply.setCookie(sessionCookieName(request), value, {
    httpOnly: true,
    sameSite: 'strict',
    path: '/',
    secure: secureContext(request),
    maxAge: Math.floor(maxAgeMs / 1000),
  })
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(sessionCookieName(request), {
    httpOnly: true,
    sameSite: 'strict',
    path: '/',
    secure: secureContext(request),
  })
}

/** The origin this request was addressed to (what a same-origin form's `Origin` header says). */
export const requestOrigin = (request: FastifyRequest): string => `${request.protocol}://${request.host}`
