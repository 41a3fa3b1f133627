import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  Action,
  APIClient,
  PackedTransaction,
  PrivateKey,
  Serializer,
  SignedTransaction,
  Transaction,
} from '@wharfkit/antelope'
import { fromHex, packContextFreeData, signingDigest } from '../../src/antelope/index.ts'
import { createShipReader, decodeShipType } from '../../src/ship/index.ts'
import { DEV_PRIVATE_KEY, startDevchain, token, type DevchainConfig } from '../../src/devchain/index.ts'
import { postJson, tempDir, withDevchain } from '../_helpers/devchain.ts'
import { onCleanup } from '../_helpers/cleanup.ts'

const key = PrivateKey.from(DEV_PRIVATE_KEY)

type BlockTrx = {
  id: string
  compression: string
  packed_trx: string
  packed_context_free_data: string
  context_free_data: string[]
  signatures: string[]
  transaction: { ref_block_num: number; actions: { account: string; name: string; data: Record<string, unknown> }[] }
}
type BlockBody = { id: string; block_num: number; transactions: { status: string; trx: string | BlockTrx }[] }
type ShipReceipt = {
  trx: ['transaction_id', string] | ['packed_transaction', { compression: number; packed_trx: string }]
}

async function signedTransfer(client: APIClient, memo: string): Promise<SignedTransaction> {
  const info = await client.v1.chain.get_info()
  const action = Action.from(
    {
      account: 'eosio.token',
      name: 'transfer',
      authorization: [{ actor: 'alice', permission: 'active' }],
      data: { from: 'alice', to: 'bob', quantity: '0.1234 EOS', memo },
    },
    token.abi,
  )
  const transaction = Transaction.from({ ...info.getTransactionHeader(60), actions: [action] })
  return SignedTransaction.from({
    ...transaction,
    signatures: [key.signDigest(transaction.signingDigest(info.chain_id))],
  })
}

/** get_block by number and by id, both 200, both the same block; the transfer's receipt in it. */
async function readBlock(
  chainApi: string,
  num: number,
  id: string,
  trxId: string,
): Promise<{ body: BlockBody; trx: BlockTrx }> {
  const byNum = await postJson(`${chainApi}/v1/chain/get_block`, { block_num_or_id: num })
  assert.equal(byNum.status, 200, JSON.stringify(byNum.body))
  const byId = await postJson(`${chainApi}/v1/chain/get_block`, { block_num_or_id: id })
  assert.equal(byId.status, 200, JSON.stringify(byId.body))
  assert.deepEqual(byId.body, byNum.body)
  const body = byNum.body as unknown as BlockBody
  assert.equal(body.id, id)
  const trxs = body.transactions.map((r) => r.trx).filter((t): t is BlockTrx => typeof t === 'object')
  assert.deepEqual(
    trxs.map((t) => t.id),
    [trxId],
    'the transaction id is sha256 of the inflated packed_trx',
  )
  return { body, trx: trxs[0] }
}

test('a zlib-packed transfer pushed by wharfkit is answered by get_block (number and id), after a restart, and over SHiP', async (t) => {
  const dataDir = tempDir(t)
  const config: DevchainConfig = {
    dataDir,
    host: '127.0.0.1',
    chainPort: 0,
    shipPort: 0,
    blockTimeMs: 0,
    libDepth: 12,
    producers: 3,
    forkRate: 0,
    workload: 'none',
    onError: (error) => console.error('devchain error:', error),
  }
  let devchain = await startDevchain(config)
  onCleanup(t, () => devchain.close())
  const client = new APIClient({ url: devchain.chainApi })

  const signed = await signedTransfer(client, 'zlib')
  const packed = PackedTransaction.fromSigned(signed) // what push_transaction sends: its default, zlib
  assert.equal(packed.compression.toNumber(), 1)
  const trxId = String(signed.id)
  const pushed = await client.v1.chain.push_transaction(signed)
  assert.equal(String(pushed.transaction_id), trxId)
  assert.equal(pushed.processed.receipt.status, 'executed')
  const num = Number(pushed.processed.block_num)
  const id = devchain.chain.blockIdAt(num)!

  const { body, trx } = await readBlock(devchain.chainApi, num, id, trxId)
  assert.equal(trx.compression, 'zlib')
  assert.equal(trx.packed_trx, String(packed.packed_trx), 'packed_trx is the compressed hex as pushed')
  assert.deepEqual(trx.signatures, signed.signatures.map(String))
  assert.equal(trx.transaction.ref_block_num, signed.ref_block_num.toNumber())
  assert.deepEqual(
    trx.transaction.actions.map((a) => [a.account, a.name, a.data.memo, a.data.quantity]),
    [['eosio.token', 'transfer', 'zlib', '0.1234 EOS']],
  )
  assert.equal(String((await client.v1.chain.get_block(num)).id), id)

  // SHiP delivers the block as pushed (zlib receipt) and the trace under the same id.
  const reader = createShipReader({ url: devchain.ship, startBlockNum: num, endBlockNum: num + 1 })
  onCleanup(t, () => reader.close())
  const result = (await reader.blocks().next()).value!
  assert.equal(result.thisBlock?.blockId, id)
  const receipts = decodeShipType<{ transactions: ShipReceipt[] }>('signed_block', result.block!).transactions
  const packedReceipts = receipts.flatMap((r) => (r.trx[0] === 'packed_transaction' ? [r.trx[1]] : []))
  assert.deepEqual(
    packedReceipts.map((p) => [p.compression, p.packed_trx.toLowerCase()]),
    [[1, String(packed.packed_trx)]],
  )
  const traces = decodeShipType<[string, { id: string }][]>('transaction_trace[]', result.traces!)
  assert.ok(
    traces.some(([, tr]) => tr.id === trxId),
    'the trace carries the transaction id',
  )
  await reader.close()

  // A restart replays the block log: same block id, same answer.
  await devchain.close()
  devchain = await startDevchain(config)
  assert.equal(devchain.chain.blockIdAt(num), id)
  const again = await readBlock(devchain.chainApi, num, id, trxId)
  assert.deepEqual(again.body, body)
})

test('get_block shows the context-free data of a zlib-packed transaction unpacked, and its packed form as pushed', async (t) => {
  const devchain = await withDevchain(t)
  const client = new APIClient({ url: devchain.chainApi })
  const unsigned = await signedTransfer(client, 'cfd')
  const contextFreeData = ['0102', 'cafe']
  const digest = signingDigest(
    devchain.chainId,
    Serializer.encode({ object: Transaction.from(unsigned) }).array,
    packContextFreeData(contextFreeData.map(fromHex)),
  )
  const signed = SignedTransaction.from({
    ...Transaction.from(unsigned),
    context_free_data: contextFreeData,
    signatures: [key.signDigest(digest)],
  })
  const packed = PackedTransaction.fromSigned(signed)
  assert.equal(packed.compression.toNumber(), 1)
  const pushed = await client.v1.chain.push_transaction(signed)
  const num = Number(pushed.processed.block_num)
  const { trx } = await readBlock(devchain.chainApi, num, devchain.chain.blockIdAt(num)!, String(signed.id))
  assert.equal(trx.packed_context_free_data, String(packed.packed_context_free_data))
  assert.deepEqual(trx.context_free_data, contextFreeData)
})
