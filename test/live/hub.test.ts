import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  createLiveHub,
  type LiveHub,
  type LiveHubOptions,
  type LiveStep,
  type Subscription,
} from '../../src/live/index.ts'
import type { AntlerError } from '../../src/antelope/index.ts'
import { capturedLog } from '../_helpers/captured-log.ts'
import { mulberry32 } from '../_helpers/random.ts'
import { FakeSource, sleep, until } from './fake-source.ts'

/** A subscriber recording what it receives; `delay` makes it async. */
function collect(
  hub: LiveHub,
  afterSeq: number,
  delay?: () => number,
): { seqs: number[]; steps: LiveStep[]; errors: unknown[]; subscription: Subscription; sawCatchUp: boolean } {
  const out = {
    seqs: [] as number[],
    steps: [] as LiveStep[],
    errors: [] as unknown[],
    subscription: undefined as unknown as Subscription,
    sawCatchUp: false,
  }
  out.subscription = hub.subscribe({
    afterSeq,
    onSteps: async (steps) => {
      if (out.subscription?.state === 'catching_up') out.sawCatchUp = true
      for (const s of steps) {
        out.seqs.push(s.step.seq)
        out.steps.push(s)
      }
      const ms = delay?.() ?? 0
      if (ms > 0) await sleep(ms)
    },
    onError: (error) => out.errors.push(error),
  })
  return out
}

/** Waits until the shared reader has read the whole log and no read is in flight. */
async function caughtUp(hub: LiveHub, source: FakeSource, what: string): Promise<void> {
  await until(() => hub.lastSeq === source.steps.at(-1)!.seq && source.concurrentReads === 0, what)
  await sleep(5)
}

const seqsAfter = (source: FakeSource, afterSeq: number): number[] =>
  source.steps.filter((s) => s.seq > afterSeq).map((s) => s.seq)

async function withHub(
  source: FakeSource,
  options: Omit<LiveHubOptions, 'source'>,
  body: (hub: LiveHub) => Promise<void>,
): Promise<void> {
  const hub = createLiveHub({ source, pollIntervalMs: 0, ...options })
  try {
    await hub.ready()
    await body(hub)
  } finally {
    await hub.close()
  }
}

test('one reader fans out to 200 subscribers: the store is read the same number of times as for one, each step payload once', async () => {
  const source = new FakeSource()
  source.add(50)
  await withHub(source, { batchSize: 64 }, async (hub) => {
    await caughtUp(hub, source, 'the first read')
    const start = hub.lastSeq
    const before = { stepsAfter: source.stepsAfterCalls, payloads: source.payloadsRead }
    const subscribers = Array.from({ length: 200 }, () => collect(hub, start))
    const rounds = 10
    for (let round = 0; round < rounds; round++) {
      source.add(20)
      hub.notify()
      await caughtUp(hub, source, `round ${round}`)
    }
    const expected = seqsAfter(source, start)
    await until(
      () => subscribers.every((s) => s.seqs.length >= expected.length),
      'every subscriber to receive every step',
    )
    for (const s of subscribers) assert.deepEqual(s.seqs, expected)
    for (const s of subscribers) assert.equal(s.subscription.state, 'live')
    assert.ok(subscribers[0].steps.every((s) => s.payload?.step.seq === s.step.seq && !s.pastRetention))
    // One read per notify (each round fits one batch), whatever the number of subscribers.
    assert.equal(source.stepsAfterCalls - before.stepsAfter, rounds)
    assert.equal(source.payloadsRead - before.payloads, expected.length)
    assert.equal(source.maxConcurrentReads, 1)
    assert.equal(hub.subscriptionCount, 200)
  })
})

