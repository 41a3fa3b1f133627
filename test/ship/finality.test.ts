import { test } from 'node:test'
import assert from 'node:assert/strict'
import { fromHex, toHex } from '../../src/antelope/index.ts'
import {
  decodeFinalityData,
  decodeFinalityExtension,
  decodeRequest,
  decodeResult,
  decodeShipType,
  encodeBlocksResult,
  encodeRequest,
  encodeShipType,
  encodeStatusResult,
} from '../../src/ship/index.ts'
import { finalityDataAsJson, finalityExtensionAsJson, normalizeUint64 } from '../_helpers/savanna.ts'

type Json = Record<string, unknown>

// Spring's SHiP v1 variants (docs/DEVCHAIN.md, Savanna mode): every byte the codec writes is compared
// with what the generic ABI encoder writes from Spring's ABI, and every value it reads with the
// generic ABI decoder's reading of the same bytes.

const ID_A = 'a'.repeat(64)
const ID_B = '0000000b' + 'b'.repeat(56)
const BLS = 'ab'.repeat(96)

const finalityDataJson = (pending: boolean) => ({
  major_version: 1,
  minor_version: 0,
  active_finalizer_policy_generation: 3,
  action_mroot: '11'.repeat(32),
  reversible_blocks_mroot: '22'.repeat(32),
  latest_qc_claim_block_num: 4_000_000_000,
  latest_qc_claim_finality_digest: '33'.repeat(32),
  latest_qc_claim_timestamp: '2030-01-01T00:00:00.500',
  base_digest: '44'.repeat(32),
  pending_finalizer_policy: pending
    ? {
        generation: 4,
        threshold: '18446744073709551615',
        finalizers: [
          { description: 'finalizer #1', weight: 1, public_key: 'PUB_BLS_x' },
          { description: '', weight: 7, public_key: 'PUB_BLS_y' },
        ],
      }
    : null,
  last_pending_finalizer_policy_generation: 4,
})

test('get_status_request_v1 and get_blocks_request_v1 (fetch_finality_data true and false) are byte-equal to the ABI encoder and read back', () => {
  assert.equal(
    toHex(encodeRequest({ kind: 'status', v1: true })),
    toHex(encodeShipType('request', ['get_status_request_v1', {}])),
  )
  assert.deepEqual(decodeRequest(encodeShipType('request', ['get_status_request_v1', {}])), {
    kind: 'status',
    v1: true,
  })
  for (const fetchFinalityData of [true, false]) {
    const request = {
      v1: true,
      startBlockNum: 2,
      endBlockNum: 0xffffffff,
      maxMessagesInFlight: 20,
      havePositions: [{ blockNum: 1, blockId: ID_A }],
      irreversibleOnly: false,
      fetchBlock: true,
      fetchTraces: true,
      fetchDeltas: true,
      fetchFinalityData,
    }
    const viaAbi = encodeShipType('request', [
      'get_blocks_request_v1',
      {
        start_block_num: 2,
        end_block_num: 0xffffffff,
        max_messages_in_flight: 20,
        have_positions: [{ block_num: 1, block_id: ID_A }],
        irreversible_only: false,
        fetch_block: true,
        fetch_traces: true,
        fetch_deltas: true,
        fetch_finality_data: fetchFinalityData,
      },
    ])
    assert.equal(toHex(encodeRequest({ kind: 'blocks', request })), toHex(viaAbi))
    assert.deepEqual(decodeRequest(viaAbi), { kind: 'blocks', request })
  }
})

test('get_blocks_result_v1 with and without finality_data is byte-equal to the ABI encoder; decodeResult() reads both', () => {
  const finality = encodeShipType('finality_data', finalityDataJson(true))
  for (const finalityData of [finality, undefined]) {
    const result = {
      v1: true,
      head: { blockNum: 11, blockId: ID_B },
      lastIrreversible: { blockNum: 9, blockId: ID_A },
      thisBlock: { blockNum: 11, blockId: ID_B },
      prevBlock: { blockNum: 10, blockId: ID_A },
      block: fromHex('0102'),
      traces: fromHex('00'),
      deltas: undefined,
      finalityData,
    }
    const viaAbi = encodeShipType('result', [
      'get_blocks_result_v1',
      {
        head: { block_num: 11, block_id: ID_B },
        last_irreversible: { block_num: 9, block_id: ID_A },
        this_block: { block_num: 11, block_id: ID_B },
        prev_block: { block_num: 10, block_id: ID_A },
        block: '0102',
        traces: '00',
        deltas: null,
        finality_data: finalityData ? toHex(finalityData) : null,
      },
    ])
    const bytes = encodeBlocksResult(result)
    assert.equal(toHex(bytes), toHex(viaAbi), finalityData ? 'with finality_data' : 'without finality_data')
    const decoded = decodeResult(viaAbi)
    assert.ok(decoded.kind === 'blocks')
    assert.equal(decoded.result.v1, true)
    assert.equal(decoded.result.finalityData && toHex(decoded.result.finalityData), finalityData && toHex(finalityData))
    const abiView = decodeShipType<[string, { finality_data: string | null }]>('result', bytes)
    assert.deepEqual(abiView[0], 'get_blocks_result_v1')
    assert.equal(abiView[1].finality_data, finalityData ? toHex(finalityData) : null)
  }
})

