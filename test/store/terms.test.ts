import { test } from 'node:test'
import assert from 'node:assert/strict'
import { symbolCodeToBigInt } from '../../src/antelope/index.ts'
import {
  MAX_ROW_POSTINGS_PER_CONTRACT,
  MAX_TERM_LENGTH,
  actionSearchTerms,
  blockSearchTerms,
  dataSearchTerms,
  type ActionRecord,
  type RowChangeRecord,
} from '../../src/store/index.ts'

const TRX_A = 'a'.repeat(64)
const TRX_B = 'b'.repeat(64)

let nextSeq = 100
function action(
  trxId: string,
  actionOrdinal: number,
  creatorActionOrdinal: number,
  receiver: string,
  account: string,
  name: string,
  extra: Partial<ActionRecord> = {},
): ActionRecord {
  return {
    globalSequence: nextSeq++,
    blockNum: 7,
    trxId,
    actionOrdinal,
    creatorActionOrdinal,
    receiver,
    account,
    name,
    authorization: [{ actor: 'rawdb', permission: 'active' }],
    data: new Uint8Array(0),
    returnValue: new Uint8Array(0),
    actDigest: '0'.repeat(64),
    recvSequence: 1n,
    ramDeltas: [],
    ...extra,
  }
}

const row = (code: string, table: string, scope: string, primaryKey: bigint, payer = scope): RowChangeRecord => ({
  code,
  table,
  scope,
  primaryKey,
  payer,
  value: new Uint8Array([1]),
})
const of = (terms: readonly string[], field: string) => terms.filter((t) => t.startsWith(`${field}:`)).sort()
const noData = () => []

test('parent.*: a notification has the action that notified it, an inline action the one that sent it, an input action none', () => {
  // As the devchain runs it (test/devchain/traces.test.ts): rawdb::send(1) sends an inline
  // rawdb::notify(3) that notifies carol(4); rawdb::notify(2) notifies alice(5). Stored in
  // global-sequence (execution) order.
  const actions = [
    action(TRX_A, 1, 0, 'rawdb', 'rawdb', 'send'),
    action(TRX_A, 3, 1, 'rawdb', 'rawdb', 'notify'),
    action(TRX_A, 4, 3, 'carol', 'rawdb', 'notify'),
    action(TRX_A, 2, 0, 'rawdb', 'rawdb', 'notify'),
    action(TRX_A, 5, 2, 'alice', 'rawdb', 'notify'),
    // Another transaction of the block: its creator ordinal 1 is its own action 1, not TRX_A's.
    action(TRX_B, 1, 0, 'eosio.token', 'eosio.token', 'transfer'),
    action(TRX_B, 2, 1, 'bob', 'eosio.token', 'transfer'),
    // A creator that was not stored (e.g. it did not execute): no parent terms.
    action(TRX_B, 4, 3, 'carol', 'eosio.token', 'transfer'),
  ]
  const terms = blockSearchTerms(actions, [], noData)
  const parents = terms.map((t) => [...of(t, 'parent.receiver'), ...of(t, 'parent.account'), ...of(t, 'parent.action')])
  assert.deepEqual(parents, [
    [],
    ['parent.receiver:rawdb', 'parent.account:rawdb', 'parent.action:send'],
    ['parent.receiver:rawdb', 'parent.account:rawdb', 'parent.action:notify'],
    [],
    ['parent.receiver:rawdb', 'parent.account:rawdb', 'parent.action:notify'],
    [],
    ['parent.receiver:eosio.token', 'parent.account:eosio.token', 'parent.action:transfer'],
    [],
  ])
  // The notification of a notification: the parent's receiver is the notified account.
  const relay = blockSearchTerms(
    [
      action(TRX_A, 1, 0, 'eosio.token', 'eosio.token', 'transfer'),
      action(TRX_A, 2, 1, 'bob', 'eosio.token', 'transfer'),
      action(TRX_A, 3, 2, 'bobsvault', 'bob', 'log'),
    ],
    [],
    noData,
  )
  assert.deepEqual(of(relay[2], 'parent.receiver'), ['parent.receiver:bob'])
  assert.deepEqual(of(relay[2], 'parent.account'), ['parent.account:eosio.token'])
})

test('trx_id is not a posting term: the store answers it from the transactions table', () => {
  const actions = [
    action(TRX_A, 1, 0, 'rawdb', 'rawdb', 'put'),
    action(TRX_B, 1, 0, 'rawdb', 'rawdb', 'put'),
    action(TRX_B, 2, 1, 'alice', 'rawdb', 'put'),
  ]
  assert.deepEqual(
    blockSearchTerms(actions, [], noData).map((t) => of(t, 'trx_id')),
    [[], [], []],
  )
  assert.deepEqual(of(actionSearchTerms(actions[0], []), 'trx_id'), [])
})

