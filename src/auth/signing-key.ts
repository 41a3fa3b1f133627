import { createECDH, createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto'
import { calculateJwkThumbprint, type JWK } from 'jose'

/** The order of P-256: a private scalar must lie in [1, n-1]. */
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n

/** The ES256 key pair tokens are signed with, and its public JWK for `/.well-known/jwks.json`. */
export interface SigningKey {
  readonly privateKey: KeyObject
  readonly publicKey: KeyObject
  readonly publicJwk: JWK & { kid: string; alg: 'ES256'; use: 'sig' }
}

const b64url = (bytes: Buffer) => bytes.toString('base64url')

/**
 * Derives the signing key from the store's 32-byte `jwt_signing_key` secret, so every process on
 * one store (API replicas, restarts) signs and verifies with the same key without a key file.
 */
export async function signingKeyFromSecret(secret: Uint8Array): Promise<SigningKey> {
  let d = Buffer.from(secret)
  // A 32-byte random value is a valid scalar except with probability ~2^-32; rehash until it is.
  while (BigInt(`0x${d.toString('hex')}`) === 0n || BigInt(`0x${d.toString('hex')}`) >= P256_ORDER)
    d = createHash('sha256').update(d).digest()
  const ecdh = createECDH('prime256v1')
  ecdh.setPrivateKey(d)
  const point = ecdh.getPublicKey()
  const publicJwk: JWK = {
    kty: 'EC',
    crv: 'P-256',
    x: b64url(point.subarray(1, 33)),
    y: b64url(point.subarray(33, 65)),
  }
  const privateKey = createPrivateKey({ key: { ...publicJwk, d: b64url(d) }, format: 'jwk' })
  const publicKey = createPublicKey({ key: publicJwk, format: 'jwk' })
  const kid = await calculateJwkThumbprint(publicJwk)
  return { privateKey, publicKey, publicJwk: { ...publicJwk, kid, alg: 'ES256', use: 'sig' } }
}
