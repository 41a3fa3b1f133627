import { test } from 'node:test'
import assert from 'node:assert/strict'
import { AbiCache } from '../../src/antelope/index.ts'
import { buildProcessed } from '../../src/push/processed.ts'
import type { ActionRecord, TransactionRecord } from '../../src/store/index.ts'
import { actionRecord, blockRecord, transactionRecord } from '../_helpers/records.ts'

const ID = 'b'.repeat(64)
const block = blockRecord({ num: 7 })
const record = (details?: TransactionRecord['details']): TransactionRecord =>
  transactionRecord({ id: ID, blockIndex: 1, netUsageWords: 12, ...(details ? { details } : {}) })
const action = (trace?: ActionRecord['trace']): ActionRecord =>
  actionRecord({ globalSequence: 90, trxId: ID, recvSequence: 5n, ...(trace ? { trace } : {}) })

async function processedOf(a: ActionRecord, r: TransactionRecord) {
  const processed = await buildProcessed({
    store: { actionsOfTransaction: async () => [a], abi: async () => undefined },
    abis: new AbiCache(4),
    record: r,
    block,
    contextFreeActionCount: 0,
  })
  const [trace] = processed.action_traces as Record<string, unknown>[]
  return { processed, trace, receipt: trace.receipt as Record<string, unknown> }
}

test("processed carries the stored trace's elapsed, console, context_free and receipt sequences (u64s as nodeos writes them), and the transaction's elapsed and net_usage", async () => {
  const details = {
    elapsedUs: 321,
    netUsage: 104,
    except: undefined,
    header: undefined,
    unreceipted: [],
    failedDtrx: undefined,
    deferred: undefined,
  }
  const stored = {
    elapsedUs: 42,
    console: 'hello',
    contextFree: true,
    except: undefined,
    authSequence: [
      ['rawdb', '17'],
      ['alice', '5000000000'],
    ] as const,
    codeSequence: 3,
    abiSequence: 2,
  }
  const { processed, trace, receipt } = await processedOf(action(stored), record(details))
  assert.deepEqual([trace.elapsed, trace.console, trace.context_free], [42, 'hello', true])
  assert.deepEqual(receipt.auth_sequence, [
    ['rawdb', 17],
    ['alice', '5000000000'],
  ])
  assert.deepEqual([receipt.code_sequence, receipt.abi_sequence], [3, 2])
  assert.deepEqual([processed.elapsed, processed.net_usage], [321, 104])
})

test('processed of a transaction stored before schema version 5 (no trace details): 0, empty, and net_usage_words × 8', async () => {
  const { processed, trace, receipt } = await processedOf(action(), record())
  assert.deepEqual([trace.elapsed, trace.console, trace.context_free], [0, '', false])
  assert.deepEqual([receipt.auth_sequence, receipt.code_sequence, receipt.abi_sequence], [[], 0, 0])
  assert.deepEqual([processed.elapsed, processed.net_usage], [0, 96])
})