test('get_status_result_v1 with a finality data range is byte-equal to the ABI encoder', () => {
  const status = {
    v1: true,
    head: { blockNum: 11, blockId: ID_B },
    lastIrreversible: { blockNum: 9, blockId: ID_A },
    traceBeginBlock: 1,
    traceEndBlock: 12,
    chainStateBeginBlock: 1,
    chainStateEndBlock: 12,
    chainId: ID_A,
    finalityDataBeginBlock: 2,
    finalityDataEndBlock: 12,
  }
  const viaAbi = encodeShipType('result', [
    'get_status_result_v1',
    {
      head: { block_num: 11, block_id: ID_B },
      last_irreversible: { block_num: 9, block_id: ID_A },
      trace_begin_block: 1,
      trace_end_block: 12,
      chain_state_begin_block: 1,
      chain_state_end_block: 12,
      chain_id: ID_A,
      finality_data_begin_block: 2,
      finality_data_end_block: 12,
    },
  ])
  assert.equal(toHex(encodeStatusResult(status)), toHex(viaAbi))
  assert.deepEqual(decodeResult(viaAbi), { kind: 'status', status })
})

test('decodeFinalityData() reads the 11 fields as the ABI decoder does, with and without a pending finalizer policy', () => {
  for (const pending of [true, false]) {
    const json = finalityDataJson(pending)
    const bytes = encodeShipType('finality_data', json)
    const ours = decodeFinalityData(bytes)
    assert.equal(Object.keys(ours).length, 11)
    assert.deepEqual(
      normalizeUint64(finalityDataAsJson(ours)),
      normalizeUint64(decodeShipType<Json>('finality_data', bytes)),
    )
    assert.deepEqual(normalizeUint64(finalityDataAsJson(ours)), normalizeUint64(json))
  }
})

test('decodeFinalityExtension() reads qc_claim and both policy diffs as the ABI decoder does', () => {
  const key = 'EOS6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5GDW5CV'
  const full = {
    qc_claim: { block_num: 77, is_strong_qc: true },
    new_finalizer_policy_diff: {
      generation: 2,
      threshold: 3,
      remove_indexes: [1, 65535],
      insert_indexes: [{ index: 0, value: { description: 'f0', weight: 1, public_key: BLS } }],
    },
    new_proposer_policy_diff: {
      version: 5,
      proposal_time: '2030-01-01T00:00:01.000',
      remove_indexes: [2],
      insert_indexes: [
        {
          index: 1,
          value: {
            producer_name: 'producera',
            authority: ['block_signing_authority_v0', { threshold: 1, keys: [{ key, weight: 1 }] }],
          },
        },
      ],
    },
  }
  for (const json of [
    full,
    {
      qc_claim: { block_num: 3, is_strong_qc: false },
      new_finalizer_policy_diff: null,
      new_proposer_policy_diff: null,
    },
  ]) {
    const bytes = encodeShipType('finality_extension', json)
    assert.deepEqual(
      normalizeUint64(finalityExtensionAsJson(decodeFinalityExtension(bytes))),
      normalizeUint64(decodeShipType<Json>('finality_extension', bytes)),
    )
  }
})

test('decodeFinalityData() and decodeFinalityExtension() refuse truncated and trailing bytes with binary_decode_error', () => {
  const data = encodeShipType('finality_data', finalityDataJson(true))
  const ext = encodeShipType('finality_extension', {
    qc_claim: { block_num: 3, is_strong_qc: true },
    new_finalizer_policy_diff: null,
    new_proposer_policy_diff: null,
  })
  for (const [decode, bytes] of [
    [decodeFinalityData, data],
    [decodeFinalityExtension, ext],
  ] as const) {
    for (const bad of [bytes.subarray(0, bytes.length - 1), new Uint8Array([...bytes, 0])])
      assert.throws(
        () => decode(bad),
        (e: { code?: string }) => e.code === 'binary_decode_error',
      )
  }
})
