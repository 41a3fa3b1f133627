import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ABI, Serializer, Transaction } from '@wharfkit/antelope'
import {
  AbiCache,
  createWharfkitDecoder,
  encodeAbiBinary,
  packContextFreeData,
  sha256,
  signingDigest,
  toHex,
  fromHex,
} from '../../src/antelope/index.ts'
import { loadAntelopeFixture } from '../_helpers/fixtures.ts'

const tokenAbi = ABI.from(loadAntelopeFixture<{ abi: ABI.Def }>('jungle4-get_abi-eosio.token.json').response.abi)

test('AbiCache parses binary ABIs once, bounded, and reports bad bytes as a result', () => {
  const cache = new AbiCache(2)
  const bytes = encodeAbiBinary(tokenAbi)
  const first = cache.fromBinary(bytes)
  assert.ok(first.ok)
  const again = cache.fromBinary(bytes)
  assert.ok(first.ok && again.ok && again.value === first.value, 'the same parsed ABI comes back')
  assert.deepEqual(first.ok && first.value.abi.tables.map((t) => String(t.name)), ['accounts', 'stat'])
  assert.equal(first.ok && first.value.actionType('transfer'), 'transfer')
  const bad = cache.fromBinary(new Uint8Array([1, 2, 3]))
  assert.equal(bad.ok, false)
  assert.equal(cache.fromBinary(new Uint8Array(0)).ok, false)
  for (let i = 0; i < 4; i++)
    cache.fromBinary(
      encodeAbiBinary(ABI.from({ ...JSON.parse(JSON.stringify(tokenAbi)), version: `eosio::abi/1.${i}` })),
    )
  assert.equal(cache.size, 2)
})

test('the decoder returns the value or the error, never throws', () => {
  const decoder = createWharfkitDecoder()
  const data = Serializer.encode({
    abi: tokenAbi,
    type: 'transfer',
    object: { from: 'alice', to: 'bob', quantity: '1.0000 EOS', memo: 'hi' },
  }).array
  assert.deepEqual(decoder.decode({ abi: tokenAbi, type: 'transfer', data }), {
    ok: true,
    value: { from: 'alice', to: 'bob', quantity: '1.0000 EOS', memo: 'hi' },
  })
  const truncated = decoder.decode({ abi: tokenAbi, type: 'transfer', data: data.subarray(0, 10) })
  assert.equal(truncated.ok, false)
  assert.equal(decoder.decode({ abi: tokenAbi, type: 'no_such_type', data }).ok, false)
  assert.deepEqual(decoder.decode({ abi: tokenAbi, type: 'transfer', data: new Uint8Array([...data, 0, 0]) }), {
    ok: false,
    error: '2 bytes left after decoding transfer',
  })
  // Invalid UTF-8 in a memo (as on mainnet) decodes with replacement characters instead of failing.
  const badMemo = new Uint8Array([...data.subarray(0, data.length - 3), 2, 0xff, 0xfe])
  const decoded = decoder.decode({ abi: tokenAbi, type: 'transfer', data: badMemo })
  assert.ok(decoded.ok && (decoded.value as { memo: string }).memo.length === 2)
})

test('signingDigest() hashes the packed context-free data where wharfkit appends zeros', () => {
  const chainId = 'cf'.repeat(32)
  const trx = Transaction.from({ expiration: 1000, ref_block_num: 1, ref_block_prefix: 2, actions: [] })
  const packed = Serializer.encode({ object: trx }).array
  assert.equal(toHex(signingDigest(chainId, packed, packContextFreeData([]))), trx.signingDigest(chainId).hexString)
  const cfd = packContextFreeData([fromHex('0102'), fromHex('ff')])
  assert.equal(toHex(cfd), '0202010201ff')
  const expected = toHex(sha256(fromHex(chainId), packed, sha256(cfd)))
  assert.equal(toHex(signingDigest(chainId, packed, cfd)), expected)
  assert.notEqual(expected, trx.signingDigest(chainId).hexString)
})
