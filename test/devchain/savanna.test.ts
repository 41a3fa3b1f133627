import { test } from 'node:test'
import assert from 'node:assert/strict'
import { toHex } from '../../src/antelope/index.ts'
import { Chain, bootChain, pushSigned, startDevchain } from '../../src/devchain/index.ts'
import { normalizeBlock } from '../../src/ingest/index.ts'
import {
  SAVANNA_SCHEDULE_VERSION,
  createShipReader,
  decodeFinalityData,
  decodeFinalityExtension,
  decodeShipType,
  decodeTableDeltas,
  decodeTransactionTraces,
  type BlocksResult,
} from '../../src/ship/index.ts'
import { postJson, tempDir, withDevchain } from '../_helpers/devchain.ts'
import { finalityDataAsJson, finalityExtensionAsJson, normalizeUint64 } from '../_helpers/savanna.ts'
import { onCleanup } from '../_helpers/cleanup.ts'

type Json = Record<string, unknown>
type V<T> = [string, T]
type ShipBlockJson = Json & { header_extensions: { type: number; data: string }[]; transactions: unknown[] }

/** A SHiP result for a stored block, as the devchain serves it to a v1 reader that fetches finality data. */
function resultOf(chain: Chain, num: number): BlocksResult {
  const b = chain.block(num)!
  const ref = { blockNum: b.num, blockId: b.id }
  return {
    v1: true,
    head: ref,
    lastIrreversible: chain.lib,
    thisBlock: ref,
    prevBlock: undefined,
    block: b.block,
    traces: b.traces,
    deltas: b.deltas,
    finalityData: b.finalityData,
  }
}

const transfer = (memo: string) => ({
  account: 'eosio.token',
  name: 'transfer',
  authorization: [{ actor: 'alice', permission: 'active' }],
  data: { from: 'alice', to: 'bob', quantity: '0.0001 EOS', memo },
})
const rawdbAuth = [{ actor: 'rawdb', permission: 'active' }]

