import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ABI } from '@wharfkit/antelope'
import { BinaryWriter, CompiledAbi, createWharfkitDecoder } from '../../src/antelope/index.ts'
import { loadAntelopeFixture } from '../_helpers/fixtures.ts'
import { seededRandom } from '../_helpers/store.ts'

const BUILTINS = [
  'bool',
  'int8',
  'uint8',
  'int16',
  'uint16',
  'int32',
  'uint32',
  'int64',
  'uint64',
  'int128',
  'uint128',
  'varint32',
  'varuint32',
  'time_point',
  'time_point_sec',
  'block_timestamp_type',
  'name',
  'bytes',
  'string',
  'checksum160',
  'checksum256',
  'checksum512',
  'public_key',
  'symbol',
  'symbol_code',
  'asset',
  'extended_asset',
  'float64',
  'signature',
]

const SYNTHETIC = ABI.from({
  version: 'eosio::abi/1.2',
  types: [{ new_type_name: 'account_name', type: 'name' }],
  structs: [
    { name: 'base', base: '', fields: [{ name: 'owner', type: 'account_name' }] },
    { name: 'all', base: 'base', fields: BUILTINS.map((t, i) => ({ name: `f${i}_${t}`, type: t })) },
    {
      name: 'nested',
      base: '',
      fields: [
        { name: 'items', type: 'all[]' },
        { name: 'maybe', type: 'base?' },
        { name: 'choice', type: 'pick' },
        { name: 'tail', type: 'uint32$' },
      ],
    },
    {
      name: 'nofloat',
      base: '',
      fields: BUILTINS.filter((t) => t !== 'float64' && t !== 'signature').map((t) => ({ name: t, type: `${t}[]` })),
    },
  ],
  variants: [{ name: 'pick', types: ['name', 'asset', 'base'] }],
  actions: [],
  tables: [],
  ricardian_clauses: [],
})

/** Writes a random valid encoding of `type`, so both decoders must succeed and agree. */
function writeRandom(abi: ABI, type: string, w: BinaryWriter, random: () => number, depth = 0): void {
  const int = (n: number) => Math.floor(random() * n)
  const bytes = (n: number) => Uint8Array.from({ length: n }, () => int(256))
  if (type.endsWith('[]')) {
    const n = depth > 1 ? 0 : int(3)
    w.varuint32(n)
    for (let i = 0; i < n; i++) writeRandom(abi, type.slice(0, -2), w, random, depth + 1)
    return
  }
  if (type.endsWith('?')) {
    const present = random() < 0.5
    w.bool(present)
    if (present) writeRandom(abi, type.slice(0, -1), w, random, depth + 1)
    return
  }
  if (type.endsWith('$')) {
    if (random() < 0.5) writeRandom(abi, type.slice(0, -1), w, random, depth + 1)
    return
  }
  const symbol = () => {
    const code = Array.from({ length: 1 + int(7) }, () => 65 + int(26))
    w.uint8(int(19)).raw(Uint8Array.from([...code, ...new Array(7 - code.length).fill(0)]))
  }
  switch (type) {
    case 'bool':
      w.bool(random() < 0.5)
      return
    case 'int8':
    case 'uint8':
      w.raw(bytes(1))
      return
    case 'int16':
    case 'uint16':
      w.raw(bytes(2))
      return
    case 'int32':
    case 'uint32':
    case 'time_point_sec':
    case 'block_timestamp_type':
      w.raw(bytes(4))
      return
    // Small magnitudes too (both signs): fc writes 64- and 128-bit integers below 2^32 as numbers, larger ones as
    // strings.
    case 'int64':
    case 'uint64':
      if (random() < 0.5) w.uint64(BigInt.asUintN(64, BigInt(int(2 ** 33) - 2 ** 32)))
      else w.raw(bytes(8))
      return
    case 'int128':
    case 'uint128':
      if (random() < 0.5) {
        w.uint64(BigInt.asUintN(64, BigInt(int(2 ** 33) - 2 ** 32)))
        w.uint64(random() < 0.5 ? 0n : (1n << 64n) - 1n)
      } else w.raw(bytes(16))
      return
    case 'name':
      w.raw(bytes(8))
      return
    case 'time_point':
      w.uint64(BigInt(int(4e12)) * 1000n + BigInt(int(1000)))
      return
    case 'float64':
      w.raw(bytes(8))
      return
    case 'checksum160':
      w.raw(bytes(20))
      return
    case 'varint32':
    case 'varuint32':
      w.varuint32(int(2 ** 32))
      return
    case 'bytes':
      w.bytes(bytes(int(20)))
      return
    case 'string':
      w.bytes(new TextEncoder().encode(['', 'héllo', 'memo text', '🦌 antler'][int(4)]))
      return
    case 'checksum256':
      w.raw(bytes(32))
      return
    case 'checksum512':
      w.raw(bytes(64))
      return
    case 'public_key':
      w.uint8(int(2)).raw(Uint8Array.from([2 + int(2), ...bytes(32)]))
      return
    case 'signature':
      w.uint8(0).raw(Uint8Array.from([27 + int(4), ...bytes(64)]))
      return
    case 'symbol':
      symbol()
      return
    case 'symbol_code':
      w.raw(Uint8Array.from([69, 79, 83, 0, 0, 0, 0, 0]))
      return
    case 'asset':
      w.raw(bytes(8))
      symbol()
      return
    case 'extended_asset':
      w.raw(bytes(8))
      symbol()
      w.raw(bytes(8))
      return
  }
  const alias = abi.types.find((t) => t.new_type_name === type)
  if (alias) return writeRandom(abi, alias.type, w, random, depth)
  const variant = abi.variants.find((v) => v.name === type)
  if (variant) {
    const i = int(variant.types.length)
    w.varuint32(i)
    return writeRandom(abi, variant.types[i], w, random, depth + 1)
  }
  const struct = abi.structs.find((s) => s.name === type)
  assert.ok(struct, `no type ${type}`)
  if (struct.base) writeRandom(abi, struct.base, w, random, depth)
  for (const f of struct.fields) writeRandom(abi, f.type, w, random, depth + 1)
}

