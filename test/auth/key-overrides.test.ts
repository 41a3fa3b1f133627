import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { AntlerError } from '../../src/antelope/index.ts'
import {
  createApiKeyService,
  createAuthService,
  createMemoryRateLimiter,
  createRevocationWatch,
  DEFAULT_AUTH_LIMITS,
  refusedKeyId,
  signingKeyFromSecret,
  type ApiKeyService,
  type AuthService,
  type RevocationWatch,
} from '../../src/auth/index.ts'
import { callsRule, createKeyLimitsCache, issuanceRule } from '../../src/auth/key-limits.ts'
import type { ApiKeyLimits } from '../../src/store/index.ts'
import { antlerError, BASE_MS, errorOf, fakeClock, openTempStore, type FakeClock } from '../_helpers/accounts.ts'
import { onCleanup } from '../_helpers/cleanup.ts'

/*
 * Per-key limit overrides (the cache of them, calls per minute per IP, tokens per hour), rotation with a grace and
 * edits validated as at creation: the API key and auth services over a real SQLite store and a clock the test moves.
 */

const TIMEOUT = { timeout: 30_000 }
const CALLER = { ip: '10.0.0.1' }

interface AuthSetup {
  readonly clock: FakeClock
  readonly keys: ApiKeyService
  readonly auth: AuthService
  readonly revocations: RevocationWatch
}

/**
 * Keys and auth as `antler api` makes them (src/cli/api-runtime.ts), with the test's clock where they take one (the
 * revocation watch always reads the real clock), or with the real clock throughout.
 */
async function authSetup(t: TestContext, { realClock = false } = {}): Promise<AuthSetup> {
  const { store } = openTempStore(t)
  const clock = fakeClock()
  const now = realClock ? undefined : clock.now
  const keys = createApiKeyService({ store, now })
  const revocations = await createRevocationWatch({ store })
  onCleanup(t, () => revocations.close())
  const limiter = createMemoryRateLimiter({ now })
  onCleanup(t, () => limiter.close())
  const auth = createAuthService({
    keys,
    signingKey: await signingKeyFromSecret(await store.secret('jwt_signing_key')),
    revocations,
    limiter,
    limits: DEFAULT_AUTH_LIMITS,
    ttlSeconds: 3600,
    requireOrigin: false,
    now,
  })
  return { clock, keys, auth, revocations }
}

/** A rate_limit_exceeded_error that names the key it concerns. */
function assertRefusedFor(error: unknown, keyId: string, limit: number): AntlerError {
  assert.ok(error instanceof AntlerError, `an AntlerError: ${String(error)}`)
  assert.equal(error.code, 'rate_limit_exceeded_error', error.message)
  assert.equal(error.details.limit, limit)
  assert.equal(refusedKeyId(error), keyId, 'the refusal carries the key id (usage counts it for the key)')
  return error
}

test('callsRule / issuanceRule: an override as a rule per minute / per hour; none without one', TIMEOUT, () => {
  assert.deepEqual(callsRule({ callsPerMinute: 3 }), { limit: 3, windowMs: 60_000 })
  assert.deepEqual(issuanceRule({ tokensPerHour: 7 }), { limit: 7, windowMs: 3_600_000 })
  assert.equal(callsRule({ tokensPerHour: 7 }), undefined)
  assert.equal(issuanceRule({ callsPerMinute: 3 }), undefined)
  assert.equal(callsRule(undefined), undefined)
  assert.equal(issuanceRule({}), undefined)
})

