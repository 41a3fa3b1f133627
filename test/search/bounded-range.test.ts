import { test } from 'node:test'
import assert from 'node:assert/strict'
import { AntlerError } from '../../src/antelope/index.ts'
import { boundedRange } from '../../src/search/range.ts'

const position = { head: { blockNum: 500, blockId: '00'.repeat(32) }, lib: 400 }

test('GraphQL bounds: absent low is 1, absent high the searchable head (head, or LIB when irreversible only)', () => {
  assert.deepEqual(boundedRange({ sort: 'asc', withReversible: true }, position), {
    low: 1,
    high: 500,
    sort: 'asc',
    virtualHead: 500,
  })
  assert.deepEqual(boundedRange({ sort: 'desc', withReversible: false }, position), {
    low: 1,
    high: 400,
    sort: 'desc',
    virtualHead: 400,
  })
})

test('GraphQL bounds: a negative bound n is head + n + 1, ascending past the head is cut, descending refused', () => {
  const r = boundedRange({ lowBlockNum: -10, highBlockNum: -1, sort: 'asc', withReversible: true }, position)
  assert.deepEqual([r.low, r.high], [491, 500])
  assert.equal(boundedRange({ highBlockNum: 900, sort: 'asc', withReversible: true }, position).high, 500)
  assert.equal(boundedRange({ lowBlockNum: -10_000, sort: 'asc', withReversible: true }, position).low, 1)
  assert.throws(
    () => boundedRange({ highBlockNum: 450, sort: 'desc', withReversible: false }, position),
    (e: unknown) =>
      e instanceof AntlerError &&
      e.code === 'request_validation_error' &&
      /-1/.test(e.message + JSON.stringify(e.details)),
  )
  assert.equal(boundedRange({ highBlockNum: 450, sort: 'desc', withReversible: true }, position).high, 450)
})
