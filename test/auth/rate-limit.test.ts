import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net'
import { Redis } from 'ioredis'
import { AntlerError } from '../../src/antelope/index.ts'
import {
  createMemoryRateLimiter,
  createRedisRateLimiter,
  type BackoffRule,
  type RateLimiter,
  type RateLimitDecision,
} from '../../src/auth/rate-limit.ts'

/** The Redis tests run against; unset means they skip. */
const TEST_REDIS_URL = process.env.ANTLER_TEST_REDIS
const REDIS_SKIP_REASON = TEST_REDIS_URL
  ? false
  : 'ANTLER_TEST_REDIS is not set (CI sets it; e.g. redis://127.0.0.1:6379)'

const W = 60_000
/** A window boundary: every window of W (and of 1 s, 1 h) starts on it. */
const BASE = 1_800_000_000_000

/** An injected clock, moved by the test. */
interface Clock {
  ms: number
}

/** One limiter, and another sharing its state (a second replica on Redis; the same object in memory). */
type LimiterFactory = (
  t: TestContext,
  clock: Clock,
  backoff?: BackoffRule,
) => Promise<{ limiter: RateLimiter; replica: () => Promise<RateLimiter> }>

const memoryFactory: LimiterFactory = async (t, clock, backoff) => {
  const limiter = createMemoryRateLimiter({ now: () => clock.ms, backoff })
  t.after(() => limiter.close())
  return { limiter, replica: async () => limiter }
}

/** Deletes every key under `prefix` (each Redis test uses its own random prefix). */
async function deleteKeys(prefix: string): Promise<number> {
  const redis = new Redis(TEST_REDIS_URL!)
  let deleted = 0
  try {
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 1000 }) as AsyncIterable<string[]>) {
      if (keys.length > 0) deleted += await redis.del(...keys)
    }
  } finally {
    await redis.quit()
  }
  return deleted
}

function redisPrefix(t: TestContext): string {
  const prefix = `antler-test:${process.pid}:${randomUUID()}:`
  t.after(() => deleteKeys(prefix))
  return prefix
}

const redisFactory: LimiterFactory = async (t, clock, backoff) => {
  const prefix = redisPrefix(t)
  const open = async () => {
    const limiter = await createRedisRateLimiter({ url: TEST_REDIS_URL!, prefix, now: () => clock.ms, backoff })
    t.after(() => limiter.close())
    return limiter
  }
  return { limiter: await open(), replica: open }
}

const pick = (d: RateLimitDecision) => [d.allowed, d.remaining, d.resetAtMs, d.retryAfterSeconds]

