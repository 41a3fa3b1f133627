import assert from 'node:assert/strict'
import { test } from 'node:test'
import { KEY_TYPES, nameToBigInt, renderKey, symbolCodeToBigInt, symbolToBigInt } from '../../src/antelope/index.ts'
import { keyRenderer } from '../../src/state/keys.ts'
import { seededRandom } from '../_helpers/store.ts'

const MAX = (1n << 64n) - 1n

test('keyRenderer renders every key type as renderKey does', () => {
  const random = seededRandom(7)
  const byte = () => BigInt(Math.floor(random() * 256))
  const values = [0n, 1n, 15n, 16n, 255n, 256n, MAX, MAX - 1n, 1n << 63n, (1n << 32n) - 1n, 1n << 32n, 0xf0n, 5459781n]
  values.push(
    nameToBigInt('eosio'),
    nameToBigInt('eosio.token'),
    nameToBigInt('a'),
    nameToBigInt('zzzzzzzzzzzzj'),
    nameToBigInt('1.2.3.4.5'),
    nameToBigInt('........ehbo5'),
  )
  values.push(
    symbolCodeToBigInt('EOS'),
    symbolCodeToBigInt('ABCDEFG'),
    symbolToBigInt('4,EOS'),
    symbolToBigInt('18,ABCDEFG'),
  )
  for (let i = 0; i < 5000; i++) {
    // Random bytes, with zero bytes in random places (symbol codes stop at the first one).
    let v = 0n
    for (let b = 0; b < 8; b++) v = (v << 8n) | (random() < 0.2 ? 0n : byte())
    values.push(v)
  }
  for (const keyType of KEY_TYPES) {
    const render = keyRenderer(keyType)
    for (const value of values) assert.equal(render(value), renderKey(value, keyType), `${keyType} of ${value}`)
  }
})