test('catch-up from behind the ring, then live: randomized, every subscriber gets exactly the log after its start, in order', async () => {
  const seed = Number(process.env.LIVE_SEED ?? Date.now() % 1_000_000)
  console.log(`live hub catch-up seed: ${seed} (LIVE_SEED=${seed} replays it)`)
  const random = mulberry32(seed)
  const source = new FakeSource()
  source.add(300 + Math.floor(random() * 300), random)
  source.retainedAfter = source.steps[Math.floor(random() * 100)].seq
  source.delayMs = () => (random() < 0.3 ? Math.floor(random() * 3) : 0)
  const batchSize = 1 + Math.floor(random() * 16)
  const ringSize = Math.floor(random() * 40)
  await withHub(
    source,
    { batchSize, ringSize, maxQueuedSteps: 100_000, catchUpConcurrency: 1 + Math.floor(random() * 3) },
    async (hub) => {
      const subscribers: { afterSeq: number; got: ReturnType<typeof collect> }[] = []
      for (let round = 0; round < 40; round++) {
        for (let i = Math.floor(random() * 4); i > 0; i--) {
          const tail = source.steps.at(-1)!.seq
          // From anywhere: the start of the log, far behind the ring, inside it, at the end or past it.
          const afterSeq = random() < 0.1 ? 0 : Math.floor(random() * (tail + 5))
          subscribers.push({
            afterSeq,
            got: collect(hub, afterSeq, random() < 0.5 ? () => Math.floor(random() * 3) : undefined),
          })
        }
        source.add(Math.floor(random() * 8), random)
        if (random() < 0.8) hub.notify()
        await sleep(Math.floor(random() * 4))
      }
      hub.notify()
      for (const [i, s] of subscribers.entries()) {
        const expected = seqsAfter(source, s.afterSeq)
        await until(
          () => s.got.seqs.length >= expected.length && s.got.subscription.state === 'live',
          `subscriber ${i} (after ${s.afterSeq}, seed ${seed})`,
        )
        assert.deepEqual(s.got.seqs, expected, `subscriber ${i} after ${s.afterSeq} (seed ${seed})`)
        assert.deepEqual(
          s.got.steps.map((x) => x.pastRetention),
          expected.map((seq) => seq <= source.retainedAfter),
          `retention markers of subscriber ${i} (seed ${seed})`,
        )
        assert.ok(s.got.steps.every((x) => x.pastRetention === (x.payload === undefined)))
        assert.deepEqual(s.got.errors, [])
      }
      assert.ok(
        subscribers.some((s) => s.got.sawCatchUp),
        `some subscriber caught up before going live (seed ${seed})`,
      )
    },
  )
})

test('a subscriber starting behind a full ring catches up from the store while steps keep arriving, and switches to live without a gap or a duplicate', async () => {
  const source = new FakeSource()
  source.add(400)
  source.delayMs = () => 1
  await withHub(source, { batchSize: 8, ringSize: 16 }, async (hub) => {
    await caughtUp(hub, source, 'the first read')
    const got = collect(hub, 0, () => 1)
    assert.equal(got.subscription.state, 'catching_up')
    const before = source.stepsAfterCalls
    for (let i = 0; i < 30; i++) {
      source.add(3)
      hub.notify()
      await sleep(3)
    }
    await until(() => got.subscription.state === 'live', 'the switch to live')
    source.add(5)
    hub.notify()
    await until(() => got.seqs.length === source.steps.length, 'every step')
    assert.deepEqual(got.seqs, seqsAfter(source, 0))
    assert.ok(got.sawCatchUp)
    assert.ok(source.stepsAfterCalls - before > 400 / 8, 'the catch-up read the store itself')
  })
})

test('notifies during a read are coalesced into one more read; never two shared reads at once', async () => {
  const source = new FakeSource()
  source.add(10)
  await withHub(source, { batchSize: 64 }, async (hub) => {
    await caughtUp(hub, source, 'the first read')
    await sleep(10)
    const got = collect(hub, hub.lastSeq)
    const before = source.stepsAfterCalls
    source.hold()
    source.add(5)
    hub.notify()
    await until(() => source.concurrentReads === 1, 'the held read')
    for (let i = 0; i < 25; i++) {
      source.add(1)
      hub.notify()
      hub.wake()
    }
    source.unhold()
    await until(() => got.seqs.length === 30, 'the 30 new steps')
    await sleep(20)
    assert.equal(source.stepsAfterCalls - before, 2, 'the held read, then exactly one more')
    assert.equal(source.maxConcurrentReads, 1)
    assert.equal(got.seqs.length, 30)
  })
})

