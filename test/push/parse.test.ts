import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { deflateSync } from 'node:zlib'
import { Action, Serializer, Transaction } from '@wharfkit/antelope'
import { token } from '../../src/devchain/index.ts'
import {
  createPushService,
  parsePushGuarantee,
  readPackedTransaction,
  type PushGuarantee,
} from '../../src/push/index.ts'
import { openSqliteStore } from '../../src/store/index.ts'
import { tempDir } from '../_helpers/devchain.ts'
import { onCleanup } from '../_helpers/cleanup.ts'

test('parsePushGuarantee() accepts dfuse header values and nothing else', () => {
  const table: [string, PushGuarantee | undefined][] = [
    ['in-block', { kind: 'in-block' }],
    ['irreversible', { kind: 'irreversible' }],
    ['handoff:1', { kind: 'handoffs', count: 1 }],
    ['handoffs:1', { kind: 'handoffs', count: 1 }],
    ['handoff:2', { kind: 'handoffs', count: 2 }],
    ['handoffs:2', { kind: 'handoffs', count: 2 }],
    ['handoff:3', { kind: 'handoffs', count: 3 }],
    ['handoffs:3', { kind: 'handoffs', count: 3 }],
    ['handoffs:0', undefined],
    ['handoffs:4', undefined],
    ['handoffs:12', undefined],
    ['handoffs', undefined],
    ['handoffs:', undefined],
    ['In-Block', undefined],
    ['inblock', undefined],
    [' in-block', undefined],
    ['irreversible ', undefined],
    ['', undefined],
  ]
  for (const [value, expected] of table) assert.deepEqual(parsePushGuarantee(value), expected, JSON.stringify(value))
})

/** A packed transfer (not signed: only its bytes matter here). */
function packedTransfer(expirationSec: number, contextFree = 0): Uint8Array {
  const action = Action.from(
    {
      account: 'eosio.token',
      name: 'transfer',
      authorization: [{ actor: 'alice', permission: 'active' }],
      data: { from: 'alice', to: 'bob', quantity: '1.0000 EOS', memo: 'm' },
    },
    token.abi,
  )
  const free = Action.from({ account: 'eosio.token', name: 'transfer', authorization: [], data: new Uint8Array(0) })
  const trx = Transaction.from({
    expiration: expirationSec,
    ref_block_num: 7,
    ref_block_prefix: 123,
    actions: [action],
    context_free_actions: Array(contextFree).fill(free),
  })
  return Serializer.encode({ object: trx }).array
}
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')

test('readPackedTransaction() computes the id the chain computes, inflating zlib bodies first, and reads the header', () => {
  const packed = packedTransfer(1_700_000_000, 2)
  const id = String(Transaction.from(Serializer.decode({ data: packed, type: Transaction })).id)
  const plain = readPackedTransaction({
    signatures: [],
    compression: 0,
    packed_context_free_data: '',
    packed_trx: hex(packed),
  })
  assert.deepEqual(plain, { id, expirationSec: 1_700_000_000, delaySec: 0, contextFreeActionCount: 2 })
  for (const compression of [1, 'zlib'] as const) {
    const zipped = readPackedTransaction({
      signatures: [],
      compression,
      packed_context_free_data: '',
      packed_trx: hex(deflateSync(packed)),
    })
    assert.equal(zipped.id, id, `compression ${compression}`)
  }
  assert.equal(readPackedTransaction({ signatures: ['SIG_K1_x'], compression: 'none', packed_trx: hex(packed) }).id, id)
})

test('push() refuses bodies that are not packed transactions with push_invalid_transaction_error, before calling the chain', async (t) => {
  const store = openSqliteStore(join(tempDir(t), 'store.sqlite'))
  onCleanup(t, () => store.close())
  // Nothing listens on port 9: a body that got past validation would fail as push_chain_unavailable_error.
  const service = createPushService({ chainApi: 'http://127.0.0.1:9', store })
  const good = hex(packedTransfer(1_700_000_000))
  const cases: [string, unknown, RegExp][] = [
    ['not an object', 'hello', /JSON object/],
    ['null', null, /JSON object/],
    ['an array', [good], /JSON object/],
    ['no signatures', { compression: 0, packed_trx: good }, /signatures/],
    ['signatures not strings', { signatures: [1], compression: 0, packed_trx: good }, /signatures/],
    ['unknown compression', { signatures: [], compression: 2, packed_trx: good }, /compression/],
    ['compression "gzip"', { signatures: [], compression: 'gzip', packed_trx: good }, /compression/],
    ['odd-length hex', { signatures: [], compression: 0, packed_trx: good.slice(1) }, /packed_trx/],
    ['non-hex packed_trx', { signatures: [], compression: 0, packed_trx: 'zz' }, /packed_trx/],
    ['no packed_trx', { signatures: [], compression: 0 }, /packed_trx/],
    [
      'non-hex context-free data',
      { signatures: [], compression: 0, packed_context_free_data: 'xy', packed_trx: good },
      /packed_context_free_data/,
    ],
    ['truncated transaction', { signatures: [], compression: 0, packed_trx: good.slice(0, 40) }, /does not unpack/],
    ['trailing bytes', { signatures: [], compression: 0, packed_trx: `${good}00` }, /does not unpack/],
    ['zlib flag on plain bytes', { signatures: [], compression: 'zlib', packed_trx: good }, /does not inflate/],
  ]
  for (const [what, body, reason] of cases) {
    await assert.rejects(
      service.push({ body, guarantee: { kind: 'in-block' } }),
      (e: { code?: string; status?: number; details?: { reason?: string } }) => {
        assert.equal(e.code, 'push_invalid_transaction_error', what)
        assert.equal(e.status, 400, what)
        assert.match(String(e.details?.reason), reason, what)
        return true
      },
    )
  }
  await assert.rejects(
    service.push({ body: { signatures: [], compression: 0, packed_trx: good }, guarantee: { kind: 'in-block' } }),
    { code: 'push_chain_unavailable_error', status: 502 },
  )
})
