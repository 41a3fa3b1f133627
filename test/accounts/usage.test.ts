import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import {
  createUsageRecorder,
  hourOf,
  rowsByKey,
  usageByWindow,
  USAGE_HISTORY_MS,
  type UsageRecorder,
} from '../../src/accounts/index.ts'
import type { FailureLogger } from '../../src/antelope/index.ts'
import { createApiKeyService } from '../../src/auth/index.ts'
import type { KeyUsageRecord, Store } from '../../src/store/index.ts'
import { BASE_MS, fakeClock, openTempStore, type FakeClock } from '../_helpers/accounts.ts'
import { capturedLog } from '../_helpers/captured-log.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { until } from '../_helpers/store.ts'

/*
 * Per-key usage: the portal's windows over hourly rows (usageByWindow, rowsByKey), and the recorder that counts in
 * memory and adds its rows to a real SQLite store on flush, keeping them across a failed write.
 */

const HOUR = 3_600_000
const TIMEOUT = { timeout: 30_000 }

const row = (keyId: string, hourMs: number, counts: Partial<KeyUsageRecord> = {}): KeyUsageRecord => ({
  keyId,
  hourMs,
  ok: 0,
  clientErrors: 0,
  authFailures: 0,
  rateLimited: 0,
  documents: 0,
  ...counts,
})

/** A recorder over `store` that never flushes on its own (the test flushes), closed before the store. */
function recorderOn(
  t: TestContext,
  store: Parameters<typeof createUsageRecorder>[0]['store'],
  clock: FakeClock,
  log?: FailureLogger,
): UsageRecorder {
  const recorder = createUsageRecorder({ store, now: clock.now, intervalMs: 24 * HOUR, log })
  onCleanup(t, () => recorder.close())
  return recorder
}

test(
  'usageByWindow: the N-hour window holds the current hour and the N - 1 before it, not the N-th before',
  TIMEOUT,
  () => {
    const current = BASE_MS
    // One row per edge, each counting a distinct power of two: a window's `ok` tells which rows it summed.
    const edges = [
      { hoursBack: 0, bit: 1 },
      { hoursBack: 23, bit: 2 },
      { hoursBack: 24, bit: 4 },
      { hoursBack: 7 * 24 - 1, bit: 8 },
      { hoursBack: 7 * 24, bit: 16 },
      { hoursBack: 30 * 24 - 1, bit: 32 },
      { hoursBack: 30 * 24, bit: 64 },
    ]
    const rows = edges.map(({ hoursBack, bit }) =>
      row('k', current - hoursBack * HOUR, {
        ok: bit,
        clientErrors: 2 * bit,
        authFailures: 3 * bit,
        rateLimited: 4 * bit,
        documents: 5 * bit,
      }),
    )
    const totals = (ok: number) => ({
      ok,
      clientErrors: 2 * ok,
      authFailures: 3 * ok,
      rateLimited: 4 * ok,
      documents: 5 * ok,
    })
    const expected = [
      { window: '24 h', totals: totals(1 + 2) },
      { window: '7 d', totals: totals(1 + 2 + 4 + 8) },
      { window: '30 d', totals: totals(1 + 2 + 4 + 8 + 16 + 32) },
    ]
    // Anywhere within the current hour: the same windows.
    for (const nowMs of [current, current + 1, current + HOUR / 2, current + HOUR - 1])
      assert.deepEqual(usageByWindow(rows, nowMs), expected, `now = hour + ${nowMs - current} ms`)
    // The next hour: every window moves on by one hour.
    assert.deepEqual(
      usageByWindow(rows, current + HOUR).map((w) => w.totals.ok),
      [1, 1 + 2 + 4, 1 + 2 + 4 + 8 + 16],
    )
    assert.deepEqual(
      usageByWindow([], current).map((w) => w.totals),
      [totals(0), totals(0), totals(0)],
    )
    assert.equal(USAGE_HISTORY_MS, 30 * 24 * HOUR, 'one read of 30 days covers the longest window')
    assert.equal(hourOf(current + HOUR - 1), current)
    assert.equal(hourOf(current + HOUR), current + HOUR)
  },
)