test('without notify, the hub polls every pollIntervalMs; with polling off it waits to be woken', async () => {
  const polled = new FakeSource()
  polled.add(5)
  await withHub(polled, { pollIntervalMs: 20 }, async (hub) => {
    const got = collect(hub, 0)
    await until(() => got.seqs.length === 5, 'the initial steps')
    polled.add(7)
    await until(() => got.seqs.length === 12, 'steps found by polling', 2000)
    assert.deepEqual(got.seqs, seqsAfter(polled, 0))
  })
  const woken = new FakeSource()
  woken.add(5)
  await withHub(woken, { pollIntervalMs: 0 }, async (hub) => {
    const got = collect(hub, 0)
    await until(() => got.seqs.length === 5, 'the initial steps')
    woken.add(7)
    await sleep(150)
    assert.equal(got.seqs.length, 5, 'nothing read without a wake-up')
    hub.wake()
    await until(() => got.seqs.length === 12, 'steps read once woken')
  })
})

test('a slow subscriber over the step bound is dropped with stream_consumer_too_slow_error; a fast one keeps receiving', async () => {
  const source = new FakeSource()
  source.add(3)
  await withHub(source, { batchSize: 4, maxQueuedSteps: 8 }, async (hub) => {
    await caughtUp(hub, source, 'the first read')
    const start = hub.lastSeq
    const stuck = { calls: 0, errors: [] as unknown[] }
    const slow = hub.subscribe({
      afterSeq: start,
      onSteps: () => (stuck.calls++, new Promise<void>(() => undefined)),
      onError: (error) => stuck.errors.push(error),
    })
    const fast = collect(hub, start)
    for (let round = 0; round < 10; round++) {
      source.add(3)
      hub.notify()
      await caughtUp(hub, source, `round ${round}`)
    }
    await until(() => fast.seqs.length === 30, 'the fast subscriber')
    assert.deepEqual(fast.seqs, seqsAfter(source, start))
    assert.equal(stuck.errors.length, 1)
    const error = stuck.errors[0] as AntlerError
    assert.equal(error.code, 'stream_consumer_too_slow_error')
    assert.equal(error.details.max_queued_steps, 8)
    assert.ok((error.details.queued_steps as number) > 8)
    assert.equal(error.details.delivered_seq, start)
    assert.equal(slow.state, 'closed')
    assert.equal(stuck.calls, 1, 'one batch handed over, never more')
    assert.equal(hub.subscriptionCount, 1)
    assert.deepEqual(fast.errors, [])
  })
})

test('the byte bound drops a slow subscriber too', async () => {
  const source = new FakeSource()
  source.payloadDataBytes = 10_000
  source.add(1)
  await withHub(source, { batchSize: 4, maxQueuedBytes: 50_000 }, async (hub) => {
    await caughtUp(hub, source, 'the first read')
    const errors: unknown[] = []
    hub.subscribe({
      afterSeq: hub.lastSeq,
      onSteps: () => new Promise<void>(() => undefined),
      onError: (error) => errors.push(error),
    })
    const fast = collect(hub, hub.lastSeq)
    source.add(3)
    hub.notify()
    await until(() => fast.seqs.length === 3, 'the first steps')
    assert.deepEqual(errors, [])
    source.add(6)
    hub.notify()
    await until(() => errors.length === 1, 'the drop')
    assert.equal((errors[0] as AntlerError).code, 'stream_consumer_too_slow_error')
    assert.ok(((errors[0] as AntlerError).details.queued_bytes as number) > 50_000)
    await until(() => fast.seqs.length === 9, 'the fast subscriber')
  })
})

test('an onSteps that throws ends its subscription with that error; the others go on', async () => {
  const source = new FakeSource()
  await withHub(source, {}, async (hub) => {
    const errors: unknown[] = []
    const failing = hub.subscribe({
      afterSeq: 0,
      onSteps: () => {
        throw new Error('socket gone')
      },
      onError: (error) => errors.push(error),
    })
    const ok = collect(hub, 0)
    source.add(4)
    hub.notify()
    await until(() => ok.seqs.length === 4 && errors.length === 1, 'the steps and the error')
    assert.equal((errors[0] as Error).message, 'socket gone')
    assert.equal(failing.state, 'closed')
  })
})

