import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createShipReader, decodeShipType } from '../../src/ship/index.ts'
import { pushSigned, type Devchain } from '../../src/devchain/index.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { postJson, withDevchain } from '../_helpers/devchain.ts'

function transfer(devchain: Devchain, memo: string) {
  return pushSigned(devchain.chain, [
    {
      account: 'eosio.token',
      name: 'transfer',
      authorization: [{ actor: 'alice', permission: 'active' }],
      data: { from: 'alice', to: 'bob', quantity: '0.0001 EOS', memo },
    },
  ]).trace.id
}

/** Transaction ids in the traces of a block. */
function trxIdsOf(devchain: Devchain, num: number): string[] {
  return decodeShipType<[string, { id: string; action_traces: unknown[] }][]>(
    'transaction_trace[]',
    devchain.chain.block(num)!.traces,
  )
    .slice(1)
    .map(([, t]) => t.id)
}

test('POST /v1/devchain/fork replaces the last N blocks with a longer branch seen over SHiP as a lower number', async (t) => {
  const devchain = await withDevchain(t)
  const ids: string[] = []
  for (let i = 0; i < 4; i++) {
    ids.push(transfer(devchain, `f${i}`))
    devchain.chain.produceBlock()
  }
  const reader = createShipReader({ url: devchain.ship, startBlockNum: 1, maxMessagesInFlight: 3 })
  onCleanup(t, () => reader.close())
  const seen: { num: number; id: string; prev: string | undefined }[] = []
  const iterator = reader.blocks()
  const next = async () => {
    const { value } = await iterator.next()
    seen.push({ num: value!.thisBlock!.blockNum, id: value!.thisBlock!.blockId, prev: value!.prevBlock?.blockId })
  }
  while (seen.at(-1)?.num !== devchain.chain.head.num) await next()
  const oldHead = devchain.chain.head

  const response = await postJson(devchain.chainApi + '/v1/devchain/fork', { depth: 3, drop: [ids[3]] })
  assert.equal(response.status, 200)
  const fork = response.body as {
    fork_block_num: number
    old_head: { block_num: number; block_id: string }
    new_head: { block_num: number; block_id: string }
  }
  assert.deepEqual(fork.old_head, { block_num: oldHead.num, block_id: oldHead.id })
  assert.equal(fork.fork_block_num, oldHead.num - 2)
  assert.equal(fork.new_head.block_num, oldHead.num + 1)

  while (seen.at(-1)?.id !== fork.new_head.block_id) await next()
  const afterFork = seen.slice(seen.findIndex((b) => b.id === oldHead.id) + 1)
  assert.deepEqual(
    afterFork.map((b) => b.num),
    [fork.fork_block_num, fork.fork_block_num + 1, fork.fork_block_num + 2, fork.fork_block_num + 3],
  )
  // The first block of the new branch links to the common ancestor, and every id changed.
  assert.equal(afterFork[0].prev, devchain.chain.blockIdAt(fork.fork_block_num - 1))
  const oldIds = new Set(seen.slice(0, seen.length - afterFork.length).map((b) => b.id))
  assert.ok(afterFork.every((b) => !oldIds.has(b.id)))

  // Forked-out transactions are re-included, except the dropped one.
  const included = afterFork.flatMap((b) => trxIdsOf(devchain, b.num))
  assert.deepEqual(included.sort(), [ids[1], ids[2]].sort())
})

test('forks are refused below LIB and with bad depths, with nodeos error bodies', async (t) => {
  const devchain = await withDevchain(t, { libDepth: 3 })
  for (let i = 0; i < 6; i++) devchain.chain.produceBlock()
  for (const body of [{ depth: 4 }, { depth: 0 }, { depth: 1.5 }, { depth: 'x' }, { depth: 1, drop: ['nothex'] }]) {
    const response = await postJson(devchain.chainApi + '/v1/devchain/fork', body)
    assert.equal(response.status, 400, JSON.stringify(body))
    assert.equal((response.body.error as { name: string }).name, 'invalid_http_request')
  }
  const ok = await postJson(devchain.chainApi + '/v1/devchain/fork', { depth: 3 })
  assert.equal(ok.status, 200)
})

test('--fork-rate forks at random while a reader follows the head, and LIB never moves back', async (t) => {
  let seed = 7
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
  const devchain = await withDevchain(t, { forkRate: 0.3, libDepth: 4, random })
  const reader = createShipReader({ url: devchain.ship, startBlockNum: 1, maxMessagesInFlight: 5 })
  onCleanup(t, () => reader.close())
  let producing = true
  const producer = (async () => {
    for (let i = 0; i < 60; i++) {
      const response = await postJson(devchain.chainApi + '/v1/devchain/produce', { blocks: 1 })
      assert.equal(response.status, 200)
      await new Promise((r) => setTimeout(r, 3))
    }
    producing = false
    // One more block after the flag flips, so the reader's stop condition is checked on it.
    await postJson(devchain.chainApi + '/v1/devchain/produce', { blocks: 1 })
  })()
  let forks = 0
  let lastLib = 0
  let last = 0
  for await (const block of reader.blocks()) {
    const num = block.thisBlock!.blockNum
    if (num <= last) {
      forks++
      assert.ok(num > lastLib, 'a fork never replaces an irreversible block')
    }
    last = num
    assert.ok(block.lastIrreversible.blockNum >= lastLib, 'LIB never moves back')
    lastLib = block.lastIrreversible.blockNum
    if (!producing && block.thisBlock!.blockId === devchain.chain.head.id) break
  }
  await producer
  assert.ok(forks > 0, 'random forks were delivered')
})
