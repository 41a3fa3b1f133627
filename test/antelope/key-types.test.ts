import { test } from 'node:test'
import assert from 'node:assert/strict'
import { KEY_TYPES, parseKey, renderKey, isValidName, nameToBigInt, bigIntToName } from '../../src/antelope/index.ts'

test('renderKey() renders the dfuse examples', () => {
  const v = 5459781n // 0x534f45, "EOS"
  assert.equal(renderKey(v, 'name'), '........ehbo5')
  assert.equal(renderKey(v, 'uint64'), '5459781')
  assert.equal(renderKey(v, 'hex'), '454f530000000000')
  assert.equal(renderKey(v, 'hex_be'), '0000000000534f45')
  assert.equal(renderKey(v, 'symbol_code'), 'EOS')
  assert.equal(renderKey(1397703940n, 'symbol'), '4,EOS')
  assert.equal(renderKey(1397703940n, 'name'), '......2ndx2k4')
})

test('parseKey() reads back every rendering of renderKey()', () => {
  const values = [0n, 1n, 5459781n, 1397703940n, nameToBigInt('eosio.token'), (1n << 64n) - 1n, 0x0123456789abcdefn]
  for (const value of values) {
    for (const keyType of KEY_TYPES.filter((k) => k !== 'symbol' && k !== 'symbol_code')) {
      const text = renderKey(value, keyType)
      assert.equal(parseKey(text, keyType), value, `${keyType} ${text}`)
    }
  }
  // Symbol renderings are lossless only for values that are symbols.
  assert.equal(parseKey(renderKey(1397703940n, 'symbol'), 'symbol'), 1397703940n)
  assert.equal(parseKey(renderKey(5459781n, 'symbol_code'), 'symbol_code'), 5459781n)
})

test('parseKey() accepts the symbol forms where a name is expected', () => {
  assert.equal(parseKey('EOS', 'name'), 5459781n)
  assert.equal(parseKey('4,EOS', 'name'), 1397703940n)
  assert.equal(parseKey('534f45', 'hex_be'), 5459781n)
})

test('parseKey() refuses malformed keys with invalid_chain_value_error', () => {
  const bad: [string, (typeof KEY_TYPES)[number]][] = [
    ['18446744073709551616', 'uint64'],
    ['12x', 'uint64'],
    ['454f53', 'hex'],
    ['zz', 'hex_be'],
    ['UPPER.case', 'name'],
    ['eos', 'symbol_code'],
    ['99,EOS', 'symbol'],
    ['abcdefghijklmn', 'name'],
  ]
  for (const [text, keyType] of bad) {
    assert.throws(
      () => parseKey(text, keyType),
      (e: { code?: string }) => e.code === 'invalid_chain_value_error',
      `${keyType} ${text}`,
    )
  }
})

test('isValidName() accepts canonical names only', () => {
  for (const name of ['eosio', 'eosio.token', 'a', '', '12345abcdefgj', 'alice']) assert.ok(isValidName(name), name)
  for (const name of ['Alice', 'eosio.', '12345abcdefgz', 'abcdefghijklmn', 'a b', '6'])
    assert.ok(!isValidName(name), name)
  assert.equal(bigIntToName(nameToBigInt('eosio.token')), 'eosio.token')
})
