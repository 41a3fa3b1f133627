import assert from 'node:assert/strict'
import { test } from 'node:test'
import { actionDocuments, foldNotifications } from '../../src/hyperion/action-documents.ts'
import { hyperionActionData, withoutBinary } from '../../src/hyperion/action-data.ts'
import type { ActionRecord } from '../../src/store/index.ts'
import { actionRecord, blockRecord, transactionRecord } from '../_helpers/records.ts'

/** A trace of `account::transfer` run by `receiver`, at `seq`, with the given digest and ordinals. */
function trace(
  seq: number,
  receiver: string,
  fields: Partial<ActionRecord> & { actDigest: string; actionOrdinal: number },
): ActionRecord {
  return actionRecord({
    globalSequence: seq,
    receiver,
    account: 'eosio.token',
    name: 'transfer',
    authorization: [{ actor: 'alice', permission: 'active' }],
    recvSequence: BigInt(seq * 10),
    ...fields,
  })
}

const D1 = '1'.repeat(64)
const D2 = '2'.repeat(64)
const D3 = '3'.repeat(64)

/**
 * Two identical transfers alice → bob (each notifying alice and bob: a notification's creator ordinal is its
 * original's ordinal), then an inline action of the first one's bob handler, which notified carol.
 */
const execution: ActionRecord[] = [
  trace(100, 'eosio.token', { actDigest: D1, actionOrdinal: 1 }),
  trace(101, 'alice', { actDigest: D1, actionOrdinal: 3, creatorActionOrdinal: 1 }),
  trace(102, 'bob', { actDigest: D1, actionOrdinal: 4, creatorActionOrdinal: 1 }),
  trace(103, 'eosio.token', { actDigest: D1, actionOrdinal: 2 }),
  trace(104, 'alice', { actDigest: D1, actionOrdinal: 5, creatorActionOrdinal: 2 }),
  trace(105, 'bob', { actDigest: D1, actionOrdinal: 6, creatorActionOrdinal: 2 }),
  trace(106, 'bob', { actDigest: D2, actionOrdinal: 7, creatorActionOrdinal: 4, account: 'bob', name: 'log' }),
  trace(107, 'carol', { actDigest: D2, actionOrdinal: 8, creatorActionOrdinal: 7, account: 'bob', name: 'log' }),
]

test('fold: two identical actions stay two documents, each with its own notifications', { timeout: 10_000 }, () => {
  const groups = foldNotifications(execution)
  assert.deepEqual(
    groups.map((g) => g.map((t) => t.globalSequence)),
    [
      [100, 101, 102],
      [103, 104, 105],
      [106, 107],
    ],
  )
})

test(
  'fold: a notification with no original of its call stands alone; different digests never merge',
  { timeout: 10_000 },
  () => {
    const lone = [
      trace(1, 'alice', { actDigest: D1, actionOrdinal: 2, creatorActionOrdinal: 5 }),
      trace(2, 'eosio.token', { actDigest: D3, actionOrdinal: 1 }),
      trace(3, 'bob', { actDigest: D1, actionOrdinal: 3, creatorActionOrdinal: 1 }),
    ]
    assert.deepEqual(
      foldNotifications(lone).map((g) => g.map((t) => t.globalSequence)),
      [[1], [2], [3]],
    )
    // Same digest, created by another action: another call.
    const other = [
      trace(1, 'eosio.token', { actDigest: D1, actionOrdinal: 1 }),
      trace(2, 'bob', { actDigest: D1, actionOrdinal: 3, creatorActionOrdinal: 2 }),
    ]
    assert.equal(foldNotifications(other).length, 2)
  },
)

test(
  'documents: receipts, the first document carries cpu, net and signatures, uint64 styles',
  { timeout: 10_000 },
  () => {
    const block = blockRecord({ num: 7, producer: 'prod', timestampMs: Date.UTC(2024, 4, 16, 19, 25, 44, 500) })
    const withTrace = execution.map((a) => ({
      ...a,
      trace: {
        elapsedUs: 5,
        console: '',
        contextFree: false,
        except: undefined,
        authSequence: [['alice', String(a.globalSequence + 1000)]] as [string, string][],
        codeSequence: 1,
        abiSequence: 2,
      },
      ramDeltas: a.globalSequence === 100 ? [{ account: 'alice', delta: 12n }] : [],
    }))
    const context = {
      block,
      transaction: transactionRecord({ cpuUsageUs: 321, netUsageWords: 17 }),
      decode: () => ({ from: 'alice', to: 'bob', quantity: '1.0000 EOS', memo: 'm' }),
    }
    const docs = actionDocuments(withTrace, context)
    assert.equal(docs.length, 3)
    const [first, second, third] = docs
    assert.equal(first['@timestamp'], '2024-05-16T19:25:44.500')
    assert.equal(first.timestamp, '2024-05-16T19:25:44.500')
    assert.equal(first.producer, 'prod')
    assert.equal(first.block_id, block.id)
    assert.equal(first.cpu_usage_us, 321)
    assert.equal(first.net_usage_words, 17)
    assert.equal(first.signatures, undefined, 'no signatures stored: omitted')
    assert.deepEqual(first.account_ram_deltas, [{ account: 'alice', delta: 12 }])
    assert.equal(second.cpu_usage_us, undefined)
    assert.equal(second.account_ram_deltas, undefined)
    assert.deepEqual(first.receipts, [
      {
        receiver: 'eosio.token',
        global_sequence: 100,
        recv_sequence: 1000,
        auth_sequence: [{ account: 'alice', sequence: 1100 }],
      },
      {
        receiver: 'alice',
        global_sequence: 101,
        recv_sequence: 1010,
        auth_sequence: [{ account: 'alice', sequence: 1101 }],
      },
      {
        receiver: 'bob',
        global_sequence: 102,
        recv_sequence: 1020,
        auth_sequence: [{ account: 'alice', sequence: 1102 }],
      },
    ])
    assert.equal(second.global_sequence, 103)
    assert.equal(second.action_ordinal, 2)
    assert.equal(third.creator_action_ordinal, 4)
    assert.equal(second.creator_action_ordinal, 0, "the original's, not a notification's")
    assert.deepEqual(first.act.data, {
      amount: 1,
      symbol: 'EOS',
      from: 'alice',
      to: 'bob',
      quantity: '1.0000 EOS',
      memo: 'm',
    })
    assert.equal(first.act.hex_data, '01')

    const full = actionDocuments(withTrace, context, { uint64: 'string', full: true })
    assert.equal(full[0].global_sequence, '100')
    assert.equal(full[0].receipts[1].recv_sequence, '1010')
    assert.equal(full[0].receipts[0].auth_sequence[0].sequence, '1100')
    assert.deepEqual(full[0].account_ram_deltas, [{ account: 'alice', delta: '12' }])
    assert.equal(full[0].notified, 'eosio.token,alice,bob')
    assert.equal(full[0].act_digest, D1)
    assert.equal(full[1].notified, 'eosio.token,alice,bob')
    assert.equal(full[2].notified, 'bob,carol')
  },
)