test('Savanna blocks: header, finality extension, finality data, traces and deltas read by the generic ABI decoder (Spring ABI) equal the fast decoders, field by field', () => {
  let now = Date.parse('2030-01-01T00:00:00Z')
  const chain = new Chain({ dataDir: undefined, producers: 3, libDepth: 12, savanna: true, now: () => now })
  bootChain(chain)
  pushSigned(chain, [transfer('a')])
  pushSigned(chain, [
    { account: 'rawdb', name: 'notify', authorization: rawdbAuth, data: { recipients: ['alice', 'carol'] } },
    {
      account: 'rawdb',
      name: 'put',
      authorization: rawdbAuth,
      data: { scope: 'z', table: 't', key: '9', payer: 'rawdb', value: 'beef' },
    },
  ])
  chain.produceBlock()
  chain.setFinalityStalled(true)
  for (let i = 0; i < 5; i++) {
    now += 500
    pushSigned(chain, [transfer(`stalled ${i}`)])
    chain.produceBlock()
  }
  chain.setFinalityStalled(false)
  for (let i = 0; i < 3; i++) chain.produceBlock()

  let compared = 0
  for (let n = 1; n <= chain.head.num; n++) {
    const stored = chain.block(n)!
    const abiBlock = decodeShipType<ShipBlockJson>('signed_block', stored.block)
    const ours = normalizeBlock(resultOf(chain, n))
    const header = ours.block.header!
    if (n === 1) {
      // Genesis stays a legacy block: no extension, no finality data (Spring sends null before the switch).
      assert.equal(abiBlock.schedule_version, 0)
      assert.deepEqual(abiBlock.header_extensions, [])
      assert.equal(stored.finalityData, undefined)
      assert.equal(header.finalityMroot, undefined)
      continue
    }
    assert.equal(abiBlock.schedule_version, SAVANNA_SCHEDULE_VERSION)
    assert.equal(header.scheduleVersion, abiBlock.schedule_version)
    assert.deepEqual(
      [header.confirmed, header.transactionMroot, ours.block.previous, ours.block.producer],
      [abiBlock.confirmed, abiBlock.transaction_mroot, abiBlock.previous, abiBlock.producer],
    )
    assert.deepEqual(header.headerExtensions, abiBlock.header_extensions)
    // The header's action_mroot is the finality root: kept apart, never shown as the action root.
    assert.equal(header.finalityMroot, abiBlock.action_mroot)
    const abiFinality = decodeShipType<Json>('finality_data', stored.finalityData!)
    assert.deepEqual(
      normalizeUint64(finalityDataAsJson(decodeFinalityData(stored.finalityData!))),
      normalizeUint64(abiFinality),
    )
    assert.equal(header.actionMroot, abiFinality.action_mroot)
    assert.notEqual(header.actionMroot, header.finalityMroot)
    const [ext] = abiBlock.header_extensions
    assert.equal(ext.type, 2)
    const abiExt = decodeShipType<Json>('finality_extension', Buffer.from(ext.data, 'hex'))
    assert.deepEqual(
      normalizeUint64(finalityExtensionAsJson(decodeFinalityExtension(Buffer.from(ext.data, 'hex')))),
      normalizeUint64(abiExt),
    )
    // Traces and deltas: the same fields through both decoders.
    const abiTraces = decodeShipType<V<Json & { action_traces: V<Json & { receipt: V<Json> | null; act: Json }>[] }>[]>(
      'transaction_trace[]',
      stored.traces,
    )
    const fastTraces = decodeTransactionTraces(stored.traces)
    assert.deepEqual(
      fastTraces.map((t) => [
        t.id,
        t.status,
        t.actionTraces.map((a) => [
          a.actionOrdinal,
          a.receiver,
          a.act.account,
          a.act.name,
          toHex(a.act.data),
          a.receipt && String(a.receipt.globalSequence),
          a.receipt?.actDigest,
        ]),
      ]),
      abiTraces.map(([, t]) => [
        t.id,
        t.status,
        t.action_traces.map(([, a]) => [
          a.action_ordinal,
          a.receiver,
          a.act.account,
          a.act.name,
          a.act.data,
          a.receipt && String(a.receipt[1].global_sequence),
          a.receipt?.[1].act_digest,
        ]),
      ]),
    )
    const abiDeltas = decodeShipType<V<{ name: string; rows: { present: boolean; data: string }[] }>[]>(
      'table_delta[]',
      stored.deltas,
    )
    assert.deepEqual(
      decodeTableDeltas(stored.deltas).map((d) => ({
        name: d.name,
        rows: d.rows.map((r) => ({ present: r.present, data: toHex(r.data) })),
      })),
      abiDeltas.map(([, d]) => d),
    )
    compared++
  }
  assert.ok(compared >= 10)

  // The first Savanna block (Spring's Savanna Genesis block) claims itself and brings both policies.
  const genesisExt = decodeFinalityExtension(
    Buffer.from(decodeShipType<ShipBlockJson>('signed_block', chain.block(2)!.block).header_extensions[0].data, 'hex'),
  )
  assert.deepEqual(genesisExt.qcClaim, { blockNum: 2, isStrongQc: false })
  assert.equal(genesisExt.newFinalizerPolicyDiff?.insertIndexes.length, 3)
  assert.equal(genesisExt.newProposerPolicyDiff?.insertIndexes.length, 3)
  assert.ok(decodeFinalityData(chain.block(2)!.finalityData!).pendingFinalizerPolicy)
  // Stalled blocks repeat the last claim; the release claims the parent again.
  const claims = [3, 4, 5, 6, 7, 8, 9, 10].map(
    (n) =>
      decodeFinalityExtension(
        Buffer.from(
          decodeShipType<ShipBlockJson>('signed_block', chain.block(n)!.block).header_extensions[0].data,
          'hex',
        ),
      ).qcClaim.blockNum,
  )
  assert.deepEqual(claims, [2, 2, 2, 2, 2, 2, 8, 9])
  assert.equal(chain.lib.blockNum, chain.head.num - 2)
  chain.close()
})

