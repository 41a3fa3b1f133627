import { test } from 'node:test'
import assert from 'node:assert/strict'
import { decodeShipType } from '../../src/ship/index.ts'
import { Chain, bootChain, pushSigned } from '../../src/devchain/index.ts'

type Trace = [string, { id: string; status: number; scheduled: boolean; action_traces: unknown[] }]
const transfer = {
  account: 'eosio.token',
  name: 'transfer',
  authorization: [{ actor: 'alice', permission: 'active' }],
  data: { from: 'alice', to: 'bob', quantity: '1.0000 EOS', memo: 'later' },
}

function tracesOf(chain: Chain, num: number) {
  return decodeShipType<Trace[]>('transaction_trace[]', chain.block(num)!.traces).map(([, t]) => t)
}

test('a delayed transaction is delayed, then executes as scheduled once its delay passes', () => {
  let now = Date.parse('2030-01-01T00:00:00Z')
  const chain = new Chain({ dataDir: undefined, producers: 1, libDepth: 12, now: () => now })
  bootChain(chain)
  const id = pushSigned(chain, [transfer], { delaySec: 2 }).trace.id
  const first = chain.produceBlock()
  assert.deepEqual(
    tracesOf(chain, first.num)
      .slice(1)
      .map((t) => [t.id, t.status, t.action_traces.length]),
    [[id, 3, 0]],
  )
  const rows = decodeShipType<[string, { name: string }][]>('table_delta[]', first.deltas).map(([, d]) => d.name)
  assert.ok(rows.includes('generated_transaction'))
  let executed: { status: number; scheduled: boolean; id: string } | undefined
  for (let i = 0; i < 8 && !executed; i++) {
    now += 500
    const block = chain.produceBlock()
    executed = tracesOf(chain, block.num).find((t) => t.id === id)
  }
  assert.ok(executed, 'the delayed transaction ran')
  assert.equal(executed.status, 0)
  assert.equal(executed.scheduled, true)
  chain.close()
})

test('canceldelay cancels a delayed transaction so it never runs', () => {
  let now = Date.parse('2030-01-01T00:00:00Z')
  const chain = new Chain({ dataDir: undefined, producers: 1, libDepth: 12, now: () => now })
  bootChain(chain)
  const id = pushSigned(chain, [transfer], { delaySec: 1 }).trace.id
  chain.produceBlock()
  pushSigned(chain, [
    {
      account: 'eosio',
      name: 'canceldelay',
      authorization: [{ actor: 'alice', permission: 'active' }],
      data: { canceling_auth: { actor: 'alice', permission: 'active' }, trx_id: id },
    },
  ])
  for (let i = 0; i < 6; i++) {
    now += 500
    const block = chain.produceBlock()
    assert.ok(!tracesOf(chain, block.num).some((t) => t.id === id))
  }
  assert.equal([...chain.state.rows('generated_transaction')].length, 0)
  chain.close()
})

test('ids of expired transactions are forgotten, so the duplicate check stays bounded', () => {
  let now = Date.parse('2030-01-01T00:00:00Z')
  const chain = new Chain({ dataDir: undefined, producers: 1, libDepth: 12, now: () => now })
  bootChain(chain)
  pushSigned(chain, [transfer], { nonce: 1 })
  chain.produceBlock()
  assert.ok([...chain.state.rows('_recent_transaction')].length > 0)
  now += 10 * 60 * 1000 // past every expiration (60 s after the signing head)
  for (let i = 0; i < 64; i++) chain.produceBlock()
  assert.equal([...chain.state.rows('_recent_transaction')].length, 0)
  chain.close()
})
