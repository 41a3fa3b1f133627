import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readPackedTransaction } from '../../src/push/index.ts'
import { until } from '../_helpers/store.ts'
import { chainPost, signedTransfer, withPushRig, type PushRig } from './rig.ts'

type ForkAnswer = { fork_block_num: number; old_head: { block_num: number }; new_head: { block_num: number } }

/** Waits until the store holds the transaction and returns its block. */
async function storedBlock(rig: PushRig, id: string): Promise<{ num: number; id: string }> {
  await until(async () => (await rig.store.transaction(id)) !== undefined, `transaction ${id} in the store`)
  const num = (await rig.store.transaction(id))!.blockNum
  return { num, id: (await rig.store.blockByNum(num))!.id }
}

/** Forks the devchain below `blockNum` (a margin of up to two blocks, as the head moves while the request travels). */
async function forkBelow(rig: PushRig, blockNum: number, drop: string[] = []): Promise<ForkAnswer> {
  const { head, lib } = rig.devchain.chain
  const depth = Math.min(head.num - blockNum + 3, head.num - lib.blockNum)
  const fork = await chainPost<ForkAnswer>(`${rig.devchain.chainApi}/v1/devchain/fork`, { depth, drop })
  assert.ok(fork.fork_block_num <= blockNum, `the fork (from ${fork.fork_block_num}) covers block ${blockNum}`)
  return fork
}

// LIB 40 blocks (4 s) behind head: the transaction's block is still reversible when the fork comes.
const FORKABLE = { blockTimeMs: 100, libDepth: 40 }

test('push() with irreversible follows a fork that moves the transaction to another block and answers with the block on the surviving branch', async (t) => {
  const rig = await withPushRig(t, FORKABLE)
  const body = await signedTransfer(rig.client, { memo: 'moved by a fork' })
  const id = readPackedTransaction(body).id
  const answer = rig.service.push({ body, guarantee: { kind: 'irreversible' } })
  const first = await storedBlock(rig, id)
  await forkBelow(rig, first.num)

  const result = await answer
  assert.notEqual(result.block_id, first.id, 'not the forked-out block')
  assert.equal(result.block_id, rig.devchain.chain.blockIdAt(result.block_num), "the block on the chain's branch")
  assert.equal((await rig.store.blockByNum(result.block_num))?.id, result.block_id, 'the block the store holds')
  assert.equal((await rig.store.transaction(id))?.blockNum, result.block_num)
  assert.ok(((await rig.store.position())?.lib ?? 0) >= result.block_num, 'irreversible in the store')
  const history = await rig.store.transactionHistory(id)
  assert.ok(
    history.forkedOut.some((f) => f.blockId === first.id),
    'the store saw the first block forked out',
  )
  assert.equal(result.processed.producer_block_id, result.block_id)
})

test('push() re-pushes a transaction a fork dropped and answers with the block that includes it again, never the dropped one', async (t) => {
  const rig = await withPushRig(t, FORKABLE, { repushIntervalMs: 300 })
  const body = await signedTransfer(rig.client, { memo: 'dropped by a fork' })
  const id = readPackedTransaction(body).id
  const answer = rig.service.push({ body, guarantee: { kind: 'irreversible' } })
  const first = await storedBlock(rig, id)
  const fork = await forkBelow(rig, first.num, [id])
  // The new branch does not hold it: only a re-push brings it back.

  const result = await answer
  assert.notEqual(result.block_id, first.id, 'not the dropped block')
  assert.ok(
    result.block_num > fork.new_head.block_num,
    `included again after the fork's branch (block ${result.block_num} > ${fork.new_head.block_num})`,
  )
  assert.equal((await rig.store.blockByNum(result.block_num))?.id, result.block_id)
  assert.equal(rig.devchain.chain.blockIdAt(result.block_num), result.block_id)
  assert.ok(((await rig.store.position())?.lib ?? 0) >= result.block_num)
  assert.ok((await rig.store.transactionHistory(id)).forkedOut.some((f) => f.blockId === first.id))
})
