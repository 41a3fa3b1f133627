import {
  DEFAULT_BACKOFF,
  DEFAULT_MAX_BUCKETS,
  checkInteger,
  checkRule,
  stepBucket,
  toDecision,
  windowStartOf,
  type BackoffRule,
  type BucketState,
  type RateLimitDecision,
  type RateLimitRule,
  type RateLimiter,
} from './rate-limit-core.ts'

type Entry =
  | { readonly kind: 'counter'; readonly state: BucketState; readonly expiresAtMs: number }
  | {
      readonly kind: 'members'
      readonly windowStart: number
      readonly members: Set<string>
      readonly expiresAtMs: number
    }

/**
 * A rate limiter whose state lives in this process (one API replica); at most `maxBuckets` buckets and member sets are
 * kept.
 */
export function createMemoryRateLimiter(
  args: { now?: () => number; maxBuckets?: number; backoff?: BackoffRule } = {},
): RateLimiter {
  const now = args.now ?? Date.now
  const maxBuckets = args.maxBuckets ?? DEFAULT_MAX_BUCKETS
  const maxPenaltyMs = (args.backoff ?? DEFAULT_BACKOFF).maxPenaltyMs
  checkInteger('maxBuckets', maxBuckets, 1)
  checkInteger('maxPenaltyMs', maxPenaltyMs, 0)
  // Invariant: entries.size <= maxBuckets after every call, and the map's order is least recently
  // used first (an entry is deleted and set again on every call that reads it). Counter keys start
  // with "h:", member sets with "m:", so a token id and a bucket name never collide.
  const entries = new Map<string, Entry>()
  // When full, make room for this many entries at once, so the O(n) sweep is amortized over them.
  const slack = Math.max(1, Math.floor(maxBuckets / 10))

  const take = (key: string, t: number): Entry | undefined => {
    const entry = entries.get(key)
    if (entry === undefined) return undefined
    entries.delete(key)
    return entry.expiresAtMs <= t ? undefined : entry
  }

  /** Frees room for one entry: expired entries first, then the least recently used, down to maxBuckets - slack. */
  const put = (key: string, entry: Entry, t: number): void => {
    if (entries.size >= maxBuckets) {
      for (const [k, e] of entries) if (e.expiresAtMs <= t) entries.delete(k)
      if (entries.size >= maxBuckets) {
        for (const k of entries.keys()) {
          if (entries.size <= maxBuckets - slack) break
          entries.delete(k)
        }
      }
    }
    entries.set(key, entry)
  }

  return {
    async hit(bucket: string, rule: RateLimitRule): Promise<RateLimitDecision> {
      checkRule(rule)
      const t = Math.floor(now())
      const key = `h:${bucket}`
      const entry = take(key, t)
      const previous = entry?.kind === 'counter' ? entry.state : undefined
      const step = stepBucket(previous, t, rule, maxPenaltyMs)
      put(key, { kind: 'counter', state: step.state ?? previous!, expiresAtMs: step.expiresAtMs }, t)
      return toDecision(rule, t, step.allowed, step.count, step.resetAtMs)
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
      const key = `m:${bucket}`
      const entry = take(key, t)
      const members = entry?.kind === 'members' && entry.windowStart === windowStart ? entry.members : new Set<string>()
      let allowed = true
      if (!members.has(member)) {
        if (members.size < max) members.add(member)
        else allowed = false
      }
      put(key, { kind: 'members', windowStart, members, expiresAtMs: windowStart + windowMs }, t)
      return { allowed, count: members.size }
    },

    async close(): Promise<void> {
      entries.clear()
    },
  }
}
