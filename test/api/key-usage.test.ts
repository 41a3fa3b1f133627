import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyReply } from 'fastify'
import { AntlerError } from '../../src/antelope/index.ts'
import {
  AuthInvalidTokenError,
  AuthOriginNotAllowedError,
  RateLimitExceededError,
  refusedKeyId,
} from '../../src/auth/index.ts'
import { usageOutcome } from '../../src/api/plugins/key-usage.ts'

/*
 * How a key's usage counts a response (usageOutcome): 2xx and 3xx ok, 429 rate limited, 5xx not counted, a 4xx with
 * an `auth_*` code an auth failure, any other 4xx a client error. The reply is a minimal stand-in: the status code and
 * the failure the errors plugin sets.
 */

const TIMEOUT = { timeout: 10_000 }

const reply = (statusCode: number, failure?: AntlerError): FastifyReply =>
  ({ statusCode, failure }) as unknown as FastifyReply

test('usageOutcome: 2xx and 3xx are ok; 429 rate limited; 5xx not counted', TIMEOUT, () => {
  assert.equal(usageOutcome(reply(200)), 'ok')
  assert.equal(usageOutcome(reply(204)), 'ok')
  assert.equal(usageOutcome(reply(302)), 'ok')
  assert.equal(usageOutcome(reply(304)), 'ok')
  const limited = RateLimitExceededError({ scope: 'calls per IP for this key', limit: 3, retryAfterSeconds: 20 })
  assert.equal(limited.status, 429)
  assert.equal(usageOutcome(reply(429, limited)), 'rateLimited')
  assert.equal(usageOutcome(reply(429)), 'rateLimited', 'whatever set the 429')
  const unavailable = new AntlerError('chain_unavailable_error', { reason: 'down' })
  assert.equal(usageOutcome(reply(unavailable.status, unavailable)), undefined, `a ${unavailable.status}`)
  assert.equal(usageOutcome(reply(500)), undefined)
  assert.equal(usageOutcome(reply(503)), undefined)
})

test('usageOutcome: a 4xx with an auth_* code is an auth failure, any other 4xx a client error', TIMEOUT, () => {
  const invalidToken = Object.assign(AuthInvalidTokenError({ reason: 'expired' }), { keyId: 'key_1' })
  assert.equal(invalidToken.code, 'auth_invalid_token_error')
  assert.equal(invalidToken.status, 401)
  assert.equal(usageOutcome(reply(401, invalidToken)), 'authFailures')
  assert.equal(refusedKeyId(invalidToken), 'key_1', 'counted for the key the token named')

  const origin = AuthOriginNotAllowedError({ origin: 'https://evil.example' })
  assert.equal(origin.code, 'auth_origin_not_allowed_error')
  assert.equal(origin.status, 403)
  assert.equal(usageOutcome(reply(403, origin)), 'authFailures')

  const invalid = new AntlerError('request_validation_error', { errors: { q: ['required'] } })
  assert.equal(invalid.status, 400)
  assert.equal(usageOutcome(reply(400, invalid)), 'clientErrors')
  assert.equal(usageOutcome(reply(404, new AntlerError('portal_key_not_found_error', { id: 'key_x' }))), 'clientErrors')
  // A 4xx without a failure (a route's own answer): a client error.
  assert.equal(usageOutcome(reply(404)), 'clientErrors')
  assert.equal(refusedKeyId(invalid), undefined, 'a failure without a key id names none')
})
