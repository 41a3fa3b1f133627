import { test } from 'node:test'
import assert from 'node:assert/strict'
import { PrivateKey } from '@wharfkit/antelope'
import { toHex } from '../../src/antelope/index.ts'
import {
  DEV_PRIVATE_KEY,
  signTransaction,
  token,
  type ActionToSign,
  type Devchain,
  type PackedTransactionInput,
} from '../../src/devchain/index.ts'
import { postJson, withDevchain } from '../_helpers/devchain.ts'

const devKey = PrivateKey.from(DEV_PRIVATE_KEY)
const otherKey = PrivateKey.generate('K1')

function transferAction(from: string, to: string, quantity: string, actor = from): ActionToSign {
  return {
    account: 'eosio.token',
    name: 'transfer',
    authorization: [{ actor, permission: 'active' }],
    data: { from, to, quantity, memo: 'test' },
  }
}

function sign(
  devchain: Devchain,
  actions: ActionToSign[],
  options: { keys?: PrivateKey[]; expireSeconds?: number; nonce?: number } = {},
): PackedTransactionInput {
  const head = devchain.chain.head
  return signTransaction({
    chainId: devchain.chainId,
    ref: { blockNum: head.num, blockId: head.id, slot: head.slot },
    actions,
    abiOf: (account) => (account === 'eosio.token' ? token.abi : undefined),
    keys: options.keys ?? [devKey],
    expireSeconds: options.expireSeconds,
    nonce: options.nonce,
  })
}

function packedJson(input: PackedTransactionInput) {
  return {
    signatures: input.signatures,
    compression: input.compression,
    packed_context_free_data: toHex(input.packedContextFreeData),
    packed_trx: toHex(input.packedTrx),
  }
}

interface ErrorBody {
  code: number
  message: string
  error: { code: number; name: string; what: string; details: { message: string }[] }
}

async function expectChainError(
  devchain: Devchain,
  body: unknown,
  expected: { status: number; name: string; message?: RegExp },
  path = '/v1/chain/push_transaction',
) {
  const response = await postJson(devchain.chainApi + path, body)
  const error = response.body as unknown as ErrorBody
  assert.equal(response.status, expected.status, JSON.stringify(error))
  assert.equal(error.code, expected.status)
  assert.equal(error.error.name, expected.name, JSON.stringify(error))
  assert.equal(typeof error.error.code, 'number')
  assert.equal(typeof error.error.what, 'string')
  assert.ok(Array.isArray(error.error.details) && error.error.details.length > 0)
  if (expected.message) assert.match(error.error.details[0].message, expected.message)
}

