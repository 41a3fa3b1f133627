import { test } from 'node:test'
import assert from 'node:assert/strict'
import { decodeShipType } from '../../src/ship/index.ts'
import { withDevchain } from '../_helpers/devchain.ts'

test('--workload demo pushes transfers, new accounts and rawdb rows at a steady rate', async (t) => {
  const errors: unknown[] = []
  const devchain = await withDevchain(t, { blockTimeMs: 100, workload: 'demo', onError: (e) => errors.push(e) })
  await new Promise((r) => setTimeout(r, 2600))
  const names: string[] = []
  for (let n = 3; n <= devchain.chain.head.num; n++) {
    const traces = decodeShipType<
      [string, { action_traces: [string, { act: { account: string; name: string } }][] }][]
    >('transaction_trace[]', devchain.chain.block(n)!.traces)
    for (const [, trace] of traces)
      for (const [, a] of trace.action_traces) names.push(`${a.act.account}::${a.act.name}`)
  }
  assert.deepEqual(errors, [])
  assert.ok(names.filter((n) => n === 'eosio.token::transfer').length >= 10, 'transfers')
  assert.ok(names.includes('eosio::newaccount'), 'a new account')
  assert.ok(names.includes('rawdb::put'), 'a rawdb row')
})