test(
  'createKeyLimitsCache reads a key at most once per ttl and answers synchronously while cached',
  TIMEOUT,
  async () => {
    const clock = fakeClock()
    const stored = new Map<string, ApiKeyLimits | undefined>([
      ['k1', { callsPerMinute: 3 }],
      ['k2', undefined],
    ])
    const reads: string[] = []
    const cache = createKeyLimitsCache({
      read: async (id) => (reads.push(id), stored.get(id)),
      ttlMs: 1000,
      now: clock.now,
    })

    const first = cache.limitsOf('k1')
    assert.ok(first instanceof Promise, 'the first answer is read from the store')
    assert.deepEqual(await first, { callsPerMinute: 3 })
    for (const step of [0, 500, 499]) {
      clock.advance(step)
      const cached = cache.limitsOf('k1')
      assert.ok(!(cached instanceof Promise), `synchronous ${clock.ms - BASE_MS} ms after the read`)
      assert.deepEqual(cached, { callsPerMinute: 3 })
    }
    assert.deepEqual(reads, ['k1'])

    // An edit shows once the ttl has passed, and is cached again from then.
    stored.set('k1', { callsPerMinute: 9 })
    clock.advance(1)
    const reread = cache.limitsOf('k1')
    assert.ok(reread instanceof Promise, 'read again at the ttl')
    assert.deepEqual(await reread, { callsPerMinute: 9 })
    assert.deepEqual(cache.limitsOf('k1'), { callsPerMinute: 9 })
    assert.deepEqual(reads, ['k1', 'k1'])

    // No override is an answer cached like any other; each key has its own entry.
    assert.equal(await cache.limitsOf('k2'), undefined)
    const none = cache.limitsOf('k2')
    assert.ok(!(none instanceof Promise))
    assert.equal(none, undefined)
    assert.deepEqual(reads, ['k1', 'k1', 'k2'])
  },
)

// Found by this test: limitsOf kept nothing while a key's read was in flight, so every call arriving meanwhile started
// a read of its own (one store read per concurrent call at each expiry, not one per ttl).
test(
  'createKeyLimitsCache: calls arriving while a read is in flight share it (one read per ttl)',
  TIMEOUT,
  async () => {
    const clock = fakeClock()
    let reads = 0
    const cache = createKeyLimitsCache({
      read: async () => {
        reads++
        await sleep(20)
        return { callsPerMinute: 3 }
      },
      now: clock.now,
    })
    const answers = await Promise.all(Array.from({ length: 20 }, () => cache.limitsOf('busy')))
    for (const answer of answers) assert.deepEqual(answer, { callsPerMinute: 3 })
    assert.equal(reads, 1, `${reads} store reads for 20 concurrent calls within one ttl`)
  },
)

test('a callsPerMinute override of 3 admits 3 calls per IP, then refuses with the key id', TIMEOUT, async (t) => {
  const { keys, auth } = await authSetup(t)
  const { record, key } = await keys.create({ type: 'server', name: 'tight', limits: { callsPerMinute: 3 } })
  const { issued } = await auth.issue({ apiKey: key, caller: CALLER })
  for (let i = 1; i <= 3; i++) {
    const admitted = await auth.admit({ token: issued.token, caller: CALLER })
    assert.equal(admitted.claims.aki, record.id)
    assert.equal(admitted.rate.limit, 3, "the key's override, not the server type's 60,000")
    assert.equal(admitted.rate.remaining, 3 - i)
  }
  const refused = assertRefusedFor(await errorOf(auth.admit({ token: issued.token, caller: CALLER })), record.id, 3)
  assert.equal(refused.status, 429)
  assert.ok((refused.details.retry_after_seconds as number) >= 1)
  assert.match(refused.message, /calls per IP for this key/)

  // Per IP: another IP has its own 3.
  for (let i = 0; i < 3; i++) await auth.admit({ token: issued.token, caller: { ip: '10.0.0.2' } })
  assertRefusedFor(await errorOf(auth.admit({ token: issued.token, caller: { ip: '10.0.0.2' } })), record.id, 3)

  // A server key without an override: its type's limit.
  const loose = await keys.create({ type: 'server', name: 'loose' })
  const looseToken = (await auth.issue({ apiKey: loose.key, caller: CALLER })).issued.token
  for (let i = 0; i < 10; i++) {
    const admitted = await auth.admit({ token: looseToken, caller: CALLER })
    assert.equal(admitted.rate.limit, DEFAULT_AUTH_LIMITS.callsPerIp.server.limit)
  }
})

test('an edited callsPerMinute override applies to calls within a second', TIMEOUT, async (t) => {
  const { clock, keys, auth } = await authSetup(t)
  const { record, key } = await keys.create({ type: 'mobile', name: 'app' })
  const { issued } = await auth.issue({ apiKey: key, caller: CALLER })
  assert.equal((await auth.admit({ token: issued.token, caller: CALLER })).rate.limit, 600)
  await keys.update(record.id, { limits: { callsPerMinute: 2 } })
  clock.advance(999)
  assert.equal((await auth.admit({ token: issued.token, caller: CALLER })).rate.limit, 600, 'cached for a second')
  clock.advance(1)
  // The third call of the minute, against a limit of 2 now.
  assertRefusedFor(await errorOf(auth.admit({ token: issued.token, caller: CALLER })), record.id, 2)
})