/** The behaviour both backends share, run against one of them. */
function runRateLimiterSuite(name: string, factory: LimiterFactory, skip: string | false = false): void {
  test(
    `${name}: hit() lets \`limit\` calls pass per aligned window, then refuses until the window's end plus one window`,
    { skip },
    async (t) => {
      const clock = { ms: BASE + 15_000 }
      const { limiter } = await factory(t, clock)
      const rule = { limit: 3, windowMs: W }
      const passed = [await limiter.hit('k', rule), await limiter.hit('k', rule), await limiter.hit('k', rule)]
      assert.deepEqual(passed.map(pick), [
        [true, 2, BASE + W, 0],
        [true, 1, BASE + W, 0],
        [true, 0, BASE + W, 0],
      ])
      assert.ok(passed.every((d) => d.limit === 3))
      const refused = await limiter.hit('k', rule)
      assert.deepEqual(refused, {
        allowed: false,
        limit: 3,
        remaining: 0,
        resetAtMs: BASE + 2 * W,
        retryAfterSeconds: 105,
      })
      clock.ms = BASE + 2 * W - 1
      assert.deepEqual(
        pick(await limiter.hit('k', rule)),
        [false, 0, BASE + 2 * W, 1],
        'Retry-After is at least 1 second',
      )
      clock.ms = BASE + 2 * W
      assert.deepEqual(pick(await limiter.hit('k', rule)), [true, 2, BASE + 3 * W, 0])
    },
  )

  test(
    `${name}: hit() doubles the penalty over consecutive refused windows and stops at maxPenaltyMs`,
    { skip },
    async (t) => {
      const clock = { ms: BASE }
      const { limiter } = await factory(t, clock, { maxPenaltyMs: 5 * W })
      const rule = { limit: 1, windowMs: W }
      // Window start -> penalty end after its strike: 1, 2, 4, then 5 (capped) windows past the window's end.
      const expected: [number, number][] = [
        [0, 2],
        [2, 5],
        [5, 10],
        [10, 16],
        [16, 22],
      ]
      for (const [start, end] of expected) {
        clock.ms = BASE + start * W + 7
        assert.equal((await limiter.hit('k', rule)).allowed, true, `window ${start} lets its first call pass`)
        const refused = await limiter.hit('k', rule)
        assert.deepEqual(
          pick(refused),
          [false, 0, BASE + end * W, Math.ceil((end * W - start * W - 7) / 1000)],
          `window ${start}`,
        )
        clock.ms = BASE + end * W - 1
        assert.equal((await limiter.hit('k', rule)).resetAtMs, BASE + end * W, 'blocked until the penalty ends')
      }
    },
  )

  test(`${name}: hit() carries strikes into the window a capped penalty ends in`, { skip }, async (t) => {
    const clock = { ms: BASE }
    const { limiter } = await factory(t, clock, { maxPenaltyMs: 1.5 * W })
    const rule = { limit: 1, windowMs: W }
    await limiter.hit('k', rule)
    assert.equal((await limiter.hit('k', rule)).resetAtMs, BASE + 2 * W)
    clock.ms = BASE + 2 * W
    await limiter.hit('k', rule)
    assert.equal((await limiter.hit('k', rule)).resetAtMs, BASE + 4.5 * W, 'the second strike is capped at 1.5 windows')
    clock.ms = BASE + 4.5 * W
    assert.deepEqual(
      pick(await limiter.hit('k', rule)),
      [true, 0, BASE + 5 * W, 0],
      'free again mid-window, with the full limit',
    )
    assert.equal(
      (await limiter.hit('k', rule)).resetAtMs,
      BASE + 6.5 * W,
      'the third strike: the window end plus the cap',
    )
  })

  test(`${name}: hit() refusals during a penalty neither extend it nor add strikes`, { skip }, async (t) => {
    const clock = { ms: BASE }
    const { limiter } = await factory(t, clock)
    const rule = { limit: 1, windowMs: W }
    await limiter.hit('k', rule)
    await limiter.hit('k', rule)
    for (let ms = BASE + 1; ms < BASE + 2 * W; ms += 2_999) {
      clock.ms = ms
      assert.deepEqual(pick(await limiter.hit('k', rule)), [
        false,
        0,
        BASE + 2 * W,
        Math.max(1, Math.ceil((BASE + 2 * W - ms) / 1000)),
      ])
    }
    clock.ms = BASE + 2 * W
    assert.equal((await limiter.hit('k', rule)).allowed, true, 'the penalty ends when first announced')
    assert.equal((await limiter.hit('k', rule)).resetAtMs, BASE + 5 * W, 'second strike: 2 windows, not more')
  })

  test(`${name}: hit() forgets strikes after a window without refusal, used or not`, { skip }, async (t) => {
    const clock = { ms: BASE }
    const { limiter } = await factory(t, clock)
    const rule = { limit: 2, windowMs: W }
    const overflow = async () => {
      await limiter.hit('used', rule)
      await limiter.hit('used', rule)
      return (await limiter.hit('used', rule)).resetAtMs
    }
    assert.equal(await overflow(), BASE + 2 * W)
    clock.ms = BASE + 2 * W
    assert.equal((await limiter.hit('used', rule)).allowed, true, 'within the limit in the first free window')
    clock.ms = BASE + 3 * W
    assert.equal(await overflow(), BASE + 5 * W, 'one window of penalty again: strikes were reset')

    clock.ms = BASE + 10 * W
    await limiter.hit('idle', rule)
    await limiter.hit('idle', rule)
    assert.equal((await limiter.hit('idle', rule)).resetAtMs, BASE + 12 * W)
    clock.ms = BASE + 13 * W
    await limiter.hit('idle', rule)
    await limiter.hit('idle', rule)
    assert.equal(
      (await limiter.hit('idle', rule)).resetAtMs,
      BASE + 15 * W,
      'no call in the first free window also resets',
    )
  })

  test(`${name}: hit() keeps buckets apart and refuses every call of a rule with limit 0`, { skip }, async (t) => {
    const clock = { ms: BASE }
    const { limiter } = await factory(t, clock)
    const rule = { limit: 1, windowMs: W }
    await limiter.hit('key:a', rule)
    assert.equal((await limiter.hit('key:a', rule)).allowed, false)
    assert.equal((await limiter.hit('key:b', rule)).allowed, true)
    assert.deepEqual(pick(await limiter.hit('zero', { limit: 0, windowMs: 1000 })), [false, 0, BASE + 2000, 2])
  })

  test(`${name}: hit() and admitMember() reject an invalid rule with rate_limit_rule_error`, { skip }, async (t) => {
    const { limiter } = await factory(t, { ms: BASE })
    const isRuleError = (error: unknown) => error instanceof AntlerError && error.code === 'rate_limit_rule_error'
    await assert.rejects(limiter.hit('k', { limit: -1, windowMs: W }), isRuleError)
    await assert.rejects(limiter.hit('k', { limit: 1, windowMs: 0 }), isRuleError)
    await assert.rejects(limiter.hit('k', { limit: 1.5, windowMs: W }), isRuleError)
    await assert.rejects(limiter.hit('k', { limit: 1, windowMs: Number.NaN }), isRuleError)
    await assert.rejects(limiter.admitMember('k', 'ip', -1, W), isRuleError)
    await assert.rejects(limiter.admitMember('k', 'ip', 1, 0), isRuleError)
  })

  test(
    `${name}: admitMember() admits at most \`max\` members per window, known members always`,
    { skip },
    async (t) => {
      const clock = { ms: BASE + 10 }
      const { limiter } = await factory(t, clock)
      const admit = (token: string, ip: string) => limiter.admitMember(token, ip, 2, W)
      assert.deepEqual(await admit('tok', '10.0.0.1'), { allowed: true, count: 1 })
      assert.deepEqual(await admit('tok', '10.0.0.2'), { allowed: true, count: 2 })
      assert.deepEqual(await admit('tok', '10.0.0.3'), { allowed: false, count: 2 })
      assert.deepEqual(await admit('tok', '10.0.0.1'), { allowed: true, count: 2 })
      assert.deepEqual(await admit('other', '10.0.0.3'), { allowed: true, count: 1 })
      clock.ms = BASE + W - 1
      assert.deepEqual(await admit('tok', '10.0.0.3'), { allowed: false, count: 2 })
      clock.ms = BASE + W
      assert.deepEqual(await admit('tok', '10.0.0.3'), { allowed: true, count: 1 }, 'a new window starts an empty set')
      assert.deepEqual(await admit('tok', '10.0.0.1'), { allowed: true, count: 2 })
      assert.deepEqual(await admit('tok', '10.0.0.2'), { allowed: false, count: 2 })
      assert.deepEqual(await limiter.admitMember('none', '10.0.0.1', 0, W), { allowed: false, count: 0 })
    },
  )

  test(
    `${name}: concurrent calls through two replicas let exactly \`limit\` calls and \`max\` members pass`,
    { skip },
    async (t) => {
      const clock = { ms: BASE }
      const { limiter, replica } = await factory(t, clock)
      const other = await replica()
      const rule = { limit: 25, windowMs: W }
      const decisions = await Promise.all(
        Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? limiter : other).hit('shared', rule)),
      )
      assert.equal(decisions.filter((d) => d.allowed).length, 25)
      assert.deepEqual(
        [...decisions.filter((d) => d.allowed).map((d) => d.remaining)].sort((a, b) => a - b),
        Array.from({ length: 25 }, (_, i) => i),
      )
      const admitted = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? limiter : other).admitMember('tok', `10.0.0.${i}`, 5, W)),
      )
      assert.equal(admitted.filter((a) => a.allowed).length, 5)
      assert.ok(admitted.every((a) => a.count <= 5))
    },
  )
}

