import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ABI } from '@wharfkit/antelope'
import { BinaryWriter, CompiledAbi, createWharfkitDecoder, symbolToBigInt } from '../../src/antelope/index.ts'
import { deltaDocuments, rowDecoderOf, withTableProjection } from '../../src/hyperion/delta-documents.ts'
import type { BlockRecord, RowChange } from '../../src/store/index.ts'

const TOKEN_ABI = new CompiledAbi(
  ABI.from({
    version: 'eosio::abi/1.2',
    structs: [{ name: 'account', base: '', fields: [{ name: 'balance', type: 'asset' }] }],
    tables: [{ name: 'accounts', type: 'account', index_type: 'i64', key_names: [], key_types: [] }],
  }),
  createWharfkitDecoder(),
)

const balance = (units: bigint): Uint8Array => new BinaryWriter().int64(units).uint64(symbolToBigInt('4,SYS')).finish()

const BLOCK: BlockRecord = {
  num: 42,
  id: '0000002a' + 'ab'.repeat(28),
  previous: '00000029' + 'cd'.repeat(28),
  timestampMs: Date.UTC(2024, 4, 16, 19, 25, 44, 500),
  producer: 'eosio',
  transactionCount: 1,
  actionCount: 2,
}

const decode = rowDecoderOf((account) => (account === 'eosio.token' ? TOKEN_ABI : undefined))

test('a written row becomes a present document decoded with the ABI, with amount and symbol merged', () => {
  const change: RowChange = {
    code: 'eosio.token',
    table: 'accounts',
    scope: 'alice',
    primaryKey: symbolToBigInt('4,SYS') >> 8n,
    payer: 'alice',
    value: balance(15_000n),
    old: undefined,
  }
  assert.deepEqual(deltaDocuments([change], BLOCK, decode), [
    {
      timestamp: '2024-05-16T19:25:44.500',
      present: 1,
      code: 'eosio.token',
      scope: 'alice',
      table: 'accounts',
      primary_key: '5462355',
      payer: 'alice',
      block_num: 42,
      block_id: BLOCK.id,
      data: { balance: '1.5000 SYS', amount: 1.5, symbol: 'SYS' },
    },
  ])
})

test('a removal is present 0 with the removed row as data and its payer', () => {
  const change: RowChange = {
    code: 'eosio.token',
    table: 'accounts',
    scope: 'bob',
    primaryKey: 5462355n,
    payer: '',
    value: undefined,
    old: { payer: 'bob', value: balance(7n) },
  }
  const [doc] = deltaDocuments([change], BLOCK, decode)
  assert.equal(doc?.present, 0)
  assert.equal(doc?.payer, 'bob')
  assert.deepEqual(doc?.data, { balance: '0.0007 SYS', amount: 0.0007, symbol: 'SYS' })
})

test('a removal without the old value, a contract without ABI, and undecodable bytes give data {}', () => {
  const base = { table: 'accounts', scope: 's', primaryKey: 1n, payer: 'p', old: undefined }
  const docs = deltaDocuments(
    [
      { ...base, code: 'eosio.token', value: undefined },
      { ...base, code: 'noabi', value: balance(1n) },
      { ...base, code: 'eosio.token', value: Uint8Array.of(1, 2) },
    ],
    BLOCK,
    decode,
  )
  assert.deepEqual(
    docs.map((d) => [d.present, d.data]),
    [
      [0, {}],
      [1, {}],
      [1, {}],
    ],
  )
})

test('the accounts projection only touches an accounts row with an asset string balance', () => {
  assert.deepEqual(withTableProjection('stat', { balance: '1.0 X' }), { balance: '1.0 X' })
  assert.deepEqual(withTableProjection('accounts', { balance: 5 }), { balance: 5 })
  assert.deepEqual(withTableProjection('accounts', 'x'), 'x')
  assert.deepEqual(withTableProjection('accounts', { balance: '12 EOS', memo: 'm' }), {
    balance: '12 EOS',
    memo: 'm',
    amount: 12,
    symbol: 'EOS',
  })
})
