import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { ABI } from '@wharfkit/antelope'
import { AbiCache, BinaryWriter, encodeAbiBinary, symbolToBigInt } from '../../src/antelope/index.ts'
import { hyperionAbiSnapshot } from '../../src/hyperion/abi-snapshot.ts'
import { hyperionBlock, hyperionBlocks } from '../../src/hyperion/block-queries.ts'
import { hyperionDeltas } from '../../src/hyperion/delta-query.ts'
import { hyperionTableState } from '../../src/hyperion/table-state.ts'
import { createBlockDecoderSource } from '../../src/lifecycle/decoder.ts'
import type { BlockBatch, Store } from '../../src/store/index.ts'
import { tempSqliteFile } from '../_helpers/store.ts'

const TOKEN_ABI = ABI.from({
  version: 'eosio::abi/1.2',
  structs: [{ name: 'account', base: '', fields: [{ name: 'balance', type: 'asset' }] }],
  tables: [{ name: 'accounts', type: 'account', index_type: 'i64', key_names: [], key_types: [] }],
})
const SYS = symbolToBigInt('4,SYS')
const PK = SYS >> 8n
const balance = (units: number) => new BinaryWriter().int64(BigInt(units)).uint64(SYS).finish()
const id = (num: number) => num.toString(16).padStart(8, '0') + 'a'.repeat(56)

function block(num: number, changes: Partial<BlockBatch>, producer = 'prod.a'): BlockBatch {
  return {
    block: {
      num,
      id: id(num),
      previous: num === 1 ? '0'.repeat(64) : id(num - 1),
      timestampMs: Date.UTC(2024, 0, 1) + num * 500,
      producer,
      transactionCount: num,
      actionCount: 0,
    },
    transactions: [],
    actions: [],
    rows: [],
    abis: [],
    permissions: [],
    links: [],
    ...changes,
  }
}

const row = (scope: string, value: number | undefined) => ({
  code: 'tok',
  table: 'accounts',
  scope,
  primaryKey: PK,
  payer: scope,
  value: value === undefined ? undefined : balance(value),
})

/** Blocks 1–4: the ABI, balances of alice and bob, alice's change, bob's removal; 30 holders at block 5. */
async function tokenStore(t: TestContext): Promise<Store> {
  const store = tempSqliteFile(t)()
  await store.applyBlock(
    block(1, { abis: [{ account: 'tok', abi: encodeAbiBinary(TOKEN_ABI) }], rows: [row('alice', 10), row('bob', 20)] }),
    0,
  )
  await store.applyBlock(block(2, { rows: [row('alice', 15)] }, 'prod.b'), 0)
  await store.applyBlock(block(3, { rows: [row('bob', undefined)] }), 0)
  await store.applyBlock(block(4, {}), 0)
  const holders = Array.from({ length: 30 }, (_, i) => row(`h${String(i).padStart(2, '0')}`, i + 1))
  await store.applyBlock(block(5, { rows: holders }), 0)
  return store
}

test('get_deltas: filters, sort, removals with their last value, amount/symbol, total and refusals', async (t) => {
  const store = await tokenStore(t)
  const decoders = createBlockDecoderSource(store)
  const deltas = (q: Record<string, unknown>) => hyperionDeltas(store, decoders, q)

  const alice = await deltas({ code: 'tok', table: 'accounts', scope: 'alice' })
  assert.deepEqual(alice.total, { value: 2, relation: 'eq' })
  assert.deepEqual(
    alice.deltas.map((d) => [d.block_num, d.present, d.data]),
    [
      [2, 1, { balance: '0.0015 SYS', amount: 0.0015, symbol: 'SYS' }],
      [1, 1, { balance: '0.0010 SYS', amount: 0.001, symbol: 'SYS' }],
    ],
  )
  assert.equal(alice.deltas[0]?.timestamp, '2024-01-01T00:00:01.000')
  assert.equal(alice.deltas[0]?.block_id, id(2))
  assert.equal(alice.deltas[0]?.primary_key, PK.toString())

  const removed = await deltas({ scope: 'bob', present: 0 })
  assert.deepEqual(
    removed.deltas.map((d) => [d.block_num, d.present, d.payer, d.data]),
    [[3, 0, 'bob', { balance: '0.0020 SYS', amount: 0.002, symbol: 'SYS' }]],
  )

  const asc = await deltas({ scope: 'alice,bob', sort: 'asc', limit: 2, skip: 1 })
  assert.deepEqual(
    asc.deltas.map((d) => [d.block_num, d.scope]),
    [
      [1, 'bob'],
      [2, 'alice'],
    ],
  )
  assert.equal(asc.total.value, 4)
  assert.deepEqual(
    (await deltas({ after: '2', before: '3' })).deltas.map((d) => d.block_num),
    [3, 2],
  )
  assert.deepEqual(
    (await deltas({ after: '2024-01-01T00:00:01', before: '2024-01-01T00:00:01.000Z' })).deltas.map((d) => d.block_num),
    [2],
  )
  assert.deepEqual(
    (await deltas({ block_num: '1,3' })).deltas.map((d) => d.block_num),
    [3, 1, 1],
  )
  assert.deepEqual(
    (await deltas({ block_id: id(3) })).deltas.map((d) => d.block_num),
    [3],
  )
  assert.equal((await deltas({ primary_key: PK.toString(), scope: 'alice' })).deltas.length, 2)
  assert.equal((await deltas({ payer: 'nobody' })).deltas.length, 0)
  assert.equal((await deltas({ limit: 5000 })).deltas.length, 34) // capped at 1000, all 34 fit

  const refusal = async (q: Record<string, unknown>, message: RegExp) =>
    assert.rejects(deltas(q), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'hyperion_bad_request_error')
      assert.match(e.message, message)
      return true
    })
  await refusal({ 'data.balance': '1' }, /unsupported filter: data\.balance/)
  await refusal({ skip: 10_001 }, /skip is above maximum internal limit: 10000/)
  await refusal({ primary_key: '-1' }, /invalid primary_key/)
  await refusal({ primary_key: '18446744073709551616' }, /invalid primary_key/)
  await refusal({ after: 'xT' }, /invalid after date/)
  await refusal({ scope: Array.from({ length: 21 }, (_, i) => `s${i}`).join(',') }, /too many values for scope/)
})

