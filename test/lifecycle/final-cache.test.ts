import { test } from 'node:test'
import assert from 'node:assert/strict'
import { BoundedCache, FinalLifecycleCache, isFinal, type TransactionLifecycle } from '../../src/lifecycle/index.ts'
import type { TransactionHistory, TransactionRecord } from '../../src/store/index.ts'

test('bounded cache: at most maxEntries, the least recently used out first', () => {
  const cache = new BoundedCache<string, number>(3, 1_000)
  for (const [k, v] of [
    ['a', 1],
    ['b', 2],
    ['c', 3],
  ] as const)
    cache.set(k, v)
  assert.equal(cache.get('a'), 1) // a is now the most recently used: b goes first
  cache.set('d', 4)
  assert.equal(cache.size, 3)
  assert.equal(cache.get('b'), undefined)
  assert.deepEqual(
    ['a', 'c', 'd'].map((k) => cache.get(k)),
    [1, 3, 4],
  )
  assert.equal(cache.hits, 4)
  assert.equal(cache.misses, 1)
})

test('bounded cache: at most maxWeight together; replacing an entry counts its new weight once; one heavier than the bound is not kept', () => {
  const cache = new BoundedCache<string, string>(100, 10, (s) => s.length)
  cache.set('a', 'xxxx')
  cache.set('b', 'xxxx')
  assert.equal(cache.weight, 8)
  cache.set('c', 'xxxx') // 12 > 10: a goes
  assert.equal(cache.weight, 8)
  assert.equal(cache.get('a'), undefined)
  cache.set('b', 'xx')
  assert.equal(cache.weight, 6)
  assert.equal(cache.size, 2)
  cache.set('huge', 'x'.repeat(11))
  assert.equal(cache.get('huge'), undefined)
  assert.equal(cache.size, 2, 'the others stay')
  const none = new BoundedCache<string, number>(0, 10)
  none.set('a', 1)
  assert.equal(none.size, 0)
})

const record = (blockNum: number, status = 0): TransactionRecord => ({
  id: 'ab'.repeat(32),
  blockNum,
  blockIndex: 1,
  status,
  cpuUsageUs: 100,
  netUsageWords: 12,
  scheduled: false,
})

const lifecycleAt = (blockNum: number, lib: number, overrides: Partial<TransactionLifecycle> = {}) =>
  ({
    transaction_status: 'executed',
    id: 'ab'.repeat(32),
    execution_trace: { block_num: blockNum },
    canceled_by: null,
    created_by: null,
    execution_irreversible: blockNum <= lib,
    creation_irreversible: false,
    ...overrides,
  }) as unknown as TransactionLifecycle

test('final lifecycles: executed (or failed) with every record at or below LIB, not delayed elsewhere nor canceled', () => {
  const history = (...blocks: number[]): TransactionHistory => ({
    records: blocks.map((b) => record(b)),
    forkedOut: [],
  })
  assert.equal(isFinal(lifecycleAt(10, 10), history(10), 10), true)
  assert.equal(isFinal(lifecycleAt(10, 10, { transaction_status: 'hard_fail' }), history(10), 10), true)
  assert.equal(isFinal(lifecycleAt(11, 10), history(11), 10), false, 'a reversible execution')
  assert.equal(isFinal(lifecycleAt(10, 10), history(10, 12), 10), false, 'a record in a reversible block')
  assert.equal(
    isFinal(lifecycleAt(10, 10), { records: [record(10)], forkedOut: [{ blockNum: 11, blockId: '' }] }, 10),
    false,
    'a forked-out block above LIB',
  )
  for (const status of ['delayed', 'canceled', 'expired', 'forked_out', 'pending'] as const)
    assert.equal(isFinal(lifecycleAt(10, 10, { transaction_status: status }), history(10), 10), false, status)
  const created = { block_num: 8 } as unknown as TransactionLifecycle['created_by']
  assert.equal(
    isFinal(lifecycleAt(10, 10, { created_by: created, creation_irreversible: true }), history(8, 10), 10),
    true,
  )
  assert.equal(isFinal(lifecycleAt(10, 10, { created_by: created }), history(8, 10), 10), false)
  const canceled = {} as TransactionLifecycle['canceled_by']
  assert.equal(isFinal(lifecycleAt(10, 10, { canceled_by: canceled }), history(10), 10), false)
})

test('final lifecycle cache: bounded by entries and by the characters of their JSON, which it keeps', () => {
  const ids = ['01', '02', '03', '04'].map((p) => p.repeat(32))
  const one = (id: string) => ({ ...lifecycleAt(5, 10), id }) as TransactionLifecycle
  const size = JSON.stringify(one(ids[0])).length
  const byEntries = new FinalLifecycleCache({ entries: 2, jsonChars: 1e9 })
  for (const id of ids) byEntries.put(one(id))
  assert.equal(byEntries.size, 2)
  assert.deepEqual(
    ids.map((id) => byEntries.get(id) !== undefined),
    [false, false, true, true],
  )
  const byChars = new FinalLifecycleCache({ entries: 100, jsonChars: size * 3 })
  for (const id of ids) byChars.put(one(id))
  assert.equal(byChars.size, 3)
  assert.equal(byChars.jsonChars, size * 3)
  const entry = byChars.get(ids[3])!
  assert.equal(entry.json, JSON.stringify(entry.lifecycle))
  assert.equal(entry.blockNum, 5)
})
