import { test } from 'node:test'
import assert from 'node:assert/strict'
import { V1GetActions, V1_MAX_ACTIONS, type V1GetActionsStore } from '../../src/hyperion/v1-get-actions.ts'
import type { ActionRecord, BlockRecord, SearchExpr } from '../../src/store/index.ts'

const blockId = (num: number) => num.toString(16).padStart(8, '0') + 'b'.repeat(56)

function action(seq: number, receiver: string, actor: string): ActionRecord {
  return {
    globalSequence: seq,
    blockNum: seq,
    trxId: seq.toString(16).padStart(64, '0'),
    actionOrdinal: 1,
    creatorActionOrdinal: 0,
    receiver,
    account: receiver,
    name: 'put',
    authorization: [{ actor, permission: 'active' }],
    data: new Uint8Array([seq & 0xff]),
    returnValue: new Uint8Array(0),
    actDigest: 'd'.repeat(64),
    recvSequence: BigInt(seq),
    ramDeltas: [{ account: actor, delta: -12n }],
  }
}

/** One action per block; `replaced` stands for a fork that gave some sequences to other actions after the count. */
function fakeStore(actions: ActionRecord[], replaced = new Map<number, ActionRecord>()): V1GetActionsStore {
  const terms = (a: ActionRecord) =>
    new Set([`receiver:${a.receiver}`, ...a.authorization.map((l) => `auth:${l.actor}`)])
  const matches = (q: SearchExpr, a: ActionRecord): boolean =>
    'term' in q ? terms(a).has(q.term) : 'or' in q ? q.or.some((x) => matches(x, a)) : false
  const head = actions.length
  return {
    searchActions: async (args) =>
      actions
        .filter((a) => a.globalSequence >= (args.fromSeq ?? 0) && a.globalSequence <= (args.toSeq ?? Infinity))
        .filter((a) => matches(args.query, a))
        .slice(0, args.limit)
        .map((a) => ({ seq: a.globalSequence, flags: 0 })),
    position: async () => ({ head: { blockNum: head, blockId: blockId(head) }, lib: head - 2 }),
    firstSeqFromBlock: async (n) => actions.find((a) => a.blockNum >= n)?.globalSequence,
    actionsBySeq: async (seqs) =>
      seqs.flatMap((s) => replaced.get(s) ?? actions.find((a) => a.globalSequence === s) ?? []),
    blocksByNums: async (nums) =>
      new Map(
        nums.map((num): [number, BlockRecord] => [
          num,
          {
            num,
            id: blockId(num),
            previous: blockId(num - 1),
            timestampMs: 1_700_000_000_000 + num * 500,
            producer: 'eosio',
            transactionCount: 1,
            actionCount: 1,
          },
        ]),
      ),
    abisAt: async (requests) => requests.map(() => undefined),
  }
}

test("get_actions: nodeos's shape with head_block_num; undecodable data is its hex; numbers from 0", async () => {
  const actions = Array.from({ length: 30 }, (_, i) =>
    action(i + 1, i % 2 ? 'alice' : 'bob', i % 3 ? 'carol' : 'alice'),
  )
  const answer = await new V1GetActions(fakeStore(actions)).answer({ account_name: 'alice', pos: 0, offset: 2 })
  assert.equal(answer.head_block_num, 30)
  assert.equal(answer.last_irreversible_block, 28)
  assert.equal(answer.time_limit_exceeded_error, undefined)
  const alice = actions.filter((a) => a.receiver === 'alice' || a.authorization[0].actor === 'alice')
  assert.deepEqual(
    answer.actions.map((a) => [a.account_action_seq, a.global_action_seq]),
    alice.slice(0, 3).map((a, i) => [i, a.globalSequence]),
  )
  const first = answer.actions[0]
  assert.equal(first.block_time, '2023-11-14T22:13:20.500')
  assert.equal(first.action_trace.act.data, first.action_trace.act.hex_data)
  assert.deepEqual(first.action_trace.account_ram_deltas, [{ account: 'alice', delta: -12 }])
  assert.equal(first.action_trace.producer_block_id, blockId(first.block_num))
})

test('get_actions: a window wider than the cap answers its first entries and time_limit_exceeded_error', async () => {
  const actions = Array.from({ length: V1_MAX_ACTIONS + 50 }, (_, i) => action(i + 1, 'alice', 'alice'))
  const answer = await new V1GetActions(fakeStore(actions)).answer({ account_name: 'alice', pos: 10, offset: 5000 })
  assert.equal(answer.actions.length, V1_MAX_ACTIONS)
  assert.equal(answer.actions[0].account_action_seq, 10)
  assert.equal(answer.time_limit_exceeded_error, true)
})

test("get_actions: a sequence a fork gave to another account's action since the count is left out", async () => {
  const actions = Array.from({ length: 10 }, (_, i) => action(i + 1, 'alice', 'alice'))
  const replaced = new Map([[9, action(9, 'mallory', 'mallory')]])
  const answer = await new V1GetActions(fakeStore(actions, replaced)).answer({ account_name: 'alice' })
  assert.deepEqual(
    answer.actions.map((a) => a.global_action_seq),
    [1, 2, 3, 4, 5, 6, 7, 8, 10],
  )
})