test('get_table_state: rows at a height, removed rows left out, 25 a page with next_key', async (t) => {
  const store = await tokenStore(t)
  const abis = new AbiCache(4)
  const at3 = await hyperionTableState(store, abis, { code: 'tok', table: 'accounts', block_num: 3 })
  assert.equal(at3.next_key, '')
  assert.deepEqual(at3.results, [
    {
      scope: 'alice',
      primary_key: PK.toString(),
      payer: 'alice',
      timestamp: '2024-01-01T00:00:01.000',
      block_num: 2,
      block_id: id(2),
      present: 1,
      data: { balance: '0.0015 SYS', amount: 0.0015, symbol: 'SYS' },
    },
  ])
  const at1 = await hyperionTableState(store, abis, { code: 'tok', table: 'accounts', block_num: 1 })
  assert.deepEqual(
    at1.results.map((r) => r.scope),
    ['alice', 'bob'],
  )

  const first = await hyperionTableState(store, abis, { code: 'tok', table: 'accounts' })
  assert.equal(first.results.length, 25)
  assert.equal(first.next_key, `h23-${PK}`)
  const second = await hyperionTableState(store, abis, {
    code: 'tok',
    table: 'accounts',
    after_key: first.next_key,
  })
  assert.deepEqual(
    second.results.map((r) => r.scope),
    ['h24', 'h25', 'h26', 'h27', 'h28', 'h29'],
  )
  assert.equal(second.next_key, '')
  assert.equal(second.after_key, first.next_key)
  await assert.rejects(hyperionTableState(store, abis, { code: 'tok', table: 'accounts', after_key: 'nokey' }))
})

test('get_abi_snapshot, get_block, get_blocks', async (t) => {
  const store = await tokenStore(t)
  const abis = new AbiCache(4)
  assert.deepEqual(await hyperionAbiSnapshot(store, abis, { contract: 'tok' }), { block_num: 1, present: true })
  const fetched = await hyperionAbiSnapshot(store, abis, { contract: 'tok', block: 3, fetch: true })
  assert.equal(fetched.block_num, 1)
  assert.equal((fetched as { abi: { tables: { name: string }[] } }).abi.tables[0]?.name, 'accounts')
  assert.deepEqual(await hyperionAbiSnapshot(store, abis, { contract: 'nobody', block: 4 }), {
    block_num: null,
    present: false,
    error: 'abi not found for nobody until block 4',
  })

  assert.deepEqual(await hyperionBlock(store, 2), {
    cached: false,
    lib: 0,
    total: { value: 1, relation: 'eq' },
    '@timestamp': '2024-01-01T00:00:01.000',
    block_num: 2,
    block_id: id(2),
    prev_id: id(1),
    producer: 'prod.b',
    schedule_version: 0,
    cpu_usage: 0,
    net_usage: 0,
    trx_count: 0,
  })
  await assert.rejects(hyperionBlock(store, 99), /Block 99 not found/)

  const nums = async (q: Parameters<typeof hyperionBlocks>[1]) =>
    (await hyperionBlocks(store, q)).blocks.map((b) => b.block_num)
  assert.deepEqual(await nums({}), [5, 4, 3, 2, 1])
  assert.deepEqual(await nums({ sort: 'asc', limit: 2, skip: 1 }), [2, 3])
  assert.deepEqual(await nums({ producer: 'prod.b' }), [2])
  assert.deepEqual(await nums({ min_trx_count: 1 }), []) // no block here lists a transaction
  assert.deepEqual(await nums({ trx_count: 0, before: '2' }), [2, 1])
  assert.deepEqual(await nums({ after: '2', before: '3' }), [3, 2])
  assert.deepEqual(await nums({ block_id: id(4) }), [4])
  assert.deepEqual(await nums({ block_num: 1, limit: 10 }), [1])
  assert.deepEqual((await hyperionBlocks(store, { producer: 'prod.a' })).total, { value: 4, relation: 'eq' })
  await assert.rejects(hyperionBlocks(store, { block_num: 77 }), /Block not found/)
  await assert.rejects(hyperionBlocks(store, { skip: 20_000 }), /skip is above maximum internal limit/)
})