test('documents: undecodable data is the hex string; noBinary drops hex_data', { timeout: 10_000 }, () => {
  const context = { block: blockRecord({ num: 7 }), transaction: undefined, decode: () => undefined }
  const docs = actionDocuments([actionRecord({ data: new Uint8Array([0xab, 0xcd]) })], context)
  assert.equal(docs[0].act.data, 'abcd')
  assert.equal(docs[0].cpu_usage_us, undefined, 'no transaction record: no cpu')
  const noBinary = actionDocuments([actionRecord({ data: new Uint8Array([0xab]) })], context, { noBinary: true })
  assert.equal(noBinary[0].act.hex_data, undefined)
})

test('act.data: the projections Hyperion merges in', { timeout: 10_000 }, () => {
  const data = (account: string, name: string, decoded: unknown) =>
    hyperionActionData({ account, name, decoded, hex: '00' })
  // Any contract's transfer, `quantity` or `value`; the raw field wins on a conflict.
  assert.deepEqual(data('token.x', 'transfer', { from: 'a', to: 'b', quantity: '12.50 ABC', memo: '' }), {
    amount: 12.5,
    symbol: 'ABC',
    from: 'a',
    to: 'b',
    quantity: '12.50 ABC',
    memo: '',
  })
  assert.deepEqual(data('t', 'transfer', { value: '3 XY' }), { amount: 3, symbol: 'XY', value: '3 XY' })
  assert.deepEqual(data('t', 'transfer', { quantity: '3 XY', amount: 'raw' }), {
    amount: 'raw',
    symbol: 'XY',
    quantity: '3 XY',
  })
  assert.deepEqual(data('t', 'transfer', { quantity: 'not an asset' }), { quantity: 'not an asset' })
  assert.deepEqual(data('eosio', 'newaccount', { creator: 'a', name: 'b', owner: {}, active: {} }), {
    creator: 'a',
    owner: {},
    active: {},
    newact: 'b',
  })
  assert.deepEqual(data('notsys', 'newaccount', { name: 'b' }), { name: 'b' })
  assert.deepEqual(
    data('eosio', 'delegatebw', {
      from: 'a',
      receiver: 'b',
      stake_net_quantity: '1.0000 EOS',
      stake_cpu_quantity: '2.5000 EOS',
      transfer: false,
    }),
    { from: 'a', receiver: 'b', stake_net_quantity: 1, stake_cpu_quantity: 2.5, transfer: false, amount: 3.5 },
  )
  assert.deepEqual(
    data('eosio', 'undelegatebw', {
      from: 'a',
      receiver: 'b',
      unstake_net_quantity: '0.5000 EOS',
      unstake_cpu_quantity: '0.2500 EOS',
    }),
    { from: 'a', receiver: 'b', unstake_net_quantity: 0.5, unstake_cpu_quantity: 0.25, amount: 0.75 },
  )
  assert.deepEqual(data('eosio', 'buyram', { payer: 'a', receiver: 'b', quant: '1.5000 EOS' }), {
    payer: 'a',
    receiver: 'b',
    quant: 1.5,
  })
  assert.deepEqual(
    data('eosio', 'updateauth', {
      account: 'a',
      permission: 'hot',
      parent: 'active',
      auth: { threshold: 1, keys: [{ key: 'K', weight: 1 }], accounts: [], waits: [] },
    }),
    { account: 'a', permission: 'hot', parent: 'active', auth: { threshold: 1, keys: [{ key: 'K', weight: 1 }] } },
  )
  assert.equal(data('x', 'y', undefined), '00', 'undecodable: the hex')
})

test('act.data: noBinary cuts strings longer than 256 characters to 32 and "..."', { timeout: 10_000 }, () => {
  const long = 'x'.repeat(257)
  assert.deepEqual(withoutBinary({ a: long, b: 'y'.repeat(256), c: [long], d: { e: long }, n: 5 }), {
    a: `${'x'.repeat(32)}...`,
    b: 'y'.repeat(256),
    c: [`${'x'.repeat(32)}...`],
    d: { e: `${'x'.repeat(32)}...` },
    n: 5,
  })
  assert.equal(
    (
      hyperionActionData({ account: 'a', name: 'b', decoded: { memo: long }, hex: '00', noBinary: true }) as {
        memo: string
      }
    ).memo,
    `${'x'.repeat(32)}...`,
  )
})
