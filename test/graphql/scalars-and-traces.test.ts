import { test } from 'node:test'
import assert from 'node:assert/strict'
import { graphql } from 'graphql'
import { Int64, Time, Uint32, Uint64 } from '../../src/graphql/scalars.ts'
import { TransactionTraceNode } from '../../src/graphql/trace-model.ts'
import { createGraphqlSchema } from '../../src/graphql/schema.ts'
import { actionRecord, blockRecord, transactionRecord } from '../_helpers/records.ts'

test('Int64 and Uint64 are written as strings and read from strings or numbers within range; Uint32 as a number', () => {
  assert.equal(Int64.serialize(-5), '-5')
  assert.equal(Uint64.serialize(12), '12')
  assert.equal(Int64.parseValue('-9007199254740991'), -9007199254740991)
  assert.equal(Uint64.parseValue(7), 7)
  assert.throws(() => Uint64.parseValue(-1))
  assert.throws(() => Int64.parseValue('9223372036854775808'))
  assert.throws(() => Int64.parseValue('1e3'))
  assert.throws(() => Int64.parseValue(1.5))
  assert.equal(Uint32.serialize(4), 4)
  assert.equal(Uint32.parseValue('4294967295'), 4294967295)
  assert.throws(() => Uint32.parseValue(4294967296))
})

test('Time is RFC3339 out, RFC3339 or Unix seconds in; anything else is refused', () => {
  assert.equal(Time.serialize(Date.UTC(2019, 0, 1)), '2019-01-01T00:00:00Z')
  assert.equal(Time.serialize(Date.UTC(2019, 0, 1, 0, 0, 0, 500)), '2019-01-01T00:00:00.5Z')
  assert.equal(Time.parseValue('2019-01-01T00:00:00Z'), Date.UTC(2019, 0, 1))
  assert.equal(Time.parseValue(1546300800), Date.UTC(2019, 0, 1))
  for (const bad of ['yesterday', '2019-02-30T00:00:00Z', true, null]) assert.throws(() => Time.parseValue(bad))
})

test('a trace: matching, top-level and created actions, creators and the closest unnotified ancestor', () => {
  const block = blockRecord({ num: 9 })
  const trxId = 'b'.repeat(64)
  // transfer (1) notifies alice (2) and sends an inline log (3), which notifies bob (4).
  const calls = [
    { actionOrdinal: 1, creatorActionOrdinal: 0, receiver: 'eosio.token', account: 'eosio.token', name: 'transfer' },
    { actionOrdinal: 2, creatorActionOrdinal: 1, receiver: 'alice', account: 'eosio.token', name: 'transfer' },
    { actionOrdinal: 3, creatorActionOrdinal: 1, receiver: 'logger', account: 'logger', name: 'log' },
    { actionOrdinal: 4, creatorActionOrdinal: 3, receiver: 'bob', account: 'logger', name: 'log' },
  ]
  const execution = calls.map((c, i) => actionRecord({ ...c, trxId, blockNum: 9, globalSequence: 100 + i }))
  const trace = new TransactionTraceNode({
    block,
    transaction: transactionRecord({ id: trxId, blockNum: 9 }),
    execution,
    matching: new Set([1, 3]),
    decode: () => undefined,
    rows: async () => ({ changes: [], runners: new Map() }),
  })
  assert.deepEqual(
    trace.matchingActions.map((a) => [a.seq, a.executionIndex, a.isMatchingQuery, a.isNotify]),
    [
      [101, 1, true, true],
      [103, 3, true, true],
    ],
  )
  assert.deepEqual(
    trace.topLevelActions.map((a) => a.seq),
    [100],
  )
  const [transfer, , log, bobNote] = trace.executedActions
  assert.deepEqual(
    transfer.createdActions({}).map((a) => a.seq),
    [101, 102],
  )
  assert.equal(bobNote.creatorAction?.seq, 102)
  assert.equal(bobNote.closestUnnotifiedAncestorAction?.seq, 102)
  assert.equal(log.closestUnnotifiedAncestorAction?.seq, 100)
  assert.equal(transfer.creatorAction, null)
})

test('the executable schema validates dfuse documents and refuses unknown fields and bad literals', async () => {
  const schema = createGraphqlSchema()
  const unknown = await graphql({ schema, source: '{ nope }' })
  assert.match(unknown.errors?.[0].message ?? '', /Cannot query field "nope"/)
  const badLimit = await graphql({
    schema,
    source: '{ searchTransactionsForward(query: "x", limit: "ten") { cursor } }',
  })
  assert.match(badLimit.errors?.[0].message ?? '', /Int64 cannot represent/)
})
