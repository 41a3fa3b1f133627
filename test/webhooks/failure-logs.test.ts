import { test } from 'node:test'
import assert from 'node:assert/strict'
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.ts'
import { runWebhookWorker, type WorkerDeps } from '../../src/webhooks/worker.ts'
import { OwnerRate } from '../../src/webhooks/owner-rate.ts'
import type { WebhookRecord } from '../../src/store/index.ts'
import { capturedLog } from '../_helpers/captured-log.ts'
import { until } from '../_helpers/store.ts'

/*
 * The webhook loops' unexpected failures (the store, the stream; not the endpoint, whose failures are attempts) go
 * through the failure log: the first in full with its error, repeats as one count once the loop recovers.
 */

const RECORD = {
  id: 'wh_1',
  ownerKeyId: 'key_1',
  url: 'http://127.0.0.1:9/',
  query: 'receiver:eosio.token',
  finality: 'reversible',
  startBlock: 1,
  cursor: '',
  secret: 'whsec_x',
  paused: false,
  disabled: undefined,
} as unknown as WebhookRecord

/** Worker dependencies whose parts a test replaces; anything else it reaches throws. */
function depsWith(parts: { store?: object; graphql?: object }, log = capturedLog()): WorkerDeps {
  const unreachable = () => {
    throw new Error('not reached in this test')
  }
  return {
    store: { webhook: async () => RECORD, stepsOfBlock: unreachable, ...parts.store },
    graphql: parts.graphql ?? { subscribe: unreachable, context: () => ({}) },
    operation: {},
    encoding: {},
    eventSteps: { stepOf: unreachable, stepsOf: unreachable },
    post: unreachable,
    sign: unreachable,
    retries: [50],
    disableAfterMs: 86_400_000,
    ownerRate: new OwnerRate(1000, Date.now),
    now: Date.now,
    log,
  } as unknown as WorkerDeps
}

test('a worker whose stream fails twice logs the failure once in full, then the repeat as a count and the recovery', async () => {
  const log = capturedLog()
  let failures = 2
  const graphql = {
    context: () => ({}),
    async subscribe() {
      if (failures-- > 0) throw new Error('the store is restarting')
      // The stream opens and ends: the pass stops with nothing to deliver.
      return { events: (async function* () {})(), payload: async () => '' }
    },
  }
  const abort = new AbortController()
  await runWebhookWorker(RECORD.id, depsWith({ graphql }, log), abort.signal)
  assert.deepEqual(
    log.lines.map((l, i) => [l.level, log.messages()[i], l.fields.webhook_id]),
    [
      ['warn', 'webhook worker: a delivery pass failed: the store is restarting', 'wh_1'],
      ['warn', 'webhook worker: a delivery pass failed 1 more time in the last N s: the store is restarting', 'wh_1'],
      ['info', 'webhook worker: a delivery pass recovered', 'wh_1'],
    ],
  )
  assert.match(String((log.lines[0].fields.err as Error).stack), /the store is restarting\n\s+at /)
})

test('a dispatcher whose scans fail logs the first failure in full and the repeats as one count on recovery', async () => {
  const log = capturedLog()
  let failures = 5
  let scans = 0
  const store = {
    async claimWebhookLease() {
      scans++
      if (failures-- > 0) throw new Error('connection refused')
      return true
    },
    pruneWebhookAttempts: async () => undefined,
    revokedApiKeyIds: async () => [],
    activeWebhooks: async () => [],
    releaseWebhookLease: async () => undefined,
  }
  const dispatcher = new WebhookDispatcher(depsWith({ store }, log))
  dispatcher.start()
  try {
    // Each notification asks for a scan at once instead of the next one in 2 s.
    await until(() => {
      dispatcher.notify()
      return scans > 6
    }, 'seven scans')
  } finally {
    await dispatcher.close()
  }
  assert.deepEqual(
    log.lines.map((l, i) => [l.level, log.messages()[i]]),
    [
      ['warn', 'webhook dispatcher failed: connection refused'],
      ['warn', 'webhook dispatcher failed 4 more times in the last N s: connection refused'],
      ['info', 'webhook dispatcher recovered'],
    ],
  )
})
