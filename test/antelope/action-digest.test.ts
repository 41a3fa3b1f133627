import { test } from 'node:test'
import assert from 'node:assert/strict'
import { actionDigest, fromHex } from '../../src/antelope/index.ts'
import { loadAntelopeFixture } from '../_helpers/fixtures.ts'

interface TraceFixture {
  receipt: { receiver: string; act_digest: string }
  act: { account: string; name: string; authorization: { actor: string; permission: string }[]; hex_data: string }
  return_value_hex_data?: string
}

const PUSHES = [1, 2, 3, 4, 5]
  .map((n) => `jungle4-push-transfer-${n}.json`)
  .concat(['jungle4-push-single-action-1.json', 'jungle4-push-single-action-2.json'])

function rawAction(trace: TraceFixture) {
  return { ...trace.act, data: fromHex(trace.act.hex_data) }
}

test('actionDigest() matches every Jungle4 receipt (ACTION_RETURN_VALUE recipe)', () => {
  let checked = 0
  for (const file of PUSHES) {
    const traces = loadAntelopeFixture<{ processed: { action_traces: TraceFixture[] } }>(file).response.processed
      .action_traces
    for (const trace of traces) {
      assert.equal(
        actionDigest(rawAction(trace), fromHex(trace.return_value_hex_data ?? '')),
        trace.receipt.act_digest,
        `${file} ${trace.receipt.receiver}`,
      )
      checked++
    }
  }
  assert.equal(checked, 17)
})

test('actionDigest() matches the 2021 EOS receipts with the legacy recipe, and only with it', () => {
  const traces = loadAntelopeFixture<{ traces: TraceFixture[] }>('eos-history_get_transaction-with-traces.json')
    .response.traces
  assert.equal(traces.length, 3)
  for (const trace of traces) {
    assert.equal(actionDigest(rawAction(trace), new Uint8Array(0), true), trace.receipt.act_digest)
    assert.notEqual(actionDigest(rawAction(trace), new Uint8Array(0), false), trace.receipt.act_digest)
  }
})
