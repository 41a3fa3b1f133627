import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

/** A random secret for a cookie, a CSRF token or the setup token: 32 bytes, base64url. */
export const randomToken = (): string => randomBytes(32).toString('base64url')

/** SHA-256 (hex) of a token: what the store keeps of session ids and the setup token. */
export const tokenHash = (token: string): string => createHash('sha256').update(token).digest('hex')

/** Compares two tokens in constant time (different lengths: false). */
export function sameToken(a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}
