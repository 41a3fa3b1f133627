import { setTimeout as sleep } from 'node:timers/promises'

/**
 * Deliveries per second per API key, shared by all of the key's subscriptions: a token bucket per key (burst: one
 * second's worth). A delivery over the rate waits for its token rather than failing: the receiver never sees it.
 */
export class OwnerRate {
  private readonly buckets = new Map<string, { tokens: number; at: number }>()

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Resolves when `owner` may send one more delivery (rejects if `signal` aborts first). */
  async take(owner: string, signal?: AbortSignal): Promise<void> {
    for (;;) {
      const now = this.now()
      const bucket = this.buckets.get(owner) ?? { tokens: this.perSecond, at: now }
      bucket.tokens = Math.min(this.perSecond, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond)
      bucket.at = now
      this.buckets.set(owner, bucket)
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1
        return
      }
      await sleep(Math.ceil(((1 - bucket.tokens) / this.perSecond) * 1000), undefined, { signal })
    }
  }

  /** Forgets keys that have no subscription any more. */
  keepOnly(owners: ReadonlySet<string>): void {
    for (const owner of this.buckets.keys()) if (!owners.has(owner)) this.buckets.delete(owner)
  }
}