test(
  'a tokensPerHour override limits issuance for the key, whatever its type; the refusal names the key',
  TIMEOUT,
  async (t) => {
    const { clock, keys, auth } = await authSetup(t)
    for (const type of ['mobile', 'server'] as const) {
      const { record, key } = await keys.create({ type, name: `${type} issuing`, limits: { tokensPerHour: 2 } })
      for (let i = 1; i <= 2; i++) {
        const issued = await auth.issue({ apiKey: key, caller: { ip: `10.0.1.${i}` } })
        assert.equal(issued.keyId, record.id)
        assert.equal(issued.rate.limit, 2)
      }
      clock.advance(10 * 60_000)
      const refused = assertRefusedFor(
        await errorOf(auth.issue({ apiKey: key, caller: { ip: '10.0.1.9' } })),
        record.id,
        2,
      )
      // An hour's window: the retry is far more than a minute away.
      assert.ok(
        (refused.details.retry_after_seconds as number) > 60,
        `retry in ${refused.details.retry_after_seconds} s`,
      )
      assert.match(refused.message, new RegExp(`issuance per ${type} key`))
    }
  },
)

test(
  'rotate with a grace: the new key has the old one’s fields; both authenticate until the grace ends',
  TIMEOUT,
  async (t) => {
    const { clock, keys, auth } = await authSetup(t)
    const old = await keys.create({
      type: 'web',
      name: 'storefront',
      origins: ['https://shop.example', 'http://localhost:5173'],
      accountId: 'acc_0123456789abcdef',
      limits: { callsPerMinute: 30, tokensPerHour: 500 },
    })
    clock.advance(1_000)
    const graceMs = 10 * 60_000
    const rotated = await keys.rotate(old.record.id, graceMs)
    const fresh = rotated.record
    assert.notEqual(fresh.id, old.record.id)
    assert.notEqual(rotated.key, old.key)
    for (const field of ['name', 'type', 'origins', 'limits', 'accountId'] as const)
      assert.deepEqual(fresh[field], old.record[field], `${field} inherited`)
    assert.equal(fresh.createdAtMs, clock.ms)
    assert.equal(fresh.revokedAtMs, undefined)
    assert.equal(fresh.prefix, rotated.key.slice(0, 'web_'.length + 4), "the new key's own first 4 hex digits")
    // Two random 16-bit prefixes: equal once in 65,536 rotations.
    assert.notEqual(fresh.prefix, old.record.prefix)
    assert.equal(rotated.previous.id, old.record.id)
    assert.equal(rotated.previous.revokedAtMs, clock.ms + graceMs, 'the old key revoked when the grace ends')
    assert.deepEqual(await keys.find(fresh.id), fresh)
    assert.deepEqual(
      (await keys.listOf('acc_0123456789abcdef')).map((k) => k.id),
      [old.record.id, fresh.id],
    )

    const origin = { ip: '10.0.0.1', origin: 'https://shop.example' }
    clock.advance(graceMs - 1)
    assert.equal((await keys.authenticate(old.key)).id, old.record.id, 'the old key, to the grace’s last millisecond')
    assert.equal((await keys.authenticate(rotated.key)).id, fresh.id)
    assert.equal((await auth.issue({ apiKey: old.key, caller: origin })).keyId, old.record.id)
    clock.advance(1)
    await assert.rejects(keys.authenticate(old.key), antlerError('auth_invalid_api_key_error', { reason: 'revoked' }))
    await assert.rejects(auth.issue({ apiKey: old.key, caller: origin }), antlerError('auth_invalid_api_key_error'))
    assert.equal((await keys.authenticate(rotated.key)).id, fresh.id, 'the new key only')
    assert.equal((await auth.issue({ apiKey: rotated.key, caller: origin })).keyId, fresh.id)
    // A revoked key cannot be rotated; an unknown one neither.
    await assert.rejects(
      keys.rotate(old.record.id, 0),
      antlerError('auth_invalid_api_key_error', { reason: 'revoked' }),
    )
    await assert.rejects(keys.rotate('key_nope', 0), antlerError('auth_invalid_api_key_error', { reason: 'unknown' }))
    // A grace of 0: the rotated key is revoked at once.
    const now = await keys.rotate(fresh.id, 0)
    await assert.rejects(
      keys.authenticate(rotated.key),
      antlerError('auth_invalid_api_key_error', { reason: 'revoked' }),
    )
    assert.equal((await keys.authenticate(now.key)).id, now.record.id)
  },
)

