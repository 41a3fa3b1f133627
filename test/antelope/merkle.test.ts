import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Serializer, Signature } from '@wharfkit/antelope'
import {
  fromHex,
  legacyMerkleRoot,
  toHex,
  transactionReceiptDigest,
  type TransactionReceiptParts,
} from '../../src/antelope/index.ts'
import { loadAntelopeFixture } from '../_helpers/fixtures.ts'

interface ReceiptFixture {
  status: string
  cpu_usage_us: number
  net_usage_words: number
  trx: string | { signatures: string[]; compression: string; packed_context_free_data: string; packed_trx: string }
}

const STATUS: Record<string, number> = { executed: 0, soft_fail: 1, hard_fail: 2, delayed: 3, expired: 4 }

function receiptParts(r: ReceiptFixture): TransactionReceiptParts {
  const trx: TransactionReceiptParts['trx'] =
    typeof r.trx === 'string'
      ? { kind: 'id', id: r.trx }
      : {
          kind: 'packed',
          signatures: r.trx.signatures.map((s) => Serializer.encode({ object: Signature.from(s) }).array),
          compression: r.trx.compression === 'zlib' ? 1 : 0,
          packedContextFreeData: fromHex(r.trx.packed_context_free_data),
          packedTrx: fromHex(r.trx.packed_trx),
        }
  return { status: STATUS[r.status], cpuUsageUs: r.cpu_usage_us, netUsageWords: r.net_usage_words, trx }
}

for (const file of [
  'eos-get_block-8482113.json',
  'eos-get_block-92565371.json',
  'eos-get_block-124472078.json',
  'wax-get_block-258546986.json',
]) {
  test(`legacyMerkleRoot() of transaction receipt digests recomputes transaction_mroot of ${file}`, () => {
    const block = loadAntelopeFixture<{ transaction_mroot: string; transactions: ReceiptFixture[] }>(file).response
    assert.equal(
      toHex(legacyMerkleRoot(block.transactions.map((r) => transactionReceiptDigest(receiptParts(r))))),
      block.transaction_mroot,
    )
  })
}
