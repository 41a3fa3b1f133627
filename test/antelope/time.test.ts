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
    assert.throws(
      () => parseTime(bad),
      (e: { code?: string }) => e.code === 'invalid_chain_value_error',
      bad,
    )
  }
})

test('parseTime() refuses days a month does not have and hours past 23 instead of rolling them over', () => {
  for (const text of [
    '2019-02-29T00:00:00Z',
    '2020-02-30T00:00:00Z',
    '2020-04-31T00:00:00Z',
    '2020-01-01T24:00:00Z',
    '2020-13-01T00:00:00Z',
    '2020-01-01T00:60:00Z',
  ]) {
    assert.throws(
      () => parseTime(text),
      (error: { code?: string }) => error.code === 'invalid_chain_value_error',
      text,
    )
  }
  assert.equal(parseTime('2020-02-29T23:59:59.5Z'), Date.UTC(2020, 1, 29, 23, 59, 59, 500))
})
