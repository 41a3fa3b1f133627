import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomInt } from 'node:crypto'
import { createGraphqlRuntime, type GraphqlRuntime } from '../../src/graphql/index.ts'
import { createLiveHub } from '../../src/live/index.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { mulberry32 } from '../_helpers/random.ts'
import { until } from '../_helpers/store.ts'
import { startHarness } from '../search/harness.ts'
import { workloadStep } from '../search/workload.ts'

/*
 * The shared fan-out (issue 26): subscriptions of one shape on one runtime receive live results built, executed and
 * serialized once. Two subscribers of one query and one of another, on one runtime, must each receive exactly the
 * payloads a subscriber of its query receives alone (on a runtime and hub of its own, sharing nothing), forks
 * included; and the shared runtime must have executed fewer events than it sent.
 *
 * ANTLER_TEST_SEED=<n> replays a run.
 */

const SEED =
  process.env.ANTLER_TEST_SEED !== undefined ? Number(process.env.ANTLER_TEST_SEED) >>> 0 : randomInt(2 ** 31)
const QUERY = `subscription ($q: String!, $cursor: String) {
  searchTransactionsForward(query: $q, cursor: $cursor, lowBlockNum: 1) {
    undo cursor isIrreversible irreversibleBlockNum block { num id } trace { id matchingActions { seq receiver name } }
  }
}`

/** One runtime with its own hub, counting the events it executed. */
function sharedRuntime(h: Awaited<ReturnType<typeof startHarness>>, t: Parameters<typeof onCleanup>[0]) {
  const hub = createLiveHub({ source: h.store, pollIntervalMs: 10 })
  onCleanup(t, () => hub.close())
  const runtime: GraphqlRuntime = createGraphqlRuntime({
    search: h.search,
    store: h.store,
    live: hub,
    cursorKey: h.cursorKey,
  })
  const counted = { executions: 0 }
  const encoding = { name: 'counted', encode: (result: unknown) => (counted.executions++, JSON.stringify(result)) }
  return { hub, runtime, encoding, counted }
}

/** A subscriber recording every payload it is sent, as text. */
async function subscribe(
  on: ReturnType<typeof sharedRuntime>,
  q: string,
  cursor?: string,
): Promise<{ payloads: string[]; stop(): Promise<void> }> {
  const operation = on.runtime.prepare({ query: QUERY, variables: { q, ...(cursor ? { cursor } : {}) } }, [
    'subscription',
  ])
  const started = await on.runtime.subscribe(operation, on.runtime.context(), on.encoding)
  if (!('events' in started)) throw new Error(JSON.stringify(started.errors))
  const payloads: string[] = []
  const done = (async () => {
    for (;;) {
      const next = await started.events.next()
      if (next.done) return
      payloads.push(await started.payload(next.value))
    }
  })()
  return {
    payloads,
    async stop() {
      await started.events.return?.()
      await done
    },
  }
}

test(`shared fan-out (seed ${SEED}): two subscribers of one shape and one of another each receive exactly what they would alone, across forks`, async (t) => {
  t.diagnostic(`seed ${SEED} (rerun with ANTLER_TEST_SEED=${SEED})`)
  const rand = mulberry32(SEED)
  const h = await startHarness(t, { libDepth: 10, adapter: 'sqlite' })
  let forks = 0
  h.chain.subscribe((e) => void (e.type === 'fork' && forks++))
  for (let i = 0; i < 20; i++) workloadStep(h, rand)
  await h.synced()

  const shared = sharedRuntime(h, t)
  const alone = [sharedRuntime(h, t), sharedRuntime(h, t), sharedRuntime(h, t)]
  const [a, b] = ['receiver:eosio.token action:transfer', 'receiver:rawdb']
  // The chain is idle while they start: every subscriber starts from the same position.
  const subscribers = [
    { name: 'first of shape A', sub: await subscribe(shared, a), ref: await subscribe(alone[0], a) },
    { name: 'second of shape A', sub: await subscribe(shared, a), ref: await subscribe(alone[1], a) },
    { name: 'shape B', sub: await subscribe(shared, b), ref: await subscribe(alone[2], b) },
  ]
  onCleanup(t, () => Promise.all(subscribers.flatMap((s) => [s.sub.stop(), s.ref.stop()])))
  await Promise.all([shared, ...alone].map((r) => r.hub.ready()))

  for (let i = 0; i < 80; i++) {
    workloadStep(h, rand)
    if (i % 5 === 0) await h.synced()
    if (i % 3 === 0) await new Promise((resolve) => setTimeout(resolve, 5))
  }
  await h.synced()
  for (const r of [shared, ...alone]) r.hub.notify()
  assert.ok(forks >= 2, `the workload forked (${forks} forks)`)
  const undone = (payloads: string[]) => payloads.filter((p) => p.includes('"undo":true')).length
  for (const { name, sub, ref } of subscribers) {
    await until(
      () => sub.payloads.length === ref.payloads.length && sub.payloads.length > 0,
      `${name}: as many payloads as alone`,
      20_000,
    ).catch(() => undefined)
    assert.deepEqual(sub.payloads, ref.payloads, `seed ${SEED}: ${name} receives what it would alone`)
  }
  t.diagnostic(
    `forks ${forks}; payloads ${subscribers.map((s) => `${s.sub.payloads.length} (${undone(s.sub.payloads)} undos)`).join(', ')}; ` +
      `shared executions ${shared.counted.executions}`,
  )
  assert.ok(
    subscribers.some((s) => undone(s.sub.payloads) > 0),
    'some results were withdrawn by a fork',
  )
  const sent = subscribers.reduce((n, s) => n + s.sub.payloads.length, 0)
  // Live results of shape A are executed once for both of its subscribers.
  assert.ok(shared.counted.executions < sent, `executions ${shared.counted.executions} < payloads sent ${sent}`)
})
