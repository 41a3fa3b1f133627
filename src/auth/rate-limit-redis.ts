import { Redis } from 'ioredis'
import {
  DEFAULT_BACKOFF,
  checkInteger,
  checkRule,
  toDecision,
  windowStartOf,
  type BackoffRule,
  type RateLimitDecision,
  type RateLimitRule,
  type RateLimiter,
} from './rate-limit-core.ts'
import { RateLimitBackendError } from './rate-limit-errors.ts'

/**
 * `stepBucket` (rate-limit-core.ts) in Lua, run atomically by Redis. KEYS[1]: the bucket's hash
 * {ws, c, s, b}; ARGV: now, limit, windowMs, maxPenaltyMs. Returns {allowed 0|1, count, resetAtMs}.
 * `now` comes from the caller's clock, so every replica (and a test's injected clock) decides alike.
 */
const HIT_LUA = `
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local w = tonumber(ARGV[3])
local maxp = tonumber(ARGV[4])
local st = redis.call('HMGET', KEYS[1], 'ws', 'c', 's', 'b')
local ws = tonumber(st[1])
local c = tonumber(st[2]) or 0
local s = tonumber(st[3]) or 0
local b = tonumber(st[4]) or 0
if ws ~= nil and now < b then return {0, c, b} end
local cur = now - (now % w)
if ws ~= cur then
  if not (s > 0 and b > 0 and cur == b - (b % w)) then s = 0 end
  c = 0
end
c = c + 1
local allowed = 1
local reset = cur + w
if c > limit then
  s = s + 1
  local p = w * 2 ^ (math.min(s, 40) - 1)
  if p > maxp then p = maxp end
  b = cur + w + p
  allowed = 0
  reset = b
end
redis.call('HSET', KEYS[1], 'ws', string.format('%d', cur), 'c', c, 's', s, 'b', string.format('%d', b))
local expires = cur + w
if b > 0 then
  local free = b - (b % w) + w
  if free > expires then expires = free end
end
redis.call('PEXPIRE', KEYS[1], string.format('%d', math.max(1, expires - now)))
return {allowed, c, reset}
`

/**
 * KEYS[1]: the member set of one bucket for one window; ARGV: member, max, ms until the window ends.
 * Returns {allowed 0|1, set size after the call}; a refused member is not added.
 */
const ADMIT_LUA = `
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return {1, redis.call('SCARD', KEYS[1])} end
local n = redis.call('SCARD', KEYS[1])
if n >= tonumber(ARGV[2]) then return {0, n} end
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, n + 1}
`

interface RateLimitScripts {
  antlerRateLimitHit(key: string, now: number, limit: number, windowMs: number, maxPenaltyMs: number): Promise<unknown>
  antlerRateLimitAdmit(key: string, member: string, max: number, ttlMs: number): Promise<unknown>
}

/** How long connecting (and each later command) may take before the limiter gives up. */
const CONNECT_TIMEOUT_MS = 3000
const COMMAND_TIMEOUT_MS = 2000

/**
 * A rate limiter whose state lives in Redis, shared by every API replica using the same `prefix`
 * (default `antler:ratelimit:`). Connects first and rejects with `rate_limit_backend_error` when
 * Redis cannot be reached within a few seconds. Every key carries a PEXPIRE: a bucket's hash lives
 * until its state stops mattering, a member set until its window ends.
 */
export async function createRedisRateLimiter(args: {
  url: string
  prefix?: string
  now?: () => number
  backoff?: BackoffRule
}): Promise<RateLimiter> {
  const now = args.now ?? Date.now
  const prefix = args.prefix ?? 'antler:ratelimit:'
  const maxPenaltyMs = (args.backoff ?? DEFAULT_BACKOFF).maxPenaltyMs
  checkInteger('maxPenaltyMs', maxPenaltyMs, 0)
  const where = redactedUrl(args.url)
  // Reconnect (with a capped delay) only once the first connection succeeded: a wrong URL fails fast.
  const connection = { ready: false, closing: false }
  const redis = new Redis(args.url, {
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    commandTimeout: COMMAND_TIMEOUT_MS,
    // While disconnected, calls fail at once (503) instead of queueing behind a reconnect.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (times) => (connection.ready && !connection.closing ? Math.min(100 * times, 2000) : null),
    scripts: {
      antlerRateLimitHit: { numberOfKeys: 1, lua: HIT_LUA },
      antlerRateLimitAdmit: { numberOfKeys: 1, lua: ADMIT_LUA },
    },
  })
  // Errors reach callers as rejected commands; the event must still be listened to. Its last error
  // says why connecting failed (connect() itself only rejects with "Connection is closed").
  let socketError: unknown
  redis.on('error', (error) => {
    socketError = error
  })
  try {
    await redis.connect()
  } catch (error) {
    redis.disconnect()
    const cause = socketError ?? error
    throw RateLimitBackendError({ operation: `connect to ${where}`, reason: oneLine(cause), cause })
  }
  connection.ready = true
  const scripts = redis as unknown as RateLimitScripts

  const call = async <T>(
    operation: string,
    run: () => Promise<unknown>,
    parse: (reply: unknown) => T | undefined,
  ): Promise<T> => {
    let reply: unknown
    try {
      reply = await run()
    } catch (error) {
      throw RateLimitBackendError({ operation: `${operation} on ${where}`, reason: oneLine(error), cause: error })
    }
    const parsed = parse(reply)
    if (parsed === undefined)
      throw RateLimitBackendError({
        operation: `${operation} on ${where}`,
        reason: `unexpected reply ${JSON.stringify(reply)}`,
      })
    return parsed
  }

  return {
    async hit(bucket: string, rule: RateLimitRule): Promise<RateLimitDecision> {
      checkRule(rule)
      const t = Math.floor(now())
      const [allowed, count, resetAtMs] = await call(
        'hit',
        () => scripts.antlerRateLimitHit(`${prefix}h:${bucket}`, t, rule.limit, rule.windowMs, maxPenaltyMs),
        (reply) => integers(reply, 3),
      )
      return toDecision(rule, t, allowed === 1, count, resetAtMs)
    },

    async admitMember(
      bucket: string,
      member: string,
      max: number,
      windowMs: number,
    ): Promise<{ allowed: boolean; count: number }> {
      checkInteger('max', max, 0)
      checkInteger('windowMs', windowMs, 1)
      const t = Math.floor(now())
      const windowStart = windowStartOf(t, windowMs)
      const [allowed, count] = await call(
        'admitMember',
        () =>
          scripts.antlerRateLimitAdmit(`${prefix}m:${windowStart}:${bucket}`, member, max, windowStart + windowMs - t),
        (reply) => integers(reply, 2),
      )
      return { allowed: allowed === 1, count }
    },

    async close(): Promise<void> {
      connection.closing = true
      try {
        await redis.quit()
      } catch {
        redis.disconnect()
      }
    },
  }
}

/** The reply as `length` integers, or undefined when it has another shape. */
function integers(reply: unknown, length: number): number[] | undefined {
  if (!Array.isArray(reply) || reply.length !== length) return undefined
  const values = reply.map((v) => (typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : NaN))
  return values.every(Number.isSafeInteger) ? values : undefined
}

/** The URL without its password, for messages. */
function redactedUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@')
}

function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return message.split('\n')[0] || 'unknown error'
}
