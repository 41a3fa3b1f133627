/** The delays between tries of one message: after the first failure, the second, … (the last one repeats). */
export type RetrySchedule = readonly number[]

/** `--webhook-retries`'s default: immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const DEFAULT_WEBHOOK_RETRIES = '5s,5m,30m,2h,5h,10h,10h'

/** A retry is never sooner than this after a 429 or a timeout (the endpoint is overloaded). */
export const OVERLOAD_MIN_DELAY_MS = 60_000

/** The longest `Retry-After` honoured (a longer one waits this long). */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000

/** Jitter: each delay is drawn within ±20 %. */
const JITTER = 0.2

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** A duration such as `500ms`, `5s`, `5m`, `2h`, `5d`, in milliseconds; throws on anything else. */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim())
  if (!match) throw new Error(`not a duration: ${JSON.stringify(text)} (a number and ms, s, m, h or d, e.g. 5m)`)
  return Math.round(Number(match[1]) * UNITS[match[2]])
}

/** `5s,5m,30m,…` as delays in milliseconds; throws on an empty or malformed list. */
export function parseRetrySchedule(text: string): RetrySchedule {
  const delays = text.split(',').map(parseDuration)
  if (delays.length === 0 || delays.length > 50) throw new Error('--webhook-retries takes 1 to 50 durations')
  return delays
}

/**
 * How long to wait before the next try of a message that failed `failures` times (1 after the first failure): the
 * schedule's delay (its last one once it runs out) with jitter, at least a minute after a 429 or a timeout, and at
 * least what `Retry-After` asked.
 */
export function nextRetryDelay(
  schedule: RetrySchedule,
  failures: number,
  outcome: { status: number | null; error: string | null; retryAfterMs?: number },
  random: () => number = Math.random,
): number {
  const base = schedule[Math.min(Math.max(failures, 1), schedule.length) - 1]
  let delay = Math.round(base * (1 - JITTER + 2 * JITTER * random()))
  if (outcome.status === 429 || outcome.error === 'timeout') delay = Math.max(delay, OVERLOAD_MIN_DELAY_MS)
  if (outcome.retryAfterMs !== undefined) delay = Math.max(delay, Math.min(outcome.retryAfterMs, MAX_RETRY_AFTER_MS))
  return delay
}
