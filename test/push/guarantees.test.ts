import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { createPushService, readPackedTransaction, type PushResult } from '../../src/push/index.ts'
import type { Store } from '../../src/store/index.ts'
import { signedTransfer, withPushRig } from './rig.ts'

/** A pass-through to the chain API that keeps every push_transaction answer. */
async function recordingProxy(
  t: TestContext,
  target: string,
): Promise<{ url: string; pushAnswers: Record<string, unknown>[] }> {
  const pushAnswers: Record<string, unknown>[] = []
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const answer = await fetch(`${target}${req.url}`, { method: req.method, body: Buffer.concat(chunks) })
    const text = await answer.text()
    if (req.url === '/v1/chain/push_transaction' && answer.ok) pushAnswers.push(JSON.parse(text))
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, pushAnswers }
}

/** The store holds the answer's transaction, executed, in the answer's block. */
async function assertStoredInAnswerBlock(store: Store, result: PushResult): Promise<void> {
  const stored = await store.transaction(result.transaction_id)
  assert.ok(stored, 'the transaction is in the store right after the answer')
  assert.equal(stored.blockNum, result.block_num)
  assert.equal(stored.status, 0)
  assert.equal((await store.blockByNum(result.block_num))?.id, result.block_id, 'the answer names the stored block')
}

test("push() with in-block answers once the transaction is in a stored block; processed matches the chain's own answer, receipt sequences, elapsed and console included, but for producer_block_id", async (t) => {
  const rig = await withPushRig(t)
  const proxy = await recordingProxy(t, rig.devchain.chainApi)
  const service = createPushService({ chainApi: proxy.url, store: rig.store, pollIntervalMs: 20 })
  const body = await signedTransfer(rig.client, { memo: 'in-block' })
  const result = await service.push({ body, guarantee: { kind: 'in-block' } })
  await assertStoredInAnswerBlock(rig.store, result)
  assert.equal(result.transaction_id, readPackedTransaction(body).id)

  assert.equal(proxy.pushAnswers.length, 1, 'pushed once')
  const chain = proxy.pushAnswers[0] as {
    transaction_id: string
    processed: Record<string, unknown> & { action_traces: Record<string, unknown>[] }
  }
  assert.equal(chain.transaction_id, result.transaction_id)
  // The devchain answers before the block is produced (producer_block_id null, as nodeos does):
  // that field differs, the rest is equal (the receipt sequences come from the stored trace).
  assert.equal(chain.processed.producer_block_id, null)
  const chainTraces = chain.processed.action_traces
  assert.deepEqual(
    chainTraces.map((a) => a.receiver),
    ['eosio.token', 'alice', 'bob'],
  )
  for (const a of chainTraces) {
    const receipt = a.receipt as { auth_sequence: unknown[]; code_sequence: number; abi_sequence: number }
    assert.notDeepEqual(receipt.auth_sequence, [], 'the chain sends auth_sequence')
    assert.ok(receipt.code_sequence > 0 && receipt.abi_sequence > 0, 'the chain sends code and abi sequences')
  }
  const expected = {
    ...chain.processed,
    producer_block_id: result.block_id,
    action_traces: chainTraces.map((a) => ({ ...a, producer_block_id: result.block_id })),
  }
  assert.deepEqual(result.processed, expected)
  assert.deepEqual((result.processed.action_traces as unknown as { act: { data: unknown } }[])[0].act.data, {
    from: 'alice',
    to: 'bob',
    quantity: '0.0001 EOS',
    memo: 'in-block',
  })
})

/** Distinct producers, other than the block's own, of the stored blocks after it, each linking to the one before. */
async function laterProducers(store: Store, blockNum: number): Promise<Set<string>> {
  const block = (await store.blockByNum(blockNum))!
  const producers = new Set<string>()
  let previous = block
  for (
    let next = await store.blockByNum(blockNum + 1);
    next && next.previous === previous.id;
    next = await store.blockByNum(next.num + 1)
  ) {
    if (next.producer !== block.producer) producers.add(next.producer)
    previous = next
  }
  return producers
}

for (const count of [1, 2] as const) {
  test(`push() with handoffs:${count} answers once blocks of ${count} other producers follow the transaction's block in the store`, async (t) => {
    const rig = await withPushRig(t, { producers: 3 })
    const body = await signedTransfer(rig.client, { memo: `handoffs:${count}` })
    const result = await rig.service.push({ body, guarantee: { kind: 'handoffs', count } })
    await assertStoredInAnswerBlock(rig.store, result)
    assert.ok((await laterProducers(rig.store, result.block_num)).size >= count, `${count} handoffs are stored`)
    assert.equal(result.processed.block_num, result.block_num)
    assert.equal(result.processed.producer_block_id, result.block_id)
  })
}

test("push() with irreversible answers once the transaction's block is at or below the store's LIB", async (t) => {
  const rig = await withPushRig(t, { libDepth: 8 })
  const body = await signedTransfer(rig.client, { memo: 'irreversible' })
  const result = await rig.service.push({ body, guarantee: { kind: 'irreversible' } })
  await assertStoredInAnswerBlock(rig.store, result)
  const position = await rig.store.position()
  assert.ok(
    position && position.lib >= result.block_num,
    `store LIB ${position?.lib} reaches block ${result.block_num}`,
  )
  assert.equal(rig.devchain.chain.blockIdAt(result.block_num), result.block_id)
})
