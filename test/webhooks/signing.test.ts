import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createWebhookSigner, newWebhookSecret, signWebhook } from '../../src/webhooks/signing.ts'

test("signWebhook reproduces the Standard Webhooks specification's published test vector", () => {
  const signature = signWebhook(
    ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    'msg_p5jXN8AQM9LWM0D4loKWxJek',
    1614265330,
    '{"test": 2432232314}',
  )
  assert.equal(signature, 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=')
})

test('signWebhook signs with every secret, space separated, in order; secrets are whsec_ + 32 bytes', () => {
  const [a, b] = [newWebhookSecret(), newWebhookSecret()]
  assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/)
  assert.equal(Buffer.from(a.slice(6), 'base64').length, 32)
  assert.notEqual(a, b)
  const both = signWebhook([a, b], 'msg_1', 1, '{}')
  assert.equal(both, `${signWebhook([a], 'msg_1', 1, '{}')} ${signWebhook([b], 'msg_1', 1, '{}')}`)
})

test('createWebhookSigner signs as signWebhook does (the test vector, two secrets), keeping keys', () => {
  const sign = createWebhookSigner()
  const vector = ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw']
  for (let i = 0; i < 2; i++)
    assert.equal(
      sign(vector, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}'),
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    )
  const [a, b] = [newWebhookSecret(), newWebhookSecret()]
  assert.equal(sign([a, b], 'msg_2', 7, 'body'), signWebhook([a, b], 'msg_2', 7, 'body'))
})
