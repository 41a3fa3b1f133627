import { test } from 'node:test'
import assert from 'node:assert/strict'
import { blockSlotToMs, formatNodeosTime, formatRfc3339, msToBlockSlot, parseTime } from '../../src/antelope/index.ts'
import { BlockTimestamp } from '@wharfkit/antelope'

test('block slots agree with wharfkit BlockTimestamp', () => {
  const text = '2018-11-08T13:23:39.500'
  const slot = BlockTimestamp.from(text).value.toNumber()
  assert.equal(formatNodeosTime(blockSlotToMs(slot)), text)
  assert.equal(msToBlockSlot(blockSlotToMs(slot) + 499), slot)
})

test('formatRfc3339() prints times as dfuse did', () => {
  assert.equal(formatRfc3339(Date.parse('2018-11-08T13:23:39.500Z')), '2018-11-08T13:23:39.5Z')
  assert.equal(formatRfc3339(Date.parse('2019-01-01T00:00:00Z')), '2019-01-01T00:00:00Z')
})

test('parseTime() reads RFC3339 and nodeos forms, and refuses others', () => {
  assert.equal(parseTime('2019-03-04T10:36:14.5Z'), Date.parse('2019-03-04T10:36:14.500Z'))
  assert.equal(parseTime('2019-03-04T10:36:14.500'), Date.parse('2019-03-04T10:36:14.500Z'))
  assert.equal(parseTime('2019-03-04T12:36:14+02:00'), Date.parse('2019-03-04T10:36:14Z'))
  for (const bad of ['yesterday', '2019-13-04T10:36:14Z', '2019-03-04', '']) {
    assert.throws(() => parseTime(bad), (e: { code?: string }) => e.code === 'invalid_chain_value_error', bad)
  }
})
