import { test } from 'node:test'
import assert from 'node:assert/strict'
import { assembleLifecycle, type LifecycleFacts } from '../../src/lifecycle/assemble.ts'
import type { ActionRecord, BlockRecord, RowChange, TransactionRecord } from '../../src/store/index.ts'
import { actionRecord, blockRecord, transactionRecord } from '../_helpers/records.ts'

const ID = 'a'.repeat(64)
const block = (num: number): BlockRecord =>
  blockRecord({ num, timestampMs: Date.UTC(2030, 0, 1) + num * 500, actionCount: 2 })
const record = (
  blockNum: number,
  status: number,
  blockIndex = 0,
  extra: Partial<TransactionRecord> = {},
): TransactionRecord => transactionRecord({ id: ID, blockNum, blockIndex, status, ...extra })
const action = (seq: number, ordinal: number, creator: number, receiver: string): ActionRecord =>
  actionRecord({
    globalSequence: seq,
    blockNum: 10,
    trxId: ID,
    actionOrdinal: ordinal,
    creatorActionOrdinal: creator,
    receiver,
  })
const change = (code: string, old: boolean, value: boolean): RowChange => ({
  code,
  table: 't',
  scope: 's',
  primaryKey: 5n,
  payer: code,
  value: value ? new Uint8Array([2]) : undefined,
  old: old ? { payer: code, value: new Uint8Array([1]) } : undefined,
})

function facts(overrides: Partial<LifecycleFacts>): LifecycleFacts {
  return {
    id: ID,
    history: { records: [], forkedOut: [] },
    lib: 0,
    execution: undefined,
    creation: undefined,
    cancelation: undefined,
    decode: () => undefined,
    ...overrides,
  }
}

test('transaction_status follows the records: an execution wins, then a cancelation, an expiration, a creation; forked_out when only forked-out blocks held it; unknown otherwise', () => {
  const statusOf = (records: TransactionRecord[], forkedOut: { blockNum: number; blockId: string }[] = []) =>
    assembleLifecycle(facts({ history: { records, forkedOut } }))?.transaction_status
  assert.equal(statusOf([]), undefined)
  assert.equal(statusOf([], [{ blockNum: 3, blockId: 'x' }]), 'forked_out')
  assert.equal(statusOf([record(3, 3)]), 'delayed')
  assert.equal(statusOf([record(3, 3), record(5, 4)]), 'expired')
  assert.equal(statusOf([record(3, 3), record(5, 5, -1)]), 'canceled')
  assert.equal(statusOf([record(3, 3), record(5, 0, 1, { scheduled: true })]), 'executed')
  assert.equal(statusOf([record(3, 3), record(5, 1, 1)]), 'soft_fail')
  assert.equal(statusOf([record(3, 3), record(5, 2, 1)]), 'hard_fail')
  assert.equal(statusOf([record(3, 0)], [{ blockNum: 2, blockId: 'y' }]), 'executed', 'executed again after a fork')
})

test('a failed trace: unreceipted actions nest under their creators with their exception; irreversibility follows LIB', () => {
  const trace = {
    elapsedUs: 3,
    console: 'c',
    contextFree: false,
    except: 'assertion failure',
    authSequence: [],
    codeSequence: 0,
    abiSequence: 0,
  }
  const failed = record(10, 2, 0, {
    details: {
      elapsedUs: 9,
      netUsage: 0,
      except: 'hard fail',
      header: undefined,
      unreceipted: [
        {
          actionOrdinal: 1,
          creatorActionOrdinal: 0,
          receiver: 'rawdb',
          account: 'rawdb',
          name: 'put',
          authorization: [],
          data: '01',
          trace,
        },
        {
          actionOrdinal: 2,
          creatorActionOrdinal: 1,
          receiver: 'alice',
          account: 'rawdb',
          name: 'put',
          authorization: [],
          data: '01',
          trace,
        },
      ],
      failedDtrx: undefined,
      deferred: undefined,
    },
  })
  const l = assembleLifecycle(
    facts({
      history: { records: [failed], forkedOut: [] },
      lib: 10,
      execution: { record: failed, block: block(10), actions: [], rowChanges: [], otherReceivers: new Set() },
    }),
  )!
  assert.equal(l.transaction_status, 'hard_fail')
  const root = l.execution_trace!.action_traces[0]
  assert.deepEqual(
    [root.receipt, root.except, root.inline_traces.map((x) => [x.receiver, x.except])],
    [null, 'assertion failure', [['alice', 'assertion failure']]],
  )
  assert.deepEqual(l.creation_tree, [
    [0, -1, 0],
    [1, 0, 1],
  ])
  assert.equal(l.execution_trace!.except, 'hard fail')
  assert.equal(l.execution_irreversible, true)
  assert.equal(l.transaction, null, 'no header stored: no signed transaction to show')
})

test('dbops: a row change is attributed only when no other transaction of the block ran its contract; INS/UPD/REM by what the block did to the row', () => {
  const executed = record(10, 0)
  const actions = [action(1, 1, 0, 'rawdb'), action(2, 2, 1, 'alice'), action(3, 3, 1, 'rawdb')]
  const changes = [
    change('rawdb', false, true),
    change('rawdb', true, true),
    change('rawdb', true, false),
    change('alice', true, true),
    change('token', true, true),
  ]
  const dbops = (otherReceivers: string[]) =>
    assembleLifecycle(
      facts({
        history: { records: [executed], forkedOut: [] },
        execution: {
          record: executed,
          block: block(10),
          actions,
          rowChanges: changes,
          otherReceivers: new Set(otherReceivers),
        },
      }),
    )!.dbops
  assert.deepEqual(
    dbops([]).map((d) => [d.op, d.account, d.action_idx, JSON.stringify(d.old), JSON.stringify(d.new)]),
    [
      ['INS', 'rawdb', 2, '{}', '{"payer":"rawdb","hex":"02"}'],
      ['UPD', 'rawdb', 2, '{"payer":"rawdb","hex":"01"}', '{"payer":"rawdb","hex":"02"}'],
      ['REM', 'rawdb', 2, '{"payer":"rawdb","hex":"01"}', '{}'],
      ['UPD', 'alice', 1, '{"payer":"alice","hex":"01"}', '{"payer":"alice","hex":"02"}'],
    ],
  )
  assert.deepEqual(
    dbops(['rawdb']).map((d) => d.account),
    ['alice'],
    'another transaction of the block ran rawdb: its changes are not attributed',
  )
})

test("execution_trace.net_usage is the stored trace's; a record stored before schema version 5 shows net_usage_words × 8", () => {
  const netUsageOf = (executed: TransactionRecord) =>
    assembleLifecycle(
      facts({
        history: { records: [executed], forkedOut: [] },
        execution: { record: executed, block: block(10), actions: [], rowChanges: [], otherReceivers: new Set() },
      }),
    )!.execution_trace!.net_usage
  assert.equal(netUsageOf(record(10, 0)), 80)
  const details = {
    elapsedUs: 9,
    netUsage: 96,
    except: undefined,
    header: undefined,
    unreceipted: [],
    failedDtrx: undefined,
    deferred: undefined,
  }
  assert.equal(netUsageOf(record(10, 0, 0, { details })), 96)
})
