import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { BlockRecord, Step } from '../../src/store/index.ts'
import { planStream } from '../../src/hyperion/stream/plan.ts'
import { parseActionRequest, StreamRequestError } from '../../src/hyperion/stream/request.ts'

const HEAD = 100
const LIB = 80
const T0 = 1_700_000_000_000
const block = (num: number): BlockRecord => ({
  num,
  id: `id${num}`,
  previous: `id${num - 1}`,
  timestampMs: T0 + num * 500,
  producer: 'eosio',
  transactionCount: 0,
  actionCount: 0,
})
/** Block n was applied by step 10n (and made irreversible by step 10n + 1 when at or below LIB). */
const store = {
  position: async () => ({ head: { blockNum: HEAD, blockId: `id${HEAD}` }, lib: LIB }),
  blockByNum: async (num: number) => (num >= 1 && num <= HEAD ? block(num) : undefined),
  blockByTime: async ({ timeMs, comparator }: { timeMs: number; comparator: string }) => {
    const exact = (timeMs - T0) / 500
    const num = comparator === 'gte' ? Math.ceil(exact) : Math.floor(exact)
    return num >= 1 && num <= HEAD ? block(num) : undefined
  },
  stepsOfBlock: async (id: string): Promise<Step[]> => {
    const num = Number(id.slice(2))
    const steps: Step[] = [{ seq: 10 * num, type: 'new', blockNum: num, blockId: id }]
    if (num <= LIB) steps.push({ seq: 10 * num + 1, type: 'irreversible', blockNum: num, blockId: id })
    return steps
  },
}
const plan = (body: Record<string, unknown>) => planStream(store, parseActionRequest({ account: 'bob', ...body }))

test('a stream plan: irreversible history from the start to LIB, then the log after the step that applied LIB', async () => {
  assert.deepEqual(await plan({}), {
    head: HEAD,
    history: undefined,
    live: { afterSeq: 10 * HEAD, floor: 0, until: undefined },
  })
  assert.deepEqual(await plan({ start_from: 10 }), {
    head: HEAD,
    history: { from: 10, to: LIB },
    live: { afterSeq: 10 * LIB, floor: LIB + 1, until: undefined },
  })
  assert.deepEqual((await plan({ start_from: -5 })).history, undefined, 'head - 5 is above LIB')
  assert.deepEqual((await plan({ start_from: -5 })).live, { afterSeq: 10 * LIB, floor: HEAD - 5, until: undefined })
  assert.deepEqual(await plan({ start_from: 10, read_until: 50 }), {
    head: HEAD,
    history: { from: 10, to: 50 },
    live: undefined,
  })
  assert.deepEqual((await plan({ start_from: 10, read_until: 90 })).live, {
    afterSeq: 10 * LIB,
    floor: LIB + 1,
    until: 90,
  })
  assert.deepEqual((await plan({ start_from: 10, ignore_live: true })).live, undefined)
  assert.deepEqual((await plan({ start_from: 10, read_until: -30 })).history, { from: 10, to: HEAD - 30 })
  const iso = (num: number) => new Date(T0 + num * 500).toISOString().replace('Z', '')
  assert.deepEqual((await plan({ start_from: iso(20), read_until: iso(30) })).history, { from: 20, to: 30 })
  assert.deepEqual((await plan({ start_from: 200 })).live, { afterSeq: 10 * LIB, floor: 200, until: undefined })
  await assert.rejects(plan({ start_from: -10, read_until: 50 }), StreamRequestError)
})
