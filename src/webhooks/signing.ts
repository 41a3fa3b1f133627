import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto'

/** The prefix Standard Webhooks gives a secret: `whsec_` + base64 of the key bytes. */
const SECRET_PREFIX = 'whsec_'

/** A new signing secret: 32 random bytes, as Standard Webhooks writes them. */
export const newWebhookSecret = (): string => SECRET_PREFIX + randomBytes(32).toString('base64')

/** The key bytes of a secret (with or without its prefix). */
const keyOf = (secret: string): Buffer =>
  Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64')

/** Signs a message for a subscription's secrets: the `webhook-signature` header. */
export type WebhookSigner = (secrets: readonly string[], id: string, timestampSeconds: number, body: string) => string

/**
 * `v1,<base64 HMAC-SHA256 of id.timestamp.body>` for each secret, space separated (a rotated subscription signs with
 * the new secret and, during the grace period, the old one), each secret's key from `key`.
 */
const signerWith =
  (key: (secret: string) => Buffer | KeyObject): WebhookSigner =>
  (secrets, id, timestampSeconds, body) => {
    const content = `${id}.${timestampSeconds}.${body}`
    return secrets.map((secret) => `v1,${createHmac('sha256', key(secret)).update(content).digest('base64')}`).join(' ')
  }

/** The `webhook-signature` header of a message, its keys decoded for this call. */
export const signWebhook: WebhookSigner = signerWith(keyOf)

/** Keys kept by a signer before it forgets them all (a subscription's key is asked for on every delivery). */
const SIGNER_KEYS = 10_000

/** A signer that decodes each secret's key once (the dispatcher signs thousands of messages a second). */
export function createWebhookSigner(): WebhookSigner {
  const keys = new Map<string, KeyObject>()
  return signerWith((secret) => {
    let key = keys.get(secret)
    if (!key) {
      if (keys.size >= SIGNER_KEYS) keys.clear()
      keys.set(secret, (key = createSecretKey(keyOf(secret))))
    }
    return key
  })
}
