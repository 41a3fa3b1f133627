import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  TRANSACTION_CANCELED,
  type ActionRecord,
  type BlockBatch,
  type RowChangeRecord,
  type TransactionRecord,
} from '../../../src/store/index.ts'
import type { StoreFactory } from './store-contract.ts'

const id = (num: number, branch = 'a') => num.toString(16).padStart(8, '0') + branch.repeat(56)
const trxId = (name: string) => Buffer.from(name).toString('hex').padEnd(64, '0')

function action(seq: number, num: number, trx: string, ordinal: number, receiver: string): ActionRecord {
  return {
    globalSequence: seq,
    blockNum: num,
    trxId: trx,
    actionOrdinal: ordinal,
    creatorActionOrdinal: ordinal === 1 ? 0 : 1,
    receiver,
    account: 'rawdb',
    name: 'put',
    authorization: [{ actor: 'rawdb', permission: 'active' }],
    data: new Uint8Array([num, seq & 0xff]),
    returnValue: new Uint8Array(0),
    actDigest: `${seq}`.padEnd(64, 'd'),
    recvSequence: BigInt(seq),
    ramDeltas: [],
    trace: {
      elapsedUs: 1,
      console: '',
      contextFree: false,
      except: undefined,
      authSequence: [['rawdb', String(seq)]],
      codeSequence: 1,
      abiSequence: 1,
    },
  }
}

const trx = (tid: string, num: number, blockIndex: number, status = 0): TransactionRecord => ({
  id: tid,
  blockNum: num,
  blockIndex,
  status,
  cpuUsageUs: 5,
  netUsageWords: 1,
  scheduled: false,
})
const row = (key: number, value: number | undefined): RowChangeRecord => ({
  code: 'rawdb',
  scope: 'bench',
  table: 'rows',
  primaryKey: BigInt(key),
  payer: 'rawdb',
  value: value === undefined ? undefined : new Uint8Array([value]),
})

/**
 * Block `num` (branch `branch`): transactions `t<num>a` (one action) and `t<num>b` (two, the
 * second a notification of bob), row changes, and for some blocks an ABI, a delayed record of a
 * transaction executed later, or a cancelation fact (index -1).
 */
function block(num: number, branch = 'a'): BlockBatch {
  const [a, b] = [trxId(`t${num}a${branch}`), trxId(`t${num}b${branch}`)]
  const first = num * 10
  const transactions = [trx(a, num, 0), trx(b, num, 1)]
  if (num === 2) transactions.push(trx(trxId('later'), num, 2, 3))
  if (num === 4) transactions.push(trx(trxId('later'), num, 2), trx(trxId('gone'), num, -1, TRANSACTION_CANCELED))
  const actions = [
    action(first, num, a, 1, 'rawdb'),
    action(first + 1, num, b, 1, 'rawdb'),
    action(first + 2, num, b, 2, 'bob'),
  ]
  if (num === 4) actions.push(action(first + 3, num, trxId('later'), 1, 'carol'))
  return {
    block: {
      num,
      id: id(num, branch),
      previous: num === 1 ? '0'.repeat(64) : id(num - 1, num === 6 ? 'a' : branch),
      timestampMs: 1_000_000 + num * 500,
      producer: 'producera',
      transactionCount: transactions.length,
      actionCount: actions.length,
    },
    transactions,
    actions,
    rows: num === 3 ? [] : [row(1, num), row(num + 10, 1), ...(num === 5 ? [row(11, undefined)] : [])],
    abis:
      num === 2 || num === 4
        ? [{ account: 'rawdb', abi: new Uint8Array([num, 1, 2, 3]) }]
        : num === 3
          ? [{ account: 'bob', abi: new Uint8Array(0) }]
          : [],
    permissions: [],
    links: [],
  }
}

/**
 * The batch reads (port.ts BatchReader) answer as the single reads do, for every id and block
 * number asked, known or not, in one call whatever their number: histories with forked-out blocks,
 * the actions of a transaction's latest inclusion, blocks, row changes with the versions they
 * closed, each block's receivers by transaction, and the ABI in force at each height.
 */
