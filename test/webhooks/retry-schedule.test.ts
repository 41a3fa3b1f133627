import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  DEFAULT_WEBHOOK_RETRIES,
  nextRetryDelay,
  parseDuration,
  parseRetrySchedule,
} from '../../src/webhooks/retry-schedule.ts'

const FAILED = { status: 500, error: 'http_status' }

test('the default schedule is 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; durations parse or refuse', () => {
  assert.deepEqual(
    parseRetrySchedule(DEFAULT_WEBHOOK_RETRIES),
    [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
  )
  assert.equal(parseDuration('250ms'), 250)
  assert.equal(parseDuration('5d'), 432_000_000)
  for (const bad of ['', '5', 'five s', '5 y', '-1s', '1s,'])
    assert.throws(() => parseRetrySchedule(bad), /duration/, bad)
})

test('nextRetryDelay: the n-th delay with ±20 % jitter, the last one repeating', () => {
  const schedule = [1_000, 10_000]
  assert.equal(
    nextRetryDelay(schedule, 1, FAILED, () => 0.5),
    1_000,
  )
  assert.equal(
    nextRetryDelay(schedule, 1, FAILED, () => 0),
    800,
  )
  assert.equal(
    nextRetryDelay(schedule, 1, FAILED, () => 1),
    1_200,
  )
  assert.equal(
    nextRetryDelay(schedule, 2, FAILED, () => 0.5),
    10_000,
  )
  assert.equal(
    nextRetryDelay(schedule, 9, FAILED, () => 0.5),
    10_000,
  )
})

test('nextRetryDelay: at least a minute after a 429 or a timeout; Retry-After honoured, capped at a day', () => {
  const schedule = [1_000]
  assert.equal(
    nextRetryDelay(schedule, 1, { status: 429, error: 'http_status' }, () => 0.5),
    60_000,
  )
  assert.equal(
    nextRetryDelay(schedule, 1, { status: null, error: 'timeout' }, () => 0.5),
    60_000,
  )
  assert.equal(
    nextRetryDelay(schedule, 1, { ...FAILED, retryAfterMs: 7_000 }, () => 0.5),
    7_000,
  )
  assert.equal(
    nextRetryDelay(schedule, 1, { ...FAILED, retryAfterMs: 10 ** 12 }, () => 0.5),
    86_400_000,
  )
})
