import { RateLimitRuleError } from './rate-limit-errors.ts'

/**
 * A fixed-window rule: at most `limit` calls pass in each window of `windowMs` (windows are aligned to multiples of
 * `windowMs` since the epoch).
 */
export interface RateLimitRule {
  readonly limit: number
  readonly windowMs: number
}

/** What `hit` decided for one call, with the figures of the `X-RateLimit-*` and `Retry-After` headers. */
export interface RateLimitDecision {
  readonly allowed: boolean
  /** The rule's limit (`X-RateLimit-Limit`). */
  readonly limit: number
  /** Calls left in this window, >= 0 (`X-RateLimit-Remaining`); 0 when refused. */
  readonly remaining: number
  /** Epoch ms when the window (or, when refused, the penalty) ends; `X-RateLimit-Reset` is its seconds. */
  readonly resetAtMs: number
  /** 0 when allowed; else whole seconds >= 1 until a call may pass (`Retry-After`). */
  readonly retryAfterSeconds: number
}

/**
 * Counts calls per bucket with adaptive back-off, in one process (memory) or shared by replicas (Redis), with identical
 * semantics.
 */
export interface RateLimiter {
  /** Counts one call in `bucket` under `rule` and says whether it may pass. */
  hit(bucket: string, rule: RateLimitRule): Promise<RateLimitDecision>
  /**
   * Adds `member` (an IP) to the set of `bucket` (a token id) for `windowMs`; allowed while the set holds at most `max`
   * members (a known member always passes).
   */
  admitMember(
    bucket: string,
    member: string,
    max: number,
    windowMs: number,
  ): Promise<{ allowed: boolean; count: number }>
  /** Releases the limiter's state or connection; calls made afterwards are not supported. */
  close(): Promise<void>
}

/** How long a bucket refused in consecutive windows may be blocked at most. */
export interface BackoffRule {
  readonly maxPenaltyMs: number
}

/** The back-off used when none is given: penalties stop doubling at 15 minutes. */
export const DEFAULT_BACKOFF: BackoffRule = Object.freeze({ maxPenaltyMs: 15 * 60_000 })

/** How many buckets and member sets the memory backend keeps at most when none is given. */
export const DEFAULT_MAX_BUCKETS = 100_000

/**
 * One bucket's state. The Redis backend keeps the same four fields in a hash (`ws`, `c`, `s`, `b`)
 * and its Lua script is a line-by-line copy of `stepBucket`.
 *
 * Invariants: `windowStart` is a multiple of the rule's `windowMs`; `count` counts the calls made
 * in that window (it may exceed the limit by one: the refused call that set the penalty);
 * `strikes` is the number of consecutive refused windows, the current one included;
 * `blockedUntil` is 0 or the end of the latest penalty (every call before it is refused).
 */
export interface BucketState {
  readonly windowStart: number
  readonly count: number
  readonly strikes: number
  readonly blockedUntil: number
}

/**
 * The outcome of one call on a bucket: its new state (`undefined`: unchanged), the raw decision and when the state may
 * be forgotten.
 */
export interface BucketStep {
  readonly state: BucketState | undefined
  readonly allowed: boolean
  readonly count: number
  readonly resetAtMs: number
  readonly expiresAtMs: number
}

/** The start of the window of `windowMs` holding `t`. */
export function windowStartOf(t: number, windowMs: number): number {
  return t - (t % windowMs)
}

/**
 * The penalty after the `strikes`-th consecutive refused window: `windowMs * 2^(strikes-1)`, capped at `maxPenaltyMs`.
 */
export function penaltyMs(strikes: number, windowMs: number, maxPenaltyMs: number): number {
  return Math.min(windowMs * 2 ** (Math.min(strikes, 40) - 1), maxPenaltyMs)
}

/**
 * Counts one call at `now` (integer epoch ms) on a bucket. The rule, shared by both backends:
 *
 * 1. Fixed windows aligned to `windowMs`; `limit` calls pass in each.
 * 2. While `now < blockedUntil` every call is refused with the penalty's end as its reset, and
 *    nothing changes: refused calls never extend a penalty.
 * 3. The first refused call of a window is the window's strike: `strikes += 1` and the bucket is
 *    blocked until the window's end plus `windowMs * 2^(strikes-1)` (capped at `maxPenaltyMs`).
 *    So the 1st refused window blocks one extra window, the 2nd two, the 3rd four, ...
 * 4. Strikes are consecutive: they carry over only into the first window the bucket may use again
 *    (the window holding `blockedUntil`). When that window ends without a refusal, or the bucket
 *    makes no call in it, the next window starts with 0 strikes.
 *
 * A bucket must always be hit with the same `windowMs`.
 */
export function stepBucket(
  state: BucketState | undefined,
  now: number,
  rule: RateLimitRule,
  maxPenaltyMs: number,
): BucketStep {
  const windowMs = rule.windowMs
  if (state !== undefined && now < state.blockedUntil) {
    return {
      state: undefined,
      allowed: false,
      count: state.count,
      resetAtMs: state.blockedUntil,
      expiresAtMs: expiresAt(state, windowMs),
    }
  }
  const current = windowStartOf(now, windowMs)
  let strikes = state?.strikes ?? 0
  let count = state?.count ?? 0
  let blockedUntil = state?.blockedUntil ?? 0
  if (state === undefined || state.windowStart !== current) {
    const streakGoesOn = strikes > 0 && blockedUntil > 0 && current === windowStartOf(blockedUntil, windowMs)
    if (!streakGoesOn) strikes = 0
    count = 0
  }
  count += 1
  let allowed = true
  let resetAtMs = current + windowMs
  if (count > rule.limit) {
    strikes += 1
    blockedUntil = current + windowMs + penaltyMs(strikes, windowMs, maxPenaltyMs)
    allowed = false
    resetAtMs = blockedUntil
  }
  const next: BucketState = { windowStart: current, count, strikes, blockedUntil }
  return { state: next, allowed, count, resetAtMs, expiresAtMs: expiresAt(next, windowMs) }
}

/** When a bucket's state stops mattering: the end of its window, or of the window its strikes would carry into. */
function expiresAt(state: BucketState, windowMs: number): number {
  const windowEnd = state.windowStart + windowMs
  if (state.blockedUntil === 0) return windowEnd
  return Math.max(windowEnd, windowStartOf(state.blockedUntil, windowMs) + windowMs)
}

/** The decision both backends answer from a raw outcome (`allowed`, calls counted, reset time). */
export function toDecision(
  rule: RateLimitRule,
  now: number,
  allowed: boolean,
  count: number,
  resetAtMs: number,
): RateLimitDecision {
  if (allowed)
    return { allowed, limit: rule.limit, remaining: Math.max(0, rule.limit - count), resetAtMs, retryAfterSeconds: 0 }
  return {
    allowed,
    limit: rule.limit,
    remaining: 0,
    resetAtMs,
    retryAfterSeconds: Math.max(1, Math.ceil((resetAtMs - now) / 1000)),
  }
}

/** Throws `rate_limit_rule_error` unless `value` is an integer >= `min`. */
export function checkInteger(field: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min) throw RateLimitRuleError({ field, value })
}

/** Throws `rate_limit_rule_error` unless the rule has an integer `limit >= 0` and `windowMs >= 1`. */
export function checkRule(rule: RateLimitRule): void {
  checkInteger('limit', rule.limit, 0)
  checkInteger('windowMs', rule.windowMs, 1)
}
