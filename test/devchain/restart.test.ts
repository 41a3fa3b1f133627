import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Chain, bootChain, pushSigned } from '../../src/devchain/index.ts'
import { tempDir } from '../_helpers/devchain.ts'

test('the chain survives a restart on the same data dir: same ids, same state, still producing', (t) => {
  const dataDir = tempDir(t)
  const first = new Chain({ dataDir, producers: 3, libDepth: 5 })
  bootChain(first)
  for (let i = 0; i < 10; i++) {
    pushSigned(first, [
      {
        account: 'eosio.token',
        name: 'transfer',
        authorization: [{ actor: 'alice', permission: 'active' }],
        data: { from: 'alice', to: 'carol', quantity: '2.0000 EOS', memo: `r${i}` },
      },
    ])
    first.produceBlock()
  }
  first.fork(2)
  const head = first.head
  const ids = Array.from({ length: head.num }, (_, i) => first.blockIdAt(i + 1))
  const balance = (chain: Chain) =>
    [...chain.state.rows('contract_row')]
      .filter(([, r]) => r.code === 'eosio.token' && r.scope === 'carol')
      .map(([, r]) => Buffer.from(r.value).toString('hex'))
  const before = balance(first)
  first.close()

  const second = new Chain({ dataDir, producers: 3, libDepth: 5 })
  assert.equal(second.chainId, first.chainId)
  assert.equal(second.head.id, head.id)
  assert.deepEqual(
    Array.from({ length: head.num }, (_, i) => second.blockIdAt(i + 1)),
    ids,
  )
  assert.deepEqual(balance(second), before)
  // Reversible blocks came back with their undo sessions: a fork right after the restart works.
  const fork = second.fork(3)
  assert.equal(fork.fork_block_num, head.num - 2)
  second.produceBlock()
  second.close()
})