runRateLimiterSuite('memory', memoryFactory)
runRateLimiterSuite('redis', redisFactory, REDIS_SKIP_REASON)

test('createMemoryRateLimiter() drops the least recently used bucket when a new one arrives on a full limiter', async () => {
  const rule = { limit: 1, windowMs: W }
  for (const [others, kept] of [
    [99, true],
    [100, false],
  ] as const) {
    const limiter = createMemoryRateLimiter({ now: () => BASE, maxBuckets: 100 })
    await limiter.hit('victim', rule)
    await limiter.hit('victim', rule)
    for (let i = 0; i < others; i++) await limiter.hit(`other-${i}`, rule)
    assert.equal(
      (await limiter.hit('victim', rule)).allowed,
      !kept,
      `with ${others} other buckets the victim is ${kept ? 'kept' : 'forgotten'}`,
    )
  }
})

test('createMemoryRateLimiter() drops expired buckets and member sets before live ones', async () => {
  const clock = { ms: BASE }
  const limiter = createMemoryRateLimiter({ now: () => clock.ms, maxBuckets: 100 })
  const hour = { limit: 1, windowMs: 3_600_000 }
  await limiter.hit('victim', hour)
  await limiter.hit('victim', hour)
  for (let i = 0; i < 50; i++) await limiter.hit(`short-${i}`, { limit: 1, windowMs: 1000 })
  for (let i = 0; i < 49; i++) await limiter.admitMember(`token-${i}`, '10.0.0.1', 1, 1000)
  clock.ms = BASE + 5000
  for (let i = 0; i < 60; i++) await limiter.hit(`new-${i}`, { limit: 1, windowMs: 1000 })
  assert.equal((await limiter.hit('victim', hour)).allowed, false, 'the oldest, still blocked, bucket survives')
})

