import { test } from 'node:test'
import assert from 'node:assert/strict'
import { inflateSync } from 'node:zlib'
import {
  blockIdFromPackedHeader,
  blockNumFromId,
  fromHex,
  refBlockPrefix,
  transactionId,
} from '../../src/antelope/index.ts'
import { encodeShipType } from '../../src/ship/index.ts'
import { loadAntelopeFixture } from '../_helpers/fixtures.ts'

interface GetBlockFixture {
  id: string
  block_num: number
  ref_block_prefix: number
  timestamp: string
  producer: string
  confirmed: number
  previous: string
  transaction_mroot: string
  action_mroot: string
  schedule_version: number
  new_producers: unknown
  header_extensions?: [number, string][]
  transactions: { trx: string | { id: string; compression: string | number; packed_trx: string } }[]
}

const BLOCKS = [
  'eos-get_block-8482113.json',
  'eos-get_block-92565371.json',
  'eos-get_block-124472078.json',
  'wax-get_block-258546986.json',
]

function packedHeader(block: GetBlockFixture): Uint8Array {
  return encodeShipType('block_header', {
    timestamp: block.timestamp,
    producer: block.producer,
    confirmed: block.confirmed,
    previous: block.previous,
    transaction_mroot: block.transaction_mroot,
    action_mroot: block.action_mroot,
    schedule_version: block.schedule_version,
    new_producers: block.new_producers ?? null,
    header_extensions: (block.header_extensions ?? []).map(([type, data]) => ({ type, data })),
  })
}

for (const file of BLOCKS) {
  test(`blockIdFromPackedHeader() recomputes the id of ${file}`, () => {
    const block = loadAntelopeFixture<GetBlockFixture>(file).response
    assert.equal(blockIdFromPackedHeader(packedHeader(block), block.block_num), block.id)
    assert.equal(blockNumFromId(block.id), block.block_num)
    assert.equal(refBlockPrefix(block.id), block.ref_block_prefix)
  })

  test(`transactionId() recomputes every transaction id of ${file}`, () => {
    const block = loadAntelopeFixture<GetBlockFixture>(file).response
    let checked = 0
    for (const receipt of block.transactions) {
      if (typeof receipt.trx === 'string') continue
      const packed = fromHex(receipt.trx.packed_trx)
      const compressed = receipt.trx.compression === 'zlib' || receipt.trx.compression === 1
      assert.equal(transactionId(compressed ? new Uint8Array(inflateSync(packed)) : packed), receipt.trx.id)
      checked++
    }
    assert.ok(file.includes('8482113') || checked > 0, 'the fixture has packed transactions')
  })
}

test('transactionId() covers the zlib-compressed WAX transactions', () => {
  const block = loadAntelopeFixture<GetBlockFixture>('wax-get_block-258546986.json').response
  const compressed = block.transactions.filter((r) => typeof r.trx !== 'string' && r.trx.compression === 'zlib')
  assert.equal(compressed.length, 5)
})
