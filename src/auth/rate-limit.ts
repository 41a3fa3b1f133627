// The auth area's rate limiter: one semantics (fixed windows with adaptive back-off, per-window
// member sets), two backends: memory for one process, Redis shared by API replicas.
export type { BackoffRule, RateLimitDecision, RateLimitRule, RateLimiter } from './rate-limit-core.ts'
export { createMemoryRateLimiter } from './rate-limit-memory.ts'
export { createRedisRateLimiter } from './rate-limit-redis.ts'