test('createMemoryRateLimiter() stays within maxBuckets under a flood of distinct buckets, in amortized constant time', async () => {
  const clock = { ms: BASE }
  const maxBuckets = 1000
  const limiter = createMemoryRateLimiter({ now: () => clock.ms, maxBuckets })
  const zero = { limit: 0, windowMs: W }
  const flood = 200_000
  const started = performance.now()
  for (let i = 0; i < flood; i++) await limiter.hit(`flood-${i}`, zero)
  for (let i = 0; i < flood / 4; i++) await limiter.admitMember(`token-${i}`, '10.0.0.1', 1, W)
  for (let i = flood; i < flood + 2 * maxBuckets; i++) await limiter.hit(`flood-${i}`, zero)
  const elapsedMs = performance.now() - started
  // Count the buckets still remembered, newest first. One window later, a remembered bucket is
  // still blocked until BASE + 2W, a forgotten one starts afresh (blocked until BASE + 3W). No
  // bucket is added before the first forgotten one, so the count is the number of entries kept.
  clock.ms = BASE + W
  let remembered = 0
  for (let i = flood + 2 * maxBuckets - 1; i >= 0; i--, remembered++) {
    if ((await limiter.hit(`flood-${i}`, zero)).resetAtMs !== BASE + 2 * W) break
  }
  assert.ok(remembered <= maxBuckets && remembered >= maxBuckets * 0.9, `${remembered} buckets remembered`)
  assert.ok(elapsedMs < 10_000, `${Math.round(elapsedMs)} ms for ${flood * 1.25} calls`)
})

test(
  'createRedisRateLimiter() sets a PEXPIRE on every key: the window end, or the end of the window after a penalty',
  { skip: REDIS_SKIP_REASON },
  async (t) => {
    const clock = { ms: BASE + 15_000 }
    const prefix = redisPrefix(t)
    const limiter = await createRedisRateLimiter({ url: TEST_REDIS_URL!, prefix, now: () => clock.ms })
    t.after(() => limiter.close())
    const rule = { limit: 1, windowMs: W }
    await limiter.hit('open', rule)
    await limiter.hit('blocked', rule)
    await limiter.hit('blocked', rule)
    await limiter.admitMember('tok', '10.0.0.1', 3, W)
    const redis = new Redis(TEST_REDIS_URL!)
    t.after(() => redis.quit())
    const keys = (await redis.keys(`${prefix}*`)).sort()
    assert.equal(keys.length, 3)
    const ttl = async (suffix: string) => redis.pttl(keys.find((k) => k.endsWith(suffix))!)
    const within = (value: number, max: number) =>
      assert.ok(value > max - 5_000 && value <= max, `pttl ${value}, expected about ${max}`)
    within(await ttl(':h:open'), 45_000)
    // Blocked until BASE + 2W; its strikes matter until the window after that ends.
    within(await ttl(':h:blocked'), 3 * W - 15_000)
    within(await ttl(':tok'), 45_000)
  },
)

