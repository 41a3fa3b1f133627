import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Serializer, Transaction } from '@wharfkit/antelope'
import { repackTransaction, v1TransactionNotFound } from '../../src/hyperion/v1-get-transaction.ts'
import type { WireSignedTransaction } from '../../src/lifecycle/types.ts'

const action = (name: string, hex: string) => ({
  account: 'eosio.token',
  name,
  authorization: [{ actor: 'alice', permission: 'active' }],
  hex_data: hex,
})

test('get_transaction: the signed transaction packs again to the bytes wharfkit packs, with cfa, delay and extensions', () => {
  const wire: WireSignedTransaction = {
    expiration: '2026-11-29T12:00:00',
    ref_block_num: 4321,
    ref_block_prefix: 3_000_000_000,
    max_net_usage_words: 300,
    max_cpu_usage_ms: 7,
    delay_sec: 200,
    context_free_actions: [{ ...action('noop', 'aabb'), authorization: [] }],
    actions: [action('transfer', '00'.repeat(40)), action('transfer', '')],
    transaction_extensions: [[1, 'deadbeef']],
    signatures: [],
    context_free_data: [],
  }
  const expected = Transaction.from({
    ...wire,
    context_free_actions: wire.context_free_actions.map((a) => ({
      ...a,
      authorization: [...a.authorization],
      data: a.hex_data,
    })),
    actions: wire.actions.map((a) => ({ ...a, authorization: [...a.authorization], data: a.hex_data })),
    transaction_extensions: [{ type: 1, data: 'deadbeef' }],
  })
  const id = String(expected.id)
  const packed = repackTransaction(wire, id)
  assert.ok(packed, 'packs to the same id')
  assert.equal(Buffer.from(packed).toString('hex'), Serializer.encode({ object: expected }).hexString)
  // A record missing a part (here another delay) does not pack to the id: no packed_trx rather than a wrong one.
  assert.equal(repackTransaction({ ...wire, delay_sec: 0 }, id), undefined)
})

test("get_transaction: not found is nodeos's tx_not_found object naming the id", () => {
  const body = v1TransactionNotFound('ab'.repeat(32))
  assert.equal(body.code, 404)
  assert.equal(body.error.code, 3040011)
  assert.equal(body.error.name, 'tx_not_found')
  assert.equal(body.error.what, 'The transaction can not be found')
  assert.equal(
    body.error.details[0].message,
    `Transaction ${'ab'.repeat(32)} not found in history and no block hint was given`,
  )
})