test('close: a closed subscription receives nothing more; a closed hub reads no more, polls no more, and ends its subscriptions', async () => {
  const source = new FakeSource()
  source.add(2)
  const hub = createLiveHub({ source, pollIntervalMs: 10 })
  await hub.ready()
  const closedEarly = collect(hub, 0)
  const kept = collect(hub, 0)
  await until(() => kept.seqs.length === 2 && closedEarly.seqs.length === 2, 'the first steps')
  closedEarly.subscription.close()
  assert.equal(closedEarly.subscription.state, 'closed')
  source.add(3)
  hub.notify()
  await until(() => kept.seqs.length === 5, 'the next steps')
  assert.equal(closedEarly.seqs.length, 2)
  assert.equal(hub.subscriptionCount, 1)
  await hub.close()
  assert.equal(kept.subscription.state, 'closed')
  assert.equal(hub.subscriptionCount, 0)
  const reads = source.stepsAfterCalls
  source.add(3)
  hub.notify()
  await sleep(60)
  assert.equal(source.stepsAfterCalls, reads, 'no read after close (neither woken nor polled)')
  assert.equal(kept.seqs.length, 5)
  assert.deepEqual([...kept.errors, ...closedEarly.errors], [])
  const late = collect(hub, 0)
  assert.equal(late.subscription.state, 'closed')
})

test('the hub starts at the end of the log: lastSeq is the newest step once ready, without reading the log from the start', async () => {
  const source = new FakeSource()
  source.add(5000)
  const hub = createLiveHub({ source, batchSize: 64, pollIntervalMs: 0 })
  try {
    await hub.ready()
    await caughtUp(hub, source, 'the end of the log')
    assert.ok(source.payloadsRead < 64, `read ${source.payloadsRead} payloads`)
  } finally {
    await hub.close()
  }
})

test('a subscriber ahead of the shared reader (the store holds steps the hub has not read yet) gets nothing twice and nothing before its start', async () => {
  const source = new FakeSource()
  source.add(10)
  await withHub(source, { ringSize: 0 }, async (hub) => {
    await caughtUp(hub, source, 'the first read')
    source.add(10)
    // No notify: the hub is 10 steps behind the store.
    const ahead = collect(hub, source.steps[15].seq)
    const overtaking = collect(hub, 0)
    await until(() => ahead.subscription.state === 'live' && overtaking.subscription.state === 'live', 'both live')
    assert.ok(
      overtaking.seqs.length === 20 && hub.lastSeq < source.steps[19].seq,
      `the catch-up read past the hub: ${overtaking.seqs.length} ${hub.lastSeq} ${source.steps[19].seq}`,
    )
    source.add(4)
    hub.notify()
    await caughtUp(hub, source, 'the hub to read on')
    await sleep(10)
    assert.deepEqual(ahead.seqs, seqsAfter(source, source.steps[15].seq))
    assert.deepEqual(overtaking.seqs, seqsAfter(source, 0))
  })
})

test('a failed shared read is logged (a repeat as a count) and retried after retryDelayMs, without a wake-up', async () => {
  const source = new FakeSource()
  source.add(3)
  const log = capturedLog()
  await withHub(source, { retryDelayMs: 20, log }, async (hub) => {
    await caughtUp(hub, source, 'the first read')
    const got = collect(hub, hub.lastSeq)
    source.failures = 2
    source.add(4)
    hub.notify()
    await until(() => got.seqs.length === 4, 'the steps after two failed reads', 2000)
    assert.deepEqual(log.messages(), [
      'live hub: reading the step log failed: store unavailable',
      'live hub: reading the step log failed 1 more time in the last N s: store unavailable',
      'live hub: reading the step log recovered',
    ])
    assert.match(String((log.lines[0].fields.err as Error).stack), /store unavailable/)
    assert.deepEqual(got.errors, [])
  })
})

test('far behind the log with no live subscription, the hub moves on without reading payloads; a late subscriber still gets everything from the store', async () => {
  const source = new FakeSource()
  source.add(5)
  await withHub(source, { batchSize: 16, ringSize: 8 }, async (hub) => {
    await caughtUp(hub, source, 'the first read')
    const start = hub.lastSeq
    const before = source.payloadsRead
    source.add(1000)
    hub.notify()
    await caughtUp(hub, source, 'the end of the log')
    assert.ok(source.payloadsRead - before < 16, `read ${source.payloadsRead - before} payloads for 1000 steps`)
    const late = collect(hub, start)
    await until(() => late.seqs.length === 1000 && late.subscription.state === 'live', 'the late subscriber')
    assert.deepEqual(late.seqs, seqsAfter(source, start))
    assert.ok(late.steps.every((s) => s.payload?.step.seq === s.step.seq))
  })
})
