import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ABI, Serializer } from '@wharfkit/antelope'
import { fromHex } from '../../src/antelope/index.ts'
import { createShipReader, decodeShipType } from '../../src/ship/index.ts'
import { Chain, bootChain, buildChain, token } from '../../src/devchain/index.ts'
import { startShipServer } from '../../src/devchain/ship-server.ts'
import { DENSE_MIX } from '../../src/devchain/dense-profile.ts'
import { NFTDEMO_ABIS } from '../../src/devchain/contracts/nftdemo.ts'
import { onCleanup } from '../_helpers/cleanup.ts'

type ActionTrace = {
  action_ordinal: number
  creator_action_ordinal: number
  receiver: string
  act: { account: string; name: string; data: string }
}
type TrxTrace = { id: string; status: number; scheduled: boolean; action_traces: [string, ActionTrace][] }
type Receipt = {
  status: number
  trx: ['transaction_id', string] | ['packed_transaction', { compression: number; packed_trx: string }]
}
type Delta = { name: string; rows: { present: boolean; data: string }[] }
type ContractRow = { code: string; table: string; scope: string; value: string }

/** Blocks read back over the devchain's SHiP: receipts, traces and row changes of each. */
async function readOverShip(t: import('node:test').TestContext, chain: Chain, from: number) {
  const server = await startShipServer({ chain, host: '127.0.0.1', port: 0 })
  onCleanup(t, () => server.close())
  const reader = createShipReader({
    url: `ws://127.0.0.1:${server.port}`,
    startBlockNum: from,
    endBlockNum: chain.head.num + 1,
  })
  onCleanup(t, () => reader.close())
  const blocks: { num: number; receipts: Receipt[]; traces: TrxTrace[]; deltas: Delta[] }[] = []
  for await (const result of reader.blocks()) {
    const block = decodeShipType<{ transactions: Receipt[] }>('signed_block', result.block!)
    blocks.push({
      num: result.thisBlock!.blockNum,
      receipts: block.transactions,
      traces: decodeShipType<[string, TrxTrace][]>('transaction_trace[]', result.traces!).map(([, x]) => x),
      deltas: decodeShipType<[string, Delta][]>('table_delta[]', result.deltas!).map(([, x]) => x),
    })
  }
  return blocks
}

/** Depth of an action trace: 0 for a transaction's action, one more for each inline action above it. */
function inlineDepth(traces: readonly ActionTrace[], trace: ActionTrace): number {
  const byOrdinal = new Map(traces.map((a) => [a.action_ordinal, a]))
  let depth = 0
  for (let a = trace; a.creator_action_ordinal !== 0;) {
    const creator = byOrdinal.get(a.creator_action_ordinal)!
    // A notification is created by the action it notifies of: the same action, not an inline one.
    if (!(creator.act.name === a.act.name && creator.act.data === a.act.data)) depth++
    a = creator
  }
  return depth
}