test('rowsByKey groups one read of many keys by key, keeping the order of each key rows', TIMEOUT, () => {
  const rows = [
    row('a', BASE_MS, { ok: 1 }),
    row('b', BASE_MS, { ok: 2 }),
    row('a', BASE_MS + HOUR, { ok: 3 }),
    row('c', BASE_MS, { ok: 4 }),
    row('b', BASE_MS + 2 * HOUR, { ok: 5 }),
  ]
  const byKey = rowsByKey(rows)
  assert.deepEqual([...byKey.keys()], ['a', 'b', 'c'])
  assert.deepEqual(
    byKey.get('a')!.map((r) => r.ok),
    [1, 3],
  )
  assert.deepEqual(
    byKey.get('b')!.map((r) => r.ok),
    [2, 5],
  )
  assert.deepEqual(byKey.get('c'), [rows[3]])
  assert.equal(byKey.get('d'), undefined)
  assert.equal(rowsByKey([]).size, 0)
})

test(
  'the recorder sums counts of one key and hour into one row and adds them to the store on flush',
  TIMEOUT,
  async (t) => {
    const { store } = openTempStore(t)
    const clock = fakeClock(BASE_MS + 10 * 60_000)
    const recorder = recorderOn(t, store, clock)
    recorder.count('key_a', 'ok', 3)
    recorder.count('key_a', 'ok', 1)
    clock.advance(40 * 60_000)
    recorder.count('key_a', 'clientErrors', 0)
    recorder.count('key_a', 'authFailures', 0)
    recorder.count('key_a', 'rateLimited', 0)
    recorder.count('key_a', 'rateLimited', 0)
    recorder.count('key_b', 'ok', 7)
    clock.advance(10 * 60_000 + 1) // the next hour
    recorder.count('key_a', 'ok', 2)
    assert.deepEqual(await store.keyUsage(['key_a', 'key_b'], 0), [], 'nothing written before the flush')

    await recorder.flush()
    const first = [
      row('key_a', BASE_MS, { ok: 2, clientErrors: 1, authFailures: 1, rateLimited: 2, documents: 4 }),
      row('key_a', BASE_MS + HOUR, { ok: 1, documents: 2 }),
      row('key_b', BASE_MS, { ok: 1, documents: 7 }),
    ]
    assert.deepEqual(await store.keyUsage(['key_a', 'key_b'], 0), first)
    assert.deepEqual(await store.keyUsage(['key_a'], BASE_MS + HOUR), [first[1]], 'read from an hour on')
    await recorder.flush()
    assert.deepEqual(await store.keyUsage(['key_a', 'key_b'], 0), first, 'a flush with nothing pending adds nothing')

    // More of the same hour: added to the stored row, not replacing it.
    recorder.count('key_a', 'ok', 10)
    await recorder.flush()
    assert.deepEqual(
      (await store.keyUsage(['key_a'], BASE_MS + HOUR))[0],
      row('key_a', BASE_MS + HOUR, { ok: 2, documents: 12 }),
    )
  },
)

