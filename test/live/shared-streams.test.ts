import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomInt } from 'node:crypto'
import type { StreamOutput } from '../../src/api/stream/connection.ts'
import { parseFrame } from '../../src/api/stream/envelope.ts'
import { createStreamHandlers } from '../../src/api/stream/handlers.ts'
import { createLiveHub } from '../../src/live/index.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { mulberry32 } from '../_helpers/random.ts'
import { until } from '../_helpers/store.ts'
import { startHarness, type SearchHarness } from '../search/harness.ts'
import { workloadStep } from '../search/workload.ts'

/*
 * The shared fan-out of /v1/stream (issue 26): listeners of one shape on one hub share each step's serialized
 * messages. Two listeners of one shape and two of others (the same actions without dbops; table rows), on one hub and
 * one set of handlers, must each send exactly the frames a listener of its shape sends alone (on a hub and handlers of
 * its own), forks included (with_fork_steps: undo withdrawals; table deltas: undo steps).
 *
 * ANTLER_TEST_SEED=<n> replays a run.
 */

const SEED =
  process.env.ANTLER_TEST_SEED !== undefined ? Number(process.env.ANTLER_TEST_SEED) >>> 0 : randomInt(2 ** 31)

/** A hub and the stream handlers over it, as one API process has them. */
function server(h: SearchHarness, t: Parameters<typeof onCleanup>[0]) {
  const hub = createLiveHub({ source: h.store, pollIntervalMs: 10 })
  onCleanup(t, () => hub.close())
  const handlers = createStreamHandlers({
    store: h.store,
    feed: hub,
    state: undefined as never,
    lifecycle: undefined as never,
  })
  return { hub, handlers }
}

/** A listener of `request` recording every frame its stream writes, as text, with its own req_id. */
async function listen(on: ReturnType<typeof server>, request: Record<string, unknown>, reqId: string) {
  const frames: string[] = []
  const frame = parseFrame(Buffer.from(JSON.stringify({ ...request, req_id: reqId })), false)
  if (frame.pong) throw new Error('not a request')
  const output: StreamOutput = {
    send: (type, data) => void frames.push(JSON.stringify({ type, req_id: reqId, data })),
    sendRaw: (type, dataJson) =>
      void frames.push(`{"type":${JSON.stringify(type)},"req_id":"${reqId}","data":${dataJson}}`),
    error: (error) => void frames.push(`error ${(error as Error).message}`),
    closed: false,
    drain: async () => undefined,
  }
  const handler = on.handlers[frame.request.type as keyof typeof on.handlers]
  const listener = await handler(frame.request, output)
  return { frames, close: () => listener?.close() }
}

const ACTIONS = {
  type: 'get_action_traces',
  listen: true,
  data: { accounts: 'eosio.token', action_names: 'transfer', with_fork_steps: true, with_dbops: true },
}
/** Another shape: the same actions without their dbops. */
const OTHER_ACTIONS = { ...ACTIONS, data: { ...ACTIONS.data, with_dbops: false } }
const ROWS = { type: 'get_table_rows', listen: true, data: { code: 'eosio.token', scope: 'alice', table: 'accounts' } }

test(`/v1/stream shared fan-out (seed ${SEED}): two listeners of one shape and two of others each send exactly what they would alone, across forks`, async (t) => {
  t.diagnostic(`seed ${SEED} (rerun with ANTLER_TEST_SEED=${SEED})`)
  const rand = mulberry32(SEED)
  const h = await startHarness(t, { libDepth: 10, adapter: 'sqlite' })
  let forks = 0
  h.chain.subscribe((e) => void (e.type === 'fork' && forks++))
  for (let i = 0; i < 10; i++) workloadStep(h, rand)
  await h.synced()

  const shared = server(h, t)
  const alone = [server(h, t), server(h, t), server(h, t), server(h, t)]
  await Promise.all([shared, ...alone].map((s) => s.hub.ready()))
  // The chain is idle while they start: every listener starts at the same head.
  const listeners = [
    {
      name: 'first of the action shape',
      sub: await listen(shared, ACTIONS, 'a1'),
      ref: await listen(alone[0], ACTIONS, 'a1'),
    },
    {
      name: 'second of the action shape',
      sub: await listen(shared, ACTIONS, 'a2'),
      ref: await listen(alone[1], ACTIONS, 'a2'),
    },
    {
      name: 'the action shape without dbops',
      sub: await listen(shared, OTHER_ACTIONS, 'b'),
      ref: await listen(alone[3], OTHER_ACTIONS, 'b'),
    },
    { name: 'table rows', sub: await listen(shared, ROWS, 'r'), ref: await listen(alone[2], ROWS, 'r') },
  ]
  onCleanup(t, () => listeners.forEach((l) => (l.sub.close(), l.ref.close())))
  await new Promise((resolve) => setTimeout(resolve, 200))

  for (let i = 0; i < 80; i++) {
    workloadStep(h, rand)
    if (i % 5 === 0) await h.synced()
    if (i % 3 === 0) await new Promise((resolve) => setTimeout(resolve, 5))
  }
  await h.synced()
  for (const s of [shared, ...alone]) s.hub.notify()
  assert.ok(forks >= 2, `the workload forked (${forks} forks)`)
  for (const { name, sub, ref } of listeners) {
    await until(
      () => sub.frames.length === ref.frames.length && sub.frames.length > 1,
      `${name}: as many frames as alone`,
      20_000,
    ).catch(() => undefined)
    assert.deepEqual(sub.frames, ref.frames, `seed ${SEED}: ${name} sends what it would alone`)
  }
  const undos = (frames: string[]) => frames.filter((f) => f.includes('"step":"undo"')).length
  t.diagnostic(
    `forks ${forks}; frames ${listeners.map((l) => `${l.sub.frames.length} (${undos(l.sub.frames)} undo)`).join(', ')}`,
  )
  assert.ok(
    listeners.every((l) => undos(l.sub.frames) > 0),
    'every listener saw a fork',
  )
})
