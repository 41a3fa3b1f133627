import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createIngestMeter } from '../../src/cli/ingest-meter.ts'

test('the ingest meter: totals since start, rates over the last seconds, memory bounded by the window', () => {
  let clock = 1_000_000
  const meter = createIngestMeter(10, () => clock)
  assert.deepEqual(meter.snapshot(), {
    blocks: 0,
    actionTraces: 0,
    rowChanges: 0,
    nodeHead: undefined,
    blocksPerSecond: 0,
    actionTracesPerSecond: 0,
    rowChangesPerSecond: 0,
  })
  // 20 seconds at 4 blocks a second (30 traces, 5 row changes each): the rates are the last 10 seconds'.
  for (let i = 0; i < 80; i++) {
    meter.record({ head: 500 + i, actions: 30, rowChanges: 5 })
    clock += 250
  }
  const steady = meter.snapshot()
  assert.deepEqual([steady.blocks, steady.actionTraces, steady.rowChanges, steady.nodeHead], [80, 2400, 400, 579])
  assert.ok(Math.abs(steady.blocksPerSecond - 4) < 0.5, String(steady.blocksPerSecond))
  assert.ok(Math.abs(steady.actionTracesPerSecond - 120) < 15, String(steady.actionTracesPerSecond))
  assert.ok(Math.abs(steady.rowChangesPerSecond - 20) < 2.5, String(steady.rowChangesPerSecond))
  // Just after start the window is the time since start, not 10 s.
  const early = createIngestMeter(10, () => clock)
  early.record({ head: 1, actions: 3 })
  clock += 500
  assert.ok(Math.abs(early.snapshot().blocksPerSecond - 2) < 0.01, String(early.snapshot().blocksPerSecond))
  // A stall: 11 seconds later nothing is in the window, the totals stay.
  clock += 11_000
  const stalled = meter.snapshot()
  assert.deepEqual([stalled.blocks, stalled.blocksPerSecond, stalled.actionTracesPerSecond], [80, 0, 0])
  // A million blocks over a day keep at most 10 buckets (the rates stay exact for the window).
  for (let i = 0; i < 1_000_000; i++) {
    meter.record({ head: i, actions: 1 })
    clock += 86
  }
  const day = meter.snapshot()
  assert.equal(day.blocks, 1_000_080)
  assert.ok(Math.abs(day.blocksPerSecond - 1000 / 86) < 1, String(day.blocksPerSecond))
})