test('a failed write keeps the counts for the next flush: nothing lost, nothing counted twice', TIMEOUT, async (t) => {
  const { store } = openTempStore(t)
  const clock = fakeClock()
  let failures = 1
  const writes: number[] = []
  const failing: Pick<Store, 'addKeyUsage' | 'touchApiKeys'> = {
    async addKeyUsage(rows) {
      writes.push(rows.length)
      if (failures > 0) {
        failures--
        throw new Error('the store is restarting')
      }
      return store.addKeyUsage(rows)
    },
    touchApiKeys: (used) => store.touchApiKeys(used),
  }
  const log = capturedLog()
  const recorder = recorderOn(t, failing, clock, log)
  recorder.count('key_a', 'ok', 5)
  recorder.count('key_a', 'clientErrors', 0)
  recorder.count('key_b', 'rateLimited', 0)
  await recorder.flush()
  assert.equal(log.lines.length, 1, 'the failure is logged')
  assert.match((log.lines[0].fields.err as Error).message, /restarting/)
  assert.deepEqual(await store.keyUsage(['key_a', 'key_b'], 0), [], 'nothing stored by the failed write')

  // Counted between the failure and the next flush: merged with the kept rows.
  recorder.count('key_a', 'ok', 1)
  recorder.count('key_c', 'authFailures', 0)
  await recorder.flush()
  assert.deepEqual(
    log.lines.slice(1).map((l) => [l.level, l.message]),
    [['info', 'usage: writing key usage recovered']],
    'the next write succeeded: one line says so',
  )
  const expected = [
    row('key_a', BASE_MS, { ok: 2, clientErrors: 1, documents: 6 }),
    row('key_b', BASE_MS, { rateLimited: 1 }),
    row('key_c', BASE_MS, { authFailures: 1 }),
  ]
  assert.deepEqual(await store.keyUsage(['key_a', 'key_b', 'key_c'], 0), expected)
  assert.deepEqual(writes, [2, 3], 'one write per flush, of one row per key and hour')
  await recorder.flush()
  assert.deepEqual(await store.keyUsage(['key_a', 'key_b', 'key_c'], 0), expected, 'not added a second time')
})

test("used() reaches the key's lastUsedAtMs on flush, also after a failed write", TIMEOUT, async (t) => {
  const { store } = openTempStore(t)
  const clock = fakeClock()
  const keys = createApiKeyService({ store, now: clock.now })
  const { record } = await keys.create({ type: 'server', name: 'backend' })
  const other = (await keys.create({ type: 'mobile', name: 'app' })).record
  let touchFailures = 0
  const store2: Pick<Store, 'addKeyUsage' | 'touchApiKeys'> = {
    addKeyUsage: (rows) => store.addKeyUsage(rows),
    async touchApiKeys(used) {
      if (touchFailures > 0) {
        touchFailures--
        throw new Error('touch failed')
      }
      return store.touchApiKeys(used)
    },
  }
  const recorder = recorderOn(t, store2, clock)
  assert.equal((await store.apiKeyById(record.id))?.lastUsedAtMs, undefined)
  clock.advance(5_000)
  recorder.used(record.id)
  clock.advance(5_000)
  recorder.used(record.id) // the later use of the two wins
  await recorder.flush()
  assert.equal((await store.apiKeyById(record.id))?.lastUsedAtMs, BASE_MS + 10_000)
  assert.equal((await store.apiKeyById(other.id))?.lastUsedAtMs, undefined, 'an unused key is not touched')

  touchFailures = 1
  clock.advance(5_000)
  recorder.used(other.id)
  await recorder.flush()
  assert.equal((await store.apiKeyById(other.id))?.lastUsedAtMs, undefined, 'the write failed')
  await recorder.flush()
  assert.equal((await store.apiKeyById(other.id))?.lastUsedAtMs, BASE_MS + 15_000, 'kept and written next time')
})

test('the recorder flushes on its own every intervalMs, and close() writes what is pending', TIMEOUT, async (t) => {
  const { store } = openTempStore(t)
  const recorder = createUsageRecorder({ store, intervalMs: 50 })
  onCleanup(t, () => recorder.close())
  recorder.count('key_t', 'ok', 1)
  await until(async () => (await store.keyUsage(['key_t'], 0)).length === 1, 'the timer flush', 10_000)
  const closing = createUsageRecorder({ store, intervalMs: 24 * HOUR })
  closing.count('key_u', 'ok', 2)
  await closing.close()
  const [written] = await store.keyUsage(['key_u'], 0)
  assert.equal(written?.documents, 2, 'close() wrote the pending count')
  assert.equal(written.hourMs % HOUR, 0, 'an hour start')
})