test('devchain --savanna over HTTP and SHiP: LIB at head − 2, Spring get_info, get_finalizer_info, get_block, get_block_header_state; finality stall then a LIB jump; v1 readers get finality data', async (t) => {
  const devchain = await withDevchain(t, { savanna: true })
  const chain = devchain.chain
  for (let i = 0; i < 4; i++) {
    pushSigned(chain, [transfer(`http ${i}`)])
    chain.produceBlock()
  }
  const info = (await postJson(`${devchain.chainApi}/v1/chain/get_info`, {})).body
  assert.equal(info.head_block_num, chain.head.num)
  assert.equal(info.last_irreversible_block_num, chain.head.num - 2)
  assert.match(String(info.server_version_string), /^v1\.2\.2/)
  assert.equal(Object.keys(info).length, 20)

  const finalizers = (await postJson(`${devchain.chainApi}/v1/chain/get_finalizer_info`, {})).body as Json & {
    active_finalizer_policy: {
      generation: number
      threshold: number
      finalizers: { description: string; weight: number; public_key: string }[]
    }
    last_tracked_votes: Json[]
  }
  assert.equal(finalizers.active_finalizer_policy.generation, 1)
  assert.equal(finalizers.active_finalizer_policy.finalizers.length, 3)
  assert.match(finalizers.active_finalizer_policy.finalizers[0].public_key, /^PUB_BLS_/)
  assert.equal(finalizers.pending_finalizer_policy, null)
  assert.deepEqual(Object.keys(finalizers.last_tracked_votes[0]).sort(), [
    'description',
    'finalizer_policy_generation',
    'is_vote_strong',
    'public_key',
    'voted_for_block_id',
    'voted_for_block_num',
    'voted_for_block_timestamp',
  ])
  assert.equal(finalizers.last_tracked_votes[0].voted_for_block_num, chain.head.num - 1)

  const genesis = (await postJson(`${devchain.chainApi}/v1/chain/get_block`, { block_num_or_id: 2 })).body as Json & {
    qc_claim: Json
    new_finalizer_policy_diff: Json & { insert_indexes: Json[] }
    new_proposer_policy_diff: Json
  }
  assert.deepEqual(genesis.qc_claim, { block_num: 2, is_strong_qc: false })
  assert.equal(genesis.schedule_version, SAVANNA_SCHEDULE_VERSION)
  assert.equal(genesis.finality_mroot, genesis.action_mroot)
  assert.equal(genesis.new_finalizer_policy_diff.generation, 1)
  assert.equal(genesis.new_finalizer_policy_diff.insert_indexes.length, 3)
  assert.equal(genesis.new_proposer_policy_diff.version, 1)
  const later = (await postJson(`${devchain.chainApi}/v1/chain/get_block`, { block_num_or_id: chain.head.num })).body
  assert.deepEqual(later.qc_claim, { block_num: chain.head.num - 1, is_strong_qc: true })
  assert.ok(!('new_finalizer_policy_diff' in later) && !('new_proposer_policy_diff' in later))
  assert.match(String(later.finality_mroot), /^[0-9a-f]{64}$/)
  const legacyGenesis = (await postJson(`${devchain.chainApi}/v1/chain/get_block`, { block_num_or_id: 1 })).body
  assert.ok(!('qc_claim' in legacyGenesis) && !('finality_mroot' in legacyGenesis))
  // Spring's get_block_header_state answers for irreversible blocks too, with only a few fields filled.
  const bhs = (await postJson(`${devchain.chainApi}/v1/chain/get_block_header_state`, { block_num_or_id: 2 }))
    .body as Json & { header: Json & { header_extensions: unknown[][] } }
  assert.equal(bhs.block_num, 2)
  assert.equal(bhs.dpos_irreversible_blocknum, 0)
  assert.equal(bhs.header.header_extensions[0][0], 2)

  // SHiP: a v1 reader asking for finality data gets it for every Savanna block, none for block 1.
  const reader = createShipReader({ url: devchain.ship, startBlockNum: 1, fetchFinalityData: true })
  onCleanup(t, () => reader.close())
  const status = await reader.ready
  assert.equal(status.v1, true)
  assert.deepEqual([status.finalityDataBeginBlock, status.finalityDataEndBlock], [2, chain.head.num + 1])
  const received: BlocksResult[] = []
  const iterator = reader.blocks()
  const next = async () => {
    const { value } = await iterator.next()
    received.push(value as BlocksResult)
    return value as BlocksResult
  }
  while ((await next()).thisBlock!.blockNum < chain.head.num);
  assert.ok(received.every((r) => r.v1))
  assert.equal(received[0].finalityData, undefined)
  for (const r of received.slice(1)) {
    assert.equal(toHex(r.finalityData!), toHex(chain.block(r.thisBlock!.blockNum)!.finalityData!))
    const header = normalizeBlock(r).block.header!
    assert.equal(header.actionMroot, decodeFinalityData(r.finalityData!).actionMroot)
    assert.notEqual(header.actionMroot, header.finalityMroot)
  }
  // A v0 reader (a Leap-era client) gets v0 results: no finality data, and normalize leaves the action root empty.
  const v0 = createShipReader({ url: devchain.ship, startBlockNum: 3, endBlockNum: 4 })
  onCleanup(t, () => v0.close())
  for await (const r of v0.blocks()) {
    assert.equal(r.v1, false)
    assert.equal(r.finalityData, undefined)
    const header = normalizeBlock(r).block.header!
    assert.equal(header.actionMroot, '')
    assert.match(header.finalityMroot!, /^[0-9a-f]{64}$/)
  }

  // Stall: LIB stays while head advances 30 blocks; then one block after the release LIB jumps to head − 2.
  const stalled = await postJson(`${devchain.chainApi}/v1/devchain/finality`, { stall: true })
  assert.equal(stalled.status, 200)
  const frozenLib = chain.lib.blockNum
  assert.equal((await postJson(`${devchain.chainApi}/v1/devchain/produce`, { blocks: 30 })).status, 200)
  assert.equal(chain.lib.blockNum, frozenLib)
  assert.equal(chain.head.num - frozenLib, 32)
  while ((await next()).thisBlock!.blockNum < chain.head.num);
  assert.ok(received.slice(-30).every((r) => r.lastIrreversible.blockNum === frozenLib))
  const fork = await postJson(`${devchain.chainApi}/v1/devchain/fork`, { depth: 25 })
  assert.equal(fork.status, 200, JSON.stringify(fork.body))
  while ((await next()).thisBlock!.blockId !== chain.head.id);
  assert.equal((await postJson(`${devchain.chainApi}/v1/devchain/finality`, { stall: false })).status, 200)
  await postJson(`${devchain.chainApi}/v1/devchain/produce`, { blocks: 1 })
  assert.equal(chain.lib.blockNum, chain.head.num - 2)
  while ((await next()).thisBlock!.blockNum < chain.head.num);
  const last = received.at(-1)!
  assert.equal(last.lastIrreversible.blockNum, chain.head.num - 2)
  assert.equal(received.at(-2)!.lastIrreversible.blockNum, frozenLib, 'LIB jumps in one result')
  assert.equal((await postJson(`${devchain.chainApi}/v1/devchain/finality`, { stall: 'yes' })).status, 400)
})