test('refused transactions get nodeos error bodies and the chain keeps producing', async (t) => {
  const devchain = await withDevchain(t)
  const cases: { what: string; body: () => unknown; status: number; name: string; message?: RegExp; path?: string }[] =
    [
      {
        what: 'signature by a key with no authority',
        body: () => packedJson(sign(devchain, [transferAction('alice', 'bob', '1.0000 EOS')], { keys: [otherKey] })),
        status: 401,
        name: 'unsatisfied_authorization',
      },
      {
        what: 'no signature',
        body: () => packedJson(sign(devchain, [transferAction('alice', 'bob', '1.0000 EOS')], { keys: [] })),
        status: 401,
        name: 'unsatisfied_authorization',
      },
      {
        what: 'an irrelevant extra signature',
        body: () =>
          packedJson(sign(devchain, [transferAction('alice', 'bob', '1.0000 EOS')], { keys: [devKey, otherKey] })),
        status: 500,
        name: 'tx_irrelevant_sig',
      },
      {
        what: 'malformed signature',
        body: () => ({
          ...packedJson(sign(devchain, [transferAction('alice', 'bob', '1.0000 EOS')])),
          signatures: ['SIG_K1_bogus'],
        }),
        status: 400,
        name: 'signature_type_exception',
      },
      {
        what: 'missing authority of the sender',
        body: () => packedJson(sign(devchain, [transferAction('bob', 'carol', '1.0000 EOS', 'alice')])),
        status: 500,
        name: 'missing_auth_exception',
        message: /missing authority of bob/,
      },
      {
        what: 'expired',
        body: () => packedJson(sign(devchain, [transferAction('alice', 'bob', '1.0000 EOS')], { expireSeconds: -10 })),
        status: 500,
        name: 'expired_tx_exception',
      },
      {
        what: 'expiration too far',
        body: () => packedJson(sign(devchain, [transferAction('alice', 'bob', '1.0000 EOS')], { expireSeconds: 7200 })),
        status: 500,
        name: 'tx_exp_too_far_exception',
      },
      {
        what: 'overdrawn balance',
        body: () => packedJson(sign(devchain, [transferAction('alice', 'bob', '5000.0000 EOS')])),
        status: 500,
        name: 'eosio_assert_message_exception',
        message: /overdrawn balance/,
      },
      {
        what: 'transfer to an unknown account',
        body: () => packedJson(sign(devchain, [transferAction('alice', 'nobody', '1.0000 EOS')])),
        status: 500,
        name: 'eosio_assert_message_exception',
        message: /to account does not exist/,
      },
      {
        what: 'an action on an unknown account',
        body: () =>
          packedJson(
            sign(devchain, [
              {
                account: 'nosuchcode',
                name: 'transfer',
                authorization: [{ actor: 'alice', permission: 'active' }],
                data: new Uint8Array(0),
              },
            ]),
          ),
        status: 500,
        name: 'transaction_exception',
        message: /nosuchcode/,
      },
      {
        what: 'an unknown action',
        body: () =>
          packedJson(
            sign(devchain, [
              {
                account: 'eosio.token',
                name: 'steal',
                authorization: [{ actor: 'alice', permission: 'active' }],
                data: new Uint8Array(0),
              },
            ]),
          ),
        status: 500,
        name: 'eosio_assert_message_exception',
        message: /unknown action/,
      },
      {
        what: 'undecodable action data',
        body: () =>
          packedJson(
            sign(devchain, [
              {
                account: 'eosio.token',
                name: 'transfer',
                authorization: [{ actor: 'alice', permission: 'active' }],
                data: new Uint8Array([1, 2, 3]),
              },
            ]),
          ),
        status: 500,
        name: 'unpack_exception',
      },
      { what: 'malformed JSON', body: () => '{"signatures": [', status: 400, name: 'parse_error_exception' },
      { what: 'a body that is not an object', body: () => '[1,2]', status: 400, name: 'invalid_http_request' },
      {
        what: 'packed_trx that is not hex',
        body: () => ({ signatures: [], compression: 0, packed_trx: 'zz' }),
        status: 400,
        name: 'packed_transaction_type_exception',
      },
      {
        what: 'truncated packed_trx',
        body: () => ({
          ...packedJson(sign(devchain, [transferAction('alice', 'bob', '1.0000 EOS')])),
          packed_trx: packedJson(sign(devchain, [transferAction('alice', 'bob', '1.0000 EOS')])).packed_trx.slice(
            0,
            30,
          ),
        }),
        status: 400,
        name: 'packed_transaction_type_exception',
      },
      {
        what: 'packed_trx with trailing bytes',
        body: () => ({
          ...packedJson(sign(devchain, [transferAction('alice', 'bob', '1.0000 EOS')])),
          packed_trx: packedJson(sign(devchain, [transferAction('alice', 'bob', '1.0000 EOS')])).packed_trx + '00',
        }),
        status: 400,
        name: 'packed_transaction_type_exception',
      },
      {
        what: 'zlib compression of bytes that are not zlib',
        body: () => ({ ...packedJson(sign(devchain, [transferAction('alice', 'bob', '1.0000 EOS')])), compression: 1 }),
        status: 400,
        name: 'packed_transaction_type_exception',
      },
      {
        what: 'an oversized body',
        body: () => JSON.stringify({ signatures: [], packed_trx: 'ab'.repeat(600_000) }),
        status: 413,
        name: 'invalid_http_request',
      },
      {
        what: 'an unknown endpoint',
        body: () => ({}),
        status: 404,
        name: 'resource_not_found',
        path: '/v1/chain/no_such_call',
      },
    ]
  for (const c of cases) {
    await t.test(c.what, () => expectChainError(devchain, c.body(), c, c.path))
  }

  await t.test('a duplicate transaction', async () => {
    const body = packedJson(sign(devchain, [transferAction('alice', 'bob', '0.0001 EOS')], { nonce: 7 }))
    const first = await postJson(devchain.chainApi + '/v1/chain/push_transaction', body)
    assert.equal(first.status, 200)
    await expectChainError(devchain, body, { status: 409, name: 'tx_duplicate' })
  })

  await t.test('the chain still produces and accepts a good transfer', async () => {
    const headBefore = devchain.chain.head.num
    const good = await postJson(
      devchain.chainApi + '/v1/chain/push_transaction',
      packedJson(sign(devchain, [transferAction('alice', 'bob', '1.0000 EOS')], { nonce: 9 })),
    )
    assert.equal(good.status, 200)
    assert.ok(devchain.chain.head.num > headBefore)
    const balance = await postJson(devchain.chainApi + '/v1/chain/get_currency_balance', {
      code: 'eosio.token',
      account: 'bob',
      symbol: 'EOS',
    })
    assert.deepEqual(balance.body, ['1001.0001 EOS'])
  })
})