test(
  "a rotated key's tokens keep working during the grace and are refused once it ends (real clock)",
  TIMEOUT,
  async (t) => {
    const { keys, auth, revocations } = await authSetup(t, { realClock: true })
    const old = await keys.create({ type: 'server', name: 'backend' })
    const oldToken = (await auth.issue({ apiKey: old.key, caller: CALLER })).issued.token
    const graceMs = 1_500
    const rotated = await keys.rotate(old.record.id, graceMs)
    const newToken = (await auth.issue({ apiKey: rotated.key, caller: CALLER })).issued.token
    await revocations.refresh()
    assert.equal((await auth.admit({ token: oldToken, caller: CALLER })).claims.aki, old.record.id, 'during the grace')
    await sleep(rotated.previous.revokedAtMs! - Date.now() + 50)
    await revocations.refresh()
    const refused = await errorOf(auth.admit({ token: oldToken, caller: CALLER }))
    assert.ok(refused instanceof AntlerError, String(refused))
    assert.equal(refused.code, 'auth_invalid_token_error')
    assert.equal(refused.details.reason, 'revoked')
    assert.equal(refusedKeyId(refused), old.record.id)
    assert.equal((await auth.admit({ token: newToken, caller: CALLER })).claims.aki, rotated.record.id)
  },
)

test(
  'update validates as create: no origins on a server key, limits whole numbers from 1 to 1,000,000',
  TIMEOUT,
  async (t) => {
    const { keys } = await authSetup(t)
    const server = (await keys.create({ type: 'server', name: 'backend', limits: { callsPerMinute: 5 } })).record
    const web = (await keys.create({ type: 'web', name: 'site', origins: ['https://a.example'] })).record

    await assert.rejects(
      keys.update(server.id, { origins: ['https://a.example'] }),
      antlerError('auth_invalid_key_spec_error', { field: 'origin' }),
    )
    for (const limits of [
      { callsPerMinute: 0 },
      { tokensPerHour: 0 },
      { callsPerMinute: -1 },
      { callsPerMinute: 1.5 },
      { tokensPerHour: 1_000_001 },
      { callsPerMinute: Number.NaN },
    ]) {
      const field = Object.keys(limits)[0]
      await assert.rejects(
        keys.update(server.id, { limits }),
        antlerError('auth_invalid_key_spec_error', { field }),
        JSON.stringify(limits),
      )
      // Refused at creation alike.
      await assert.rejects(
        keys.create({ type: 'server', name: 'x', limits }),
        antlerError('auth_invalid_key_spec_error', { field }),
      )
    }
    await assert.rejects(
      keys.update(server.id, { name: '' }),
      antlerError('auth_invalid_key_spec_error', { field: 'name' }),
    )
    await assert.rejects(
      keys.update(web.id, { origins: ['https://a.example/path'] }),
      antlerError('auth_invalid_key_spec_error', { field: 'origin' }),
    )
    assert.deepEqual(await keys.find(server.id), server, 'a refused edit changes nothing')
    assert.deepEqual(await keys.find(web.id), web)

    assert.deepEqual((await keys.update(server.id, { origins: [] }))?.origins, [])
    assert.deepEqual(
      (await keys.update(server.id, { limits: { tokensPerHour: 1_000_000, callsPerMinute: 1 } }))?.limits,
      {
        callsPerMinute: 1,
        tokensPerHour: 1_000_000,
      },
    )
    assert.equal((await keys.update(server.id, { limits: null }))?.limits, undefined, 'null clears the overrides')
    assert.equal((await keys.update(server.id, { limits: { callsPerMinute: 4 } }))?.limits?.callsPerMinute, 4)
    assert.equal((await keys.update(server.id, { limits: {} }))?.limits, undefined, 'an empty set is none')
    assert.deepEqual(
      (await keys.update(web.id, { origins: ['HTTPS://B.example:443', 'https://b.example'] }))?.origins,
      ['https://b.example'],
    )
    assert.equal(await keys.update('key_nope', { name: 'x' }), undefined)
  },
)