function differential(abi: ABI, types: readonly string[], rounds: number, seed: number): void {
  const reference = createWharfkitDecoder()
  const compiled = new CompiledAbi(abi, reference)
  const random = seededRandom(seed)
  for (const type of types) {
    for (let i = 0; i < rounds; i++) {
      const w = new BinaryWriter()
      writeRandom(abi, type, w, random)
      const data = w.finish()
      const expected = reference.decode({ abi, type, data })
      assert.ok(expected.ok, `reference failed on ${type}: ${expected.ok ? '' : expected.error}`)
      assert.deepEqual(compiled.decode(type, data), expected, `${type} #${i}`)
      // Every strict prefix is malformed: both must refuse it.
      const cut = Math.floor(random() * data.length)
      if (cut < data.length) {
        const truncated = compiled.decode(type, data.subarray(0, cut))
        const refTruncated = reference.decode({ abi, type, data: data.subarray(0, cut) })
        assert.equal(
          truncated.ok,
          refTruncated.ok,
          `${type} cut at ${cut}: ${JSON.stringify(truncated)} vs ${JSON.stringify(refTruncated)}`,
        )
      }
    }
  }
}

test('compiled ABI decoding equals wharfkit on every builtin, alias, base, array, optional, extension and variant', () => {
  differential(SYNTHETIC, ['all', 'nested', 'nofloat'], 300, 7)
})

test('compiled ABI decoding equals wharfkit on the recorded eosio and eosio.token ABIs', () => {
  for (const file of ['jungle4-get_abi-eosio.json', 'jungle4-get_abi-eosio.token.json']) {
    const abi = ABI.from(loadAntelopeFixture<{ abi: ABI }>(file).response.abi)
    differential(
      abi,
      abi.actions.map((a) => a.type),
      40,
      11,
    )
  }
})

test('trailing bytes and unknown types are errors, as with the reference decoder', () => {
  const compiled = new CompiledAbi(SYNTHETIC, createWharfkitDecoder())
  const r = compiled.decode('base', new Uint8Array(9))
  assert.deepEqual(r, { ok: false, error: '1 bytes left after decoding base' })
  assert.equal(compiled.decode('nosuchtype', new Uint8Array(8)).ok, false)
})
