import { test } from 'node:test'
import assert from 'node:assert/strict'
import { toHex } from '../../src/antelope/index.ts'
import { Chain, DEV_PUBLIC_KEY, pushSigned, signTransaction, token } from '../../src/devchain/index.ts'
import { decodeShipType } from '../../src/ship/index.ts'
import { PrivateKey } from '@wharfkit/antelope'
import { postJson, withDevchain } from '../_helpers/devchain.ts'

test('producers rotate every 12 blocks, timestamps strictly increase, LIB trails head by --lib-depth', () => {
  const chain = new Chain({
    dataDir: undefined,
    producers: 3,
    libDepth: 7,
    now: () => Date.parse('2030-01-01T00:00:00Z'),
  })
  for (let i = 0; i < 40; i++) chain.produceBlock()
  const producers = Array.from({ length: 36 }, (_, i) => chain.block(i + 2)!.producer)
  assert.deepEqual(producers, [
    ...Array(12).fill('producera'),
    ...Array(12).fill('producerb'),
    ...Array(12).fill('producerc'),
  ])
  for (let n = 2; n <= chain.head.num; n++) {
    const block = decodeShipType<{ timestamp: string; previous: string }>('signed_block', chain.block(n)!.block)
    const parent = decodeShipType<{ timestamp: string }>('signed_block', chain.block(n - 1)!.block)
    assert.ok(
      Date.parse(`${block.timestamp}Z`) > Date.parse(`${parent.timestamp}Z`),
      `block ${n} is later than its parent`,
    )
    assert.equal(block.previous, chain.blockIdAt(n - 1))
  }
  assert.equal(chain.lib.blockNum, chain.head.num - 7)
  chain.close()
})

test('compute_transaction runs a transaction without keeping it; get_required_keys names the keys', async (t) => {
  const devchain = await withDevchain(t)
  const lib = devchain.chain.block(devchain.chain.lib.blockNum)!
  const input = signTransaction({
    chainId: devchain.chainId,
    ref: { blockNum: lib.num, blockId: lib.id, slot: devchain.chain.head.slot },
    actions: [
      {
        account: 'eosio.token',
        name: 'transfer',
        authorization: [{ actor: 'alice', permission: 'active' }],
        data: { from: 'alice', to: 'bob', quantity: '3.0000 EOS', memo: 'dry' },
      },
    ],
    abiOf: () => token.abi,
    keys: [],
  })
  const computed = await postJson(devchain.chainApi + '/v1/chain/compute_transaction', {
    transaction: { signatures: [], compression: 0, packed_context_free_data: '', packed_trx: toHex(input.packedTrx) },
  })
  assert.equal(computed.status, 200, JSON.stringify(computed.body))
  assert.equal((computed.body.processed as { action_traces: unknown[] }).action_traces.length, 3)
  const balance = await postJson(devchain.chainApi + '/v1/chain/get_currency_balance', {
    code: 'eosio.token',
    account: 'bob',
  })
  assert.deepEqual(balance.body, ['1000.0000 EOS'], 'nothing was kept')

  const required = await postJson(devchain.chainApi + '/v1/chain/get_required_keys', {
    transaction: {
      actions: [
        { account: 'eosio.token', name: 'transfer', authorization: [{ actor: 'alice', permission: 'active' }] },
      ],
    },
    available_keys: [DEV_PUBLIC_KEY, PrivateKey.generate('K1').toPublic().toLegacyString()],
  })
  assert.deepEqual(required.body, { required_keys: [DEV_PUBLIC_KEY] })
})

test('get_block_header_state answers reversible blocks only; get_table_rows pages by primary key', async (t) => {
  const devchain = await withDevchain(t, { libDepth: 3 })
  for (let i = 0; i < 5; i++) {
    pushSigned(devchain.chain, [
      {
        account: 'rawdb',
        name: 'put',
        authorization: [{ actor: 'rawdb', permission: 'active' }],
        data: { scope: 'rawdb', table: 'items', key: String(10 - i), payer: 'rawdb', value: 'ab' },
      },
    ])
    devchain.chain.produceBlock()
  }
  const head = await postJson(devchain.chainApi + '/v1/chain/get_block_header_state', {
    block_num_or_id: devchain.chain.head.id,
  })
  assert.equal(head.status, 200)
  assert.equal(head.body.id, devchain.chain.head.id)
  const old = await postJson(devchain.chainApi + '/v1/chain/get_block_header_state', { block_num_or_id: 2 })
  assert.equal(old.status, 400)
  assert.equal((old.body.error as { name: string }).name, 'unknown_block_exception')

  const page = await postJson(devchain.chainApi + '/v1/chain/get_table_rows', {
    code: 'rawdb',
    scope: 'rawdb',
    table: 'items',
    limit: 2,
    lower_bound: '7',
  })
  assert.deepEqual(page.body, { rows: ['ab', 'ab'], more: true, next_key: '9' })
  const payer = await postJson(devchain.chainApi + '/v1/chain/get_table_rows', {
    code: 'rawdb',
    scope: 'rawdb',
    table: 'items',
    show_payer: true,
    limit: 1,
  })
  assert.deepEqual(payer.body.rows, [{ data: 'ab', payer: 'rawdb' }])
})