test('the dense profile builds busy mainnet-like blocks, read back over SHiP', async (t) => {
  const chain = new Chain({ dataDir: undefined, producers: 3, libDepth: 12, signBlocks: false })
  onCleanup(t, () => chain.close())
  bootChain(chain)
  // Empty blocks first, so the 6 dense blocks (17 to 22) include an ABI change (block 20: every 20 blocks).
  while (chain.head.num < 16) chain.produceBlock()
  buildChain(chain, { profile: 'dense', blocks: 6 })
  const blocks = await readOverShip(t, chain, 17)
  assert.equal(blocks.length, 6)

  for (const b of blocks) {
    assert.ok(b.receipts.length >= 290, `block ${b.num}: ${b.receipts.length} transactions`)
    const zlib = b.receipts.filter((r) => r.trx[0] === 'packed_transaction' && r.trx[1].compression === 1)
    assert.ok(zlib.length >= 5, `block ${b.num}: ${zlib.length} zlib-packed transactions`)
    assert.equal(b.receipts.filter((r) => r.status === 3).length, 2, `block ${b.num}: two delayed transactions`)
  }
  const all = blocks.flatMap((b) => b.traces)
  // A transfer: the token contract, then from and to notified.
  const transfer = all.find((x) => x.action_traces[0]?.[1].act.name === 'transfer' && !x.scheduled)!
  const { from, to } = Serializer.objectify(
    Serializer.decode({ abi: token.abi, type: 'transfer', data: transfer.action_traces[0][1].act.data }),
  ) as { from: string; to: string }
  assert.deepEqual(
    transfer.action_traces.map(([, a]) => a.receiver),
    ['eosio.token', from, to],
  )

  // A mint: its owner notified, inline logs three levels deep, each notifying the owner again.
  const mint = all.find((x) => x.action_traces[0]?.[1].act.name === 'mint')!
  const actions = mint.action_traces.map(([, a]) => a)
  assert.equal(actions.length, 2 + 2 * DENSE_MIX.hops)
  assert.equal(Math.max(...actions.map((a) => inlineDepth(actions, a))), 3)

  // Rows of a few hundred bytes written by nftdemo.
  const rows = blocks[1].deltas
    .filter((d) => d.name === 'contract_row')
    .flatMap((d) => d.rows.map((r) => decodeShipType<[string, ContractRow]>('contract_row', fromHex(r.data))[1]))
    .filter((r) => r.code === 'nftdemo' && r.table === 'assets')
  assert.equal(rows.length, DENSE_MIX.mints * DENSE_MIX.rowsPerMint)
  for (const row of rows) assert.ok(row.value.length / 2 >= 200 && row.value.length / 2 <= 430, `${row.value.length}`)

  // Deferred transactions run two blocks later as scheduled ones: one executes, the overdrawing one hard-fails.
  const scheduled = blocks[4].traces.filter((x) => x.scheduled)
  assert.deepEqual(scheduled.map((x) => x.status).sort(), [0, 2])
  assert.deepEqual(
    blocks[4].receipts.filter((r) => r.trx[0] === 'transaction_id').map((r) => r.status),
    scheduled.map((x) => x.status),
  )

  // The ABI change: block 20 sets nftdemo's generation-2 ABI, whose mint carries a template_id.
  // First among the block's input transactions (after onblock and the scheduled ones).
  const inputs = blocks[3].traces.filter((x) => !x.scheduled).slice(1)
  assert.deepEqual([blocks[3].num, inputs[0].action_traces[0][1].act.name], [20, 'setabi'])
  const mintData = (b: (typeof blocks)[number]) =>
    b.traces.find((x) => x.action_traces[0]?.[1].act.name === 'mint')!.action_traces[0][1].act.data
  const decode = (generation: 1 | 2, hex: string) =>
    Serializer.objectify(Serializer.decode({ abi: ABI.from(NFTDEMO_ABIS[generation]), type: 'mint', data: hex }))
  assert.equal(decode(1, mintData(blocks[2])).hops, DENSE_MIX.hops)
  const after = decode(2, mintData(blocks[4]))
  assert.equal(after.hops, DENSE_MIX.hops)
  assert.equal(typeof after.template_id, 'number')
  // Read with the ABI before the change, the new layout does not decode as it was written.
  assert.notEqual(
    (() => {
      try {
        return decode(1, mintData(blocks[4])).hops
      } catch {
        return undefined
      }
    })(),
    DENSE_MIX.hops,
  )
})

test('the default devchain has no nftdemo account: the dense profile creates it in its first block', () => {
  const chain = new Chain({ dataDir: undefined, producers: 3, libDepth: 12, signBlocks: false })
  try {
    bootChain(chain)
    assert.equal(chain.state.has('account', 'nftdemo'), false)
    buildChain(chain, { profile: 'dense', blocks: 1 })
    assert.equal(chain.state.has('account', 'nftdemo'), true)
  } finally {
    chain.close()
  }
})
