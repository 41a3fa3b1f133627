import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createLiveHub, type LiveStep } from '../../src/live/index.ts'
import { openStore } from '../../src/store/index.ts'
import { startIndexerThread } from '../../src/cli/indexer-thread.ts'
import { createLogger } from '../../src/cli/logger.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { tempDir, withDevchain } from '../_helpers/devchain.ts'
import { until } from './fake-source.ts'

test('in-process wake-up: the indexer thread wakes a non-polling hub after each commit; the subscriber gets the store step log exactly, forks included', async (t) => {
  const devchain = await withDevchain(t, { blockTimeMs: 40, forkRate: 0.15, workload: 'demo' })
  const dataDir = tempDir(t)
  const store = await openStore({ store: 'sqlite', dataDir })
  onCleanup(t, () => store.close())
  const hub = createLiveHub({ source: store, pollIntervalMs: 0 })
  let wakeUps = 0
  const indexer = startIndexerThread(
    { shipUrl: devchain.ship, store: 'sqlite', dataDir, startBlockNum: 1 },
    createLogger({ level: 'silent' }),
    () => {
      wakeUps++
      hub.notify()
    },
  )
  const got: LiveStep[] = []
  const errors: unknown[] = []
  try {
    hub.subscribe({ afterSeq: 0, onSteps: (steps) => void got.push(...steps), onError: (error) => errors.push(error) })
    await until(
      () => got.filter((s) => s.step.type === 'undo').length >= 3 && got.length >= 150,
      'steps with forks through the hub',
      60_000,
    )
  } finally {
    await indexer.stop()
  }
  hub.notify()
  const all = await store.stepsAfter(0, 1_000_000)
  await until(() => got.length === all.length, `all ${all.length} steps (got ${got.length})`)
  await hub.close()
  await store.close()
  assert.deepEqual(
    got.map((s) => s.step),
    all,
  )
  assert.ok(
    got.every(
      (s) => s.payload !== undefined && s.payload.block.id === s.step.blockId && s.payload.step.seq === s.step.seq,
    ),
  )
  assert.ok(got.some((s) => s.payload!.actions.length > 0))
  assert.ok(wakeUps > 0)
  assert.deepEqual(errors, [])
})
