import { test } from 'node:test'
import assert from 'node:assert/strict'
import { traceFromText, traceText } from '../../src/store/row-mapping.ts'
import type { ActionTraceDetails } from '../../src/store/index.ts'

const plain: ActionTraceDetails = {
  elapsedUs: 12,
  console: '',
  contextFree: false,
  except: undefined,
  authSequence: [['eosio', '7']],
  codeSequence: 0,
  abiSequence: 1,
}
/** What reading a stored trace gave before the positional form: the keyed object, `except` absent when undefined. */
const readBack = (t: ActionTraceDetails) => JSON.parse(JSON.stringify(t)) as ActionTraceDetails

test('an action trace stored positionally reads back as the keyed object stored before it did', () => {
  for (const t of [
    plain,
    { ...plain, console: 'hi "there"\n', contextFree: true, except: 'assertion failure', codeSequence: 3 },
    { ...plain, authSequence: [] },
  ]) {
    const text = traceText(t)!
    assert.ok(text.startsWith('['))
    assert.deepEqual(traceFromText(text), readBack(t))
  }
  assert.equal(traceText(undefined), null)
  assert.ok(traceText(plain)!.length < JSON.stringify(plain).length / 2)
})

test('a trace a store wrote as a keyed object (schema 5 and 6 before the positional form) still reads', () => {
  const stored = JSON.stringify({ ...plain, except: 'boom' })
  assert.deepEqual(traceFromText(stored), { ...plain, except: 'boom' })
  assert.deepEqual(traceFromText(JSON.stringify(plain)), readBack(plain))
})