test('db.table and db.key: a block row change goes to every action of the block whose receiver is the row contract', () => {
  const actions = [
    action(TRX_A, 1, 0, 'eosio.token', 'eosio.token', 'transfer'),
    action(TRX_A, 2, 1, 'alice', 'eosio.token', 'transfer'),
    action(TRX_B, 1, 0, 'rawdb', 'rawdb', 'put'),
    action(TRX_B, 2, 1, 'eosio.token', 'rawdb', 'put'),
  ]
  const eos = symbolCodeToBigInt('EOS')
  const rows = [
    row('eosio.token', 'accounts', 'alice', eos),
    row('eosio.token', 'accounts', 'bob', eos),
    row('rawdb', 'rows', 'a', 7n, 'rawdb'),
    row('rawdb', 'rows', 'a', 0n, 'rawdb'),
  ]
  const terms = blockSearchTerms(actions, rows, noData)
  const tokenRows = ['db.table:accounts', 'db.table:accounts/alice', 'db.table:accounts/bob']
  // The key as a name, as dfuse rendered it (trailing dots trimmed: key 0 is the empty name).
  const tokenKeys = ['db.key:accounts/alice/........ehbo5', 'db.key:accounts/bob/........ehbo5']
  assert.deepEqual(of(terms[0], 'db.table'), tokenRows)
  assert.deepEqual(of(terms[0], 'db.key'), tokenKeys)
  assert.deepEqual(
    of(terms[1], 'db.table'),
    [],
    'a notification of eosio.token runs alice, not the contract that wrote',
  )
  assert.deepEqual(of(terms[2], 'db.table'), ['db.table:rows', 'db.table:rows/a'])
  assert.deepEqual(of(terms[2], 'db.key'), ['db.key:rows/a/', 'db.key:rows/a/............b'])
  // A notification received by eosio.token runs eosio.token's code: it may have written its rows.
  assert.deepEqual(of(terms[3], 'db.table'), tokenRows)
  assert.deepEqual(of(terms[3], 'db.key'), tokenKeys)
  assert.deepEqual(
    blockSearchTerms(actions, [], noData).map((t) => of(t, 'db.table').length + of(t, 'db.key').length),
    [0, 0, 0, 0],
    'no rows, no db terms',
  )
})

test(`db.*: in a busy block (over ${MAX_ROW_POSTINGS_PER_CONTRACT} row postings for a contract), scoped terms go only to the actions naming the row's scope or payer`, () => {
  const users = Array.from(
    { length: 60 },
    (_, i) => `user${'abcdefghijklmnopqrstuvwxyz'[Math.floor(i / 26)]}${'abcdefghijklmnopqrstuvwxyz'[i % 26]}`,
  )
  const actions = users.map((to, i) =>
    action(`${i}`.padStart(64, '0'), 1, 0, 'eosio.token', 'eosio.token', 'transfer', {
      authorization: [{ actor: 'eosio', permission: 'active' }],
    }),
  )
  const data = users.map((to) => [`data.from:eosio`, `data.to:${to}`])
  const rows = [
    row('eosio.token', 'accounts', 'eosio', 1n),
    ...users.map((u) => row('eosio.token', 'accounts', u, 1n)),
    row('eosio.token', 'stat', 'sym', 1n, 'payer'),
  ]
  assert.ok(actions.length * rows.length * 2 > MAX_ROW_POSTINGS_PER_CONTRACT, 'the block is busy')
  const terms = blockSearchTerms(actions, rows, (i) => data[i])
  for (let i = 0; i < users.length; i++) {
    assert.deepEqual(of(terms[i], 'db.table'), [
      'db.table:accounts',
      'db.table:accounts/eosio',
      `db.table:accounts/${users[i]}`,
      'db.table:stat',
    ])
    assert.deepEqual(of(terms[i], 'db.key'), [
      `db.key:accounts/eosio/............1`,
      `db.key:accounts/${users[i]}/............1`,
    ])
  }
  // The same block with few actions is quiet: every row to every action.
  const quiet = blockSearchTerms(actions.slice(0, 2), rows, (i) => data[i])
  assert.equal(of(quiet[0], 'db.table').length, 2 + rows.length)
  // A payer named by the action (here through its RAM delta) is enough.
  const payerTerms = blockSearchTerms(
    [{ ...actions[0], ramDeltas: [{ account: 'payer', delta: 10n }] }, ...actions.slice(1)],
    rows,
    (i) => data[i],
  )
  assert.ok(payerTerms[0].includes('db.table:stat/sym') && payerTerms[0].includes('db.key:stat/sym/............1'))
  assert.ok(!payerTerms[1].includes('db.table:stat/sym'))
})

test('terms longer than MAX_TERM_LENGTH are not indexed; the others are', () => {
  const decoded = { ok: true as const, value: { to: 'bob', memo: 'x', from: 'y'.repeat(MAX_TERM_LENGTH) } }
  const data = dataSearchTerms({ account: 'eosio.token', name: 'transfer' }, decoded)
  assert.deepEqual(data, ['data.to:bob'])
  const terms = actionSearchTerms(action(TRX_A, 1, 0, 'eosio.token', 'eosio.token', 'transfer'), data)
  assert.ok(terms.every((t) => t.length <= MAX_TERM_LENGTH))
  assert.deepEqual([...terms].sort(), [
    'account:eosio.token',
    'action:transfer',
    'auth:rawdb',
    'auth:rawdb@active',
    'data.to:bob',
    'receiver:eosio.token',
  ])
})
