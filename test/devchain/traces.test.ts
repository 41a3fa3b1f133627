import { test } from 'node:test'
import assert from 'node:assert/strict'
import { actionDigest, fromHex } from '../../src/antelope/index.ts'
import { Serializer } from '@wharfkit/antelope'
import { chainAbiOf, pushSigned, rawdb, type Devchain } from '../../src/devchain/index.ts'
import { transactionTraceJson } from '../../src/devchain/chain-json.ts'
import { loadAntelopeFixture } from '../_helpers/fixtures.ts'
import { withDevchain } from '../_helpers/devchain.ts'

type Json = Record<string, unknown>
interface TraceJson extends Json {
  action_ordinal: number
  creator_action_ordinal: number
  closest_unnotified_ancestor_action_ordinal: number
  receiver: string
  receipt: {
    receiver: string
    act_digest: string
    global_sequence: number
    recv_sequence: number
    auth_sequence: [string, number][]
    code_sequence: number
    abi_sequence: number
  }
  act: { account: string; name: string; authorization: { actor: string; permission: string }[]; hex_data: string }
  return_value_hex_data: string
}

/** The `processed` trace the devchain answers a push of a transfer with (its nodeos JSON form). */
function transferProcessed(devchain: Devchain): { processed: Json & { action_traces: TraceJson[] } } {
  const applied = pushSigned(devchain.chain, [
    {
      account: 'eosio.token',
      name: 'transfer',
      authorization: [{ actor: 'alice', permission: 'active' }],
      data: { from: 'alice', to: 'bob', quantity: '0.0042 EOS', memo: 'structure' },
    },
  ])
  return {
    processed: transactionTraceJson(applied.trace, {
      blockNum: applied.blockNum,
      blockSlot: applied.blockSlot,
      producerBlockId: null,
      abiOf: (a) => chainAbiOf(devchain.chain, a),
    }) as never,
  }
}

test('a devchain token transfer has the receipt structure and act_digest recipe of the Jungle4 transfers', async (t) => {
  const devchain = await withDevchain(t)
  const ours = transferProcessed(devchain).processed
  const theirs = loadAntelopeFixture<{ processed: Json & { action_traces: TraceJson[] } }>(
    'jungle4-push-transfer-1.json',
  ).response.processed

  assert.deepEqual(Object.keys(ours).sort(), Object.keys(theirs).sort(), 'transaction trace fields')
  assert.deepEqual(
    Object.keys(ours.action_traces[0]).sort(),
    Object.keys(theirs.action_traces[0]).sort(),
    'action trace fields',
  )
  assert.deepEqual(
    Object.keys(ours.action_traces[0].receipt).sort(),
    Object.keys(theirs.action_traces[0].receipt).sort(),
    'receipt fields',
  )

  const shape = (traces: TraceJson[]) =>
    traces.map((a) => [
      a.action_ordinal,
      a.creator_action_ordinal,
      a.closest_unnotified_ancestor_action_ordinal,
      a.receiver === a.act.account ? 'contract' : a.receiver === traces[0].act.authorization[0].actor ? 'from' : 'to',
    ])
  assert.deepEqual(shape(ours.action_traces), shape(theirs.action_traces))

  for (const traces of [ours.action_traces, theirs.action_traces]) {
    const digests = new Set(traces.map((a) => a.receipt.act_digest))
    assert.equal(digests.size, 1, 'the notified receivers carry the same act_digest')
    const [a] = traces
    assert.equal(
      actionDigest({ ...a.act, data: fromHex(a.act.hex_data) }, fromHex(a.return_value_hex_data)),
      a.receipt.act_digest,
      'the ACTION_RETURN_VALUE recipe',
    )
    const globals = traces.map((x) => Number(x.receipt.global_sequence))
    assert.deepEqual(globals, [globals[0], globals[0] + 1, globals[0] + 2], 'global sequences are consecutive')
    const auths = traces.map((x) => Number(x.receipt.auth_sequence[0][1]))
    assert.deepEqual(auths, [auths[0], auths[0] + 1, auths[0] + 2], 'the sender auth sequence grows per receipt')
    assert.ok(
      traces.every(
        (x) => x.receipt.auth_sequence.length === 1 && x.receipt.auth_sequence[0][0] === a.act.authorization[0].actor,
      ),
    )
    assert.ok(
      traces.every(
        (x) =>
          x.receipt.code_sequence === traces[0].receipt.code_sequence &&
          x.receipt.abi_sequence === traces[0].receipt.abi_sequence,
      ),
    )
  }
})

test('rawdb notifications and inline actions run depth first with nodeos ordinals', async (t) => {
  const devchain = await withDevchain(t)
  const notify = (recipients: string[]) => ({
    account: 'rawdb',
    name: 'notify',
    authorization: [{ actor: 'rawdb', permission: 'active' }],
    data: { recipients },
  })
  const innerData = Serializer.encode({ abi: rawdb.abi, type: 'notify', object: { recipients: ['carol'] } }).hexString
  // action 1: rawdb::send → inline rawdb::notify(carol); it also notifies alice first via a second action.
  const applied = pushSigned(devchain.chain, [
    {
      account: 'rawdb',
      name: 'send',
      authorization: [{ actor: 'rawdb', permission: 'active' }],
      data: {
        account: 'rawdb',
        name: 'notify',
        authorization: [{ actor: 'rawdb', permission: 'active' }],
        data: innerData,
      },
    },
    notify(['alice', 'bob']),
  ])
  const traces = applied.trace.actionTraces.map((a) => ({
    ordinal: a.actionOrdinal,
    creator: a.creatorActionOrdinal,
    receiver: a.receiver,
    name: a.act.name,
    global: Number(a.receipt!.globalSequence),
  }))
  // Ordinals are given when scheduled: send(1), notify(2), the inline notify(3) scheduled by send,
  // then alice(4), bob(5) notified by action 2, carol(6) notified by the inline.
  assert.deepEqual(
    traces.map(({ ordinal, creator, receiver, name }) => [ordinal, creator, receiver, name]),
    [
      [1, 0, 'rawdb', 'send'],
      [2, 0, 'rawdb', 'notify'],
      [3, 1, 'rawdb', 'notify'],
      [4, 3, 'carol', 'notify'],
      [5, 2, 'alice', 'notify'],
      [6, 2, 'bob', 'notify'],
    ],
  )
  // Execution (receipt) order is depth first: send, its inline notify, carol, then action 2 and its notifications.
  const byExecution = [...traces].sort((a, b) => a.global - b.global).map((x) => x.ordinal)
  assert.deepEqual(byExecution, [1, 3, 4, 2, 5, 6])
})