export function runBatchContract(name: string, factory: StoreFactory, skip: string | false = false): void {
  test(`${name} store: batch reads answer as the single reads do`, { skip }, async (t) => {
    const { open } = await factory(t)
    const store = await open()
    t.after(() => store.close())
    for (let num = 1; num <= 6; num++) await store.applyBlock(block(num), 0)
    // Blocks 6 of branch a is forked out, replaced by 6 and 7 of branch b.
    await store.undoFrom(6)
    await store.applyBlock(block(6, 'b'), 0)
    await store.applyBlock(
      {
        ...block(7, 'b'),
        rows: [],
        actions: [],
        transactions: [],
        block: { ...block(7, 'b').block, transactionCount: 0, actionCount: 0 },
      },
      0,
    )

    const ids = [
      ...[1, 2, 3, 4, 5, 6].flatMap((n) => [trxId(`t${n}aa`), trxId(`t${n}ba`)]),
      trxId('t6ab'),
      trxId('t6bb'),
      trxId('later'),
      trxId('gone'),
      trxId('never'),
      trxId('t1aa'),
    ]
    const histories = await store.transactionHistories(ids)
    const actions = await store.actionsOfTransactions(ids)
    for (const tid of new Set(ids)) {
      assert.deepEqual(histories.get(tid), await store.transactionHistory(tid), `history of ${tid}`)
      assert.deepEqual(actions.get(tid) ?? [], await store.actionsOfTransaction(tid), `actions of ${tid}`)
    }
    assert.equal((histories.get(trxId('t6aa'))?.forkedOut ?? []).length, 1, 'a forked-out transaction has its block')
    assert.equal(actions.get(trxId('later'))?.length, 1)
    assert.deepEqual(await store.transactionHistories([]), new Map())
    assert.deepEqual(await store.actionsOfTransactions([]), new Map())

    // The executions holding actions: every action of a stored transaction maps to its whole execution.
    const firstSeq = (await store.firstSeqFromBlock(1))!
    const lastSeq = (await store.firstSeqFromBlock(7)) ?? firstSeq + 200
    const seqs = [...Array.from({ length: lastSeq - firstSeq + 3 }, (_, i) => firstSeq + i), 999_999, firstSeq]
    const executions = await store.executionsOfActions(seqs)
    const stored = await store.actionsBySeq(seqs.slice(0, -1))
    assert.deepEqual(
      [...executions.keys()].sort((a, b) => a - b),
      stored.map((a) => a.globalSequence),
      'every stored action, no unknown one',
    )
    for (const action of stored) {
      const e = executions.get(action.globalSequence)!
      assert.deepEqual({ trxId: e.trxId, blockNum: e.blockNum }, { trxId: action.trxId, blockNum: action.blockNum })
      assert.deepEqual(
        e.actions,
        (await store.actionsOfTransaction(action.trxId)).filter((a) => a.blockNum === action.blockNum),
        `execution of ${action.globalSequence}`,
      )
      assert.equal(e, executions.get(e.actions[0].globalSequence), 'one object per execution')
    }
    assert.ok(stored.length > 5 && new Set(executions.values()).size < stored.length, 'executions of several actions')
    assert.deepEqual(await store.executionsOfActions([]), new Map())

    const nums = [1, 2, 3, 4, 5, 6, 7, 8, 3]
    const blocks = await store.blocksByNums(nums)
    const changes = await store.rowChangesOfBlocks(nums)
    const receivers = await store.actionReceiversOfBlocks(nums)
    for (const num of new Set(nums)) {
      assert.deepEqual(blocks.get(num), await store.blockByNum(num), `block ${num}`)
      assert.deepEqual(changes.get(num) ?? [], await store.rowChanges(num), `row changes of ${num}`)
      const stored = await store.blockByNum(num)
      const first = stored && stored.actionCount > 0 ? await store.firstSeqFromBlock(num) : undefined
      const all =
        first === undefined
          ? []
          : await store.actionsBySeq(Array.from({ length: stored!.actionCount }, (_, i) => first + i))
      assert.deepEqual(
        receivers.get(num),
        stored ? all.map((a) => ({ trxId: a.trxId, receiver: a.receiver })) : undefined,
        `receivers of ${num}`,
      )
    }
    assert.deepEqual(
      receivers.get(4)?.map((r) => r.receiver),
      ['rawdb', 'rawdb', 'bob', 'carol'],
    )
    assert.deepEqual(receivers.get(7), [], 'a block without actions')
    assert.equal((changes.get(5) ?? []).find((c) => c.primaryKey === 11n)?.value, undefined, 'a removal')
    assert.deepEqual(await store.blocksByNums([]), new Map())

    const requests = [1, 2, 3, 4, 5, 7, 100].flatMap((blockNum) => [
      { account: 'rawdb', blockNum },
      { account: 'bob', blockNum },
      { account: 'nobody', blockNum },
    ])
    const abis = await store.abisAt([...requests, requests[3]])
    for (const [i, r] of requests.entries())
      assert.deepEqual(abis[i], await store.abi(r), `ABI of ${r.account} at ${r.blockNum}`)
    assert.equal(abis[requests.length], abis[3], 'a version asked twice is one object')
    assert.deepEqual(abis[3]?.blockNum, 2)
    assert.deepEqual(await store.abisAt([]), [])
  })
}
