import { createHmac, randomBytes } from 'node:crypto'

/** The prefix Standard Webhooks gives a secret: `whsec_` + base64 of the key bytes. */
const SECRET_PREFIX = 'whsec_'

/** A new signing secret: 32 random bytes, as Standard Webhooks writes them. */
export const newWebhookSecret = (): string => SECRET_PREFIX + randomBytes(32).toString('base64')

/** The key bytes of a secret (with or without its prefix). */
const keyOf = (secret: string): Buffer =>
  Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64')

/**
 * The `webhook-signature` header of a message: `v1,<base64 HMAC-SHA256 of id.timestamp.body>` for each secret, space
 * separated (a rotated subscription signs with the new secret and, during the grace period, the old one).
 */
export function signWebhook(secrets: readonly string[], id: string, timestampSeconds: number, body: string): string {
  const content = `${id}.${timestampSeconds}.${body}`
  return secrets.map((secret) => `v1,${createHmac('sha256', keyOf(secret)).update(content).digest('base64')}`).join(' ')
}
