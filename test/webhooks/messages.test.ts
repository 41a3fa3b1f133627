import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { Step } from '../../src/store/index.ts'
import { forkedOutAfter, MAX_BODY_BYTES, messageBody, messageId, undoneBefore } from '../../src/webhooks/messages.ts'

const step = (seq: number, type: Step['type']): Step => ({ seq, type, blockNum: 7, blockId: 'b7' })

test('message ids: stable per message, different for an undo, another application, another subscription', () => {
  const id = messageId('wh_1', 'b7', 't1', false, 0)
  assert.match(id, /^msg_[A-Za-z0-9_-]{24}$/)
  assert.equal(messageId('wh_1', 'b7', 't1', false, 0), id)
  const others = [
    messageId('wh_1', 'b7', 't1', true, 0),
    messageId('wh_1', 'b7', 't1', false, 1),
    messageId('wh_2', 'b7', 't1', false, 0),
    messageId('wh_1', 'b7', 't2', false, 0),
  ]
  assert.equal(new Set([id, ...others]).size, 5)
})

test('undoneBefore and forkedOutAfter read the block steps', () => {
  const steps = [step(10, 'new'), step(12, 'undo'), step(15, 'redo'), step(20, 'undo')]
  assert.equal(undoneBefore(steps, 10), 0)
  assert.equal(undoneBefore(steps, 15), 1)
  assert.equal(undoneBefore(steps, 20), 1)
  assert.equal(undoneBefore(steps), 2)
  assert.equal(forkedOutAfter(steps, 15), true)
  assert.equal(forkedOutAfter([step(10, 'new'), step(11, 'irreversible')], 10), false)
})

test('messageBody splices the data in; a body over 20 kB drops json, then actions, and says so', () => {
  const data = { undo: false, trace: { id: 't', matchingActions: [{ seq: '1', json: { memo: 'hi' } }] } }
  const small = messageBody('antelope.transaction', '2026-01-01T00:00:00.000Z', JSON.stringify(data))
  assert.deepEqual(JSON.parse(small), { type: 'antelope.transaction', timestamp: '2026-01-01T00:00:00.000Z', data })

  const big = { trace: { id: 't', matchingActions: [{ seq: '1', json: { memo: 'x'.repeat(30_000) } }] } }
  const cut = JSON.parse(messageBody('antelope.transaction', 'now', JSON.stringify(big)))
  assert.equal(cut.truncated, true)
  assert.equal(cut.data.trace.matchingActions[0].json, null)

  const many = { trace: { matchingActions: Array.from({ length: 2000 }, (_, i) => ({ seq: String(i), json: null })) } }
  const body = messageBody('antelope.transaction', 'now', JSON.stringify(many))
  assert.ok(Buffer.byteLength(body) <= MAX_BODY_BYTES)
  assert.ok(JSON.parse(body).data.trace.matchingActions.length > 100)
})