test('a legacy devchain: no finalizer endpoint, no finality stall, no finality data; reopened with --savanna it switches at its next block and replays', async (t) => {
  const dataDir = tempDir(t)
  const config = {
    dataDir,
    host: '127.0.0.1',
    chainPort: 0,
    shipPort: 0,
    blockTimeMs: 0,
    libDepth: 12,
    producers: 3,
    forkRate: 0,
    workload: 'none' as const,
  }
  let devchain = await startDevchain(config)
  for (let i = 0; i < 3; i++) devchain.chain.produceBlock()
  assert.equal((await postJson(`${devchain.chainApi}/v1/chain/get_finalizer_info`, {})).status, 404)
  assert.equal((await postJson(`${devchain.chainApi}/v1/devchain/finality`, { stall: true })).status, 400)
  assert.match(
    String((await postJson(`${devchain.chainApi}/v1/chain/get_info`, {})).body.server_version_string),
    /^v5\.0\.3/,
  )
  const legacyHead = devchain.chain.head.num
  await devchain.close()

  devchain = await startDevchain({ ...config, savanna: true })
  const switchAt = legacyHead + 1
  devchain.chain.setFinalityStalled(true)
  for (let i = 0; i < 4; i++) devchain.chain.produceBlock()
  devchain.chain.setFinalityStalled(false)
  devchain.chain.produceBlock()
  assert.equal(devchain.chain.block(legacyHead)!.finalityData, undefined)
  assert.ok(devchain.chain.block(switchAt)!.finalityData)
  assert.equal(decodeShipType<Json>('signed_block', devchain.chain.block(legacyHead)!.block).schedule_version, 0)
  assert.equal(
    decodeShipType<Json>('signed_block', devchain.chain.block(switchAt)!.block).schedule_version,
    SAVANNA_SCHEDULE_VERSION,
  )
  const head = devchain.chain.head
  await devchain.close()
  // Restarted without the flag: still Savanna (the chain remembers), every block replays to the same id, stalled ones
  // included.
  devchain = await startDevchain(config)
  onCleanup(t, () => devchain.close())
  assert.equal(devchain.chain.head.id, head.id)
  assert.ok(devchain.chain.savanna)
  assert.equal(devchain.chain.lib.blockNum, head.num - 2)
})