test('createRedisRateLimiter() fails fast with one line when Redis is unreachable or silent', async (t) => {
  const closed = await listen(createServer())
  const closedPort = (closed.address() as AddressInfo).port
  await new Promise((resolve) => closed.close(resolve))
  const isBackendError = (error: unknown) =>
    error instanceof AntlerError &&
    error.code === 'rate_limit_backend_error' &&
    error.status === 503 &&
    !error.message.includes('\n')
  let started = performance.now()
  await assert.rejects(
    createRedisRateLimiter({ url: `redis://user:secret@127.0.0.1:${closedPort}` }),
    (error: unknown) => {
      assert.ok(isBackendError(error))
      assert.match((error as Error).message, /ECONNREFUSED/)
      assert.doesNotMatch((error as Error).message, /secret/)
      return true
    },
  )
  assert.ok(performance.now() - started < 5_000)

  const sockets: Socket[] = []
  const silent = await listen(createServer((socket) => sockets.push(socket)))
  t.after(() => {
    for (const socket of sockets) socket.destroy()
    silent.close()
  })
  started = performance.now()
  await assert.rejects(
    createRedisRateLimiter({ url: `redis://127.0.0.1:${(silent.address() as AddressInfo).port}` }),
    isBackendError,
  )
  assert.ok(performance.now() - started < 10_000, 'a server that never answers is given up on within seconds')
})

test(
  'createRedisRateLimiter() rejects with rate_limit_backend_error while Redis is away, and recovers when it is back',
  { skip: REDIS_SKIP_REASON },
  async (t) => {
    const target = new URL(TEST_REDIS_URL!)
    const proxy = await startProxy(target.hostname, Number(target.port || 6379))
    const url = new URL(TEST_REDIS_URL!)
    url.hostname = '127.0.0.1'
    url.port = String(proxy.port)
    const limiter = await createRedisRateLimiter({
      url: url.toString(),
      prefix: redisPrefix(t),
      now: () => BASE,
    }).catch(async (error: unknown) => {
      await proxy.stop()
      throw error
    })
    t.after(() => limiter.close())
    t.after(() => proxy.stop())
    const rule = { limit: 100, windowMs: W }
    assert.equal((await limiter.hit('k', rule)).allowed, true)

    await proxy.stop()
    const isUnavailable = (error: unknown) =>
      error instanceof AntlerError &&
      error.code === 'rate_limit_backend_error' &&
      error.status === 503 &&
      error.retryable
    await assert.rejects(limiter.hit('k', rule), isUnavailable)
    await assert.rejects(limiter.admitMember('k', '10.0.0.1', 1, W), isUnavailable)

    await proxy.start()
    const deadline = Date.now() + 10_000
    let decision: RateLimitDecision | undefined
    while (decision === undefined && Date.now() < deadline) {
      decision = await limiter.hit('k', rule).catch(() => new Promise<undefined>((resolve) => setTimeout(resolve, 100)))
    }
    assert.equal(decision?.allowed, true, 'the limiter reconnects by itself')
    assert.equal(decision?.remaining, 98, 'and the count made before the outage is still there')
  },
)

async function listen(server: Server, port = 0): Promise<Server> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => resolve())
  })
  return server
}

/** A TCP proxy to Redis that can be stopped (every connection cut) and started again on the same port. */
async function startProxy(
  host: string,
  port: number,
): Promise<{ port: number; stop: () => Promise<void>; start: () => Promise<void> }> {
  let server: Server | undefined
  let sockets: Socket[] = []
  let proxyPort = 0
  const start = async () => {
    server = await listen(
      createServer((client) => {
        const upstream = connect(port, host)
        sockets.push(client, upstream)
        client.pipe(upstream).pipe(client)
        client.on('error', () => upstream.destroy())
        upstream.on('error', () => client.destroy())
      }),
      proxyPort,
    )
    proxyPort = (server.address() as AddressInfo).port
  }
  const stop = async () => {
    for (const socket of sockets) socket.destroy()
    sockets = []
    const closing = server
    server = undefined
    if (closing) await new Promise((resolve) => closing.close(resolve))
  }
  await start()
  return { port: proxyPort, stop, start }
}
