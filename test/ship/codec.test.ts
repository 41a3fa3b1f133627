import { test } from 'node:test'
import assert from 'node:assert/strict'
import { fromHex, toHex } from '../../src/antelope/index.ts'
import {
  SHIP_ABI_TEXT,
  decodeRequest,
  decodeResult,
  decodeShipType,
  encodeBlocksResult,
  encodeRequest,
  encodeShipType,
  encodeStatusResult,
} from '../../src/ship/index.ts'
import { createHash } from 'node:crypto'

const ID_A = 'a'.repeat(64)
const ID_B = '0000000b' + 'b'.repeat(56)

test('SHIP_ABI_TEXT is byte-for-byte the Spring ABI nodeos sends', () => {
  assert.equal(
    createHash('sha256').update(SHIP_ABI_TEXT).digest('hex'),
    'f17a3bc91db1baa017c78ed31ed82eb52a4f4f12b661d59d15815bc9fab0e12e',
  )
})

test('encodeRequest() writes the packed requests of docs/ARCHITECTURE.md "SHiP wire facts"', () => {
  assert.equal(toHex(encodeRequest({ kind: 'status', v1: false })), '00')
  assert.equal(toHex(encodeRequest({ kind: 'ack', numMessages: 1 })), '0201000000')
  const blocks = encodeRequest({
    kind: 'blocks',
    request: {
      v1: false,
      startBlockNum: 100,
      endBlockNum: 0xffffffff,
      maxMessagesInFlight: 5,
      havePositions: [],
      irreversibleOnly: false,
      fetchBlock: true,
      fetchTraces: true,
      fetchDeltas: true,
      fetchFinalityData: false,
    },
  })
  assert.equal(toHex(blocks), '0164000000ffffffff050000000000010101')
})

test('encodeRequest() agrees with the ABI encoder and decodeRequest() reads it back', () => {
  const request = {
    v1: true,
    startBlockNum: 7,
    endBlockNum: 90,
    maxMessagesInFlight: 3,
    havePositions: [{ blockNum: 11, blockId: ID_B }],
    irreversibleOnly: true,
    fetchBlock: true,
    fetchTraces: false,
    fetchDeltas: true,
    fetchFinalityData: true,
  }
  const bytes = encodeRequest({ kind: 'blocks', request })
  const viaAbi = encodeShipType('request', [
    'get_blocks_request_v1',
    {
      start_block_num: 7,
      end_block_num: 90,
      max_messages_in_flight: 3,
      have_positions: [{ block_num: 11, block_id: ID_B }],
      irreversible_only: true,
      fetch_block: true,
      fetch_traces: false,
      fetch_deltas: true,
      fetch_finality_data: true,
    },
  ])
  assert.equal(toHex(bytes), toHex(viaAbi))
  assert.deepEqual(decodeRequest(bytes), { kind: 'blocks', request })
})

test('encodeBlocksResult() agrees with the ABI encoder, optional fields absent and present', () => {
  const result = {
    v1: false,
    head: { blockNum: 11, blockId: ID_B },
    lastIrreversible: { blockNum: 1, blockId: ID_A },
    thisBlock: { blockNum: 11, blockId: ID_B },
    prevBlock: undefined,
    block: fromHex('0102'),
    traces: undefined,
    deltas: new Uint8Array(0),
  }
  const viaAbi = encodeShipType('result', [
    'get_blocks_result_v0',
    {
      head: { block_num: 11, block_id: ID_B },
      last_irreversible: { block_num: 1, block_id: ID_A },
      this_block: { block_num: 11, block_id: ID_B },
      prev_block: null,
      block: '0102',
      traces: null,
      deltas: '',
    },
  ])
  const bytes = encodeBlocksResult(result)
  assert.equal(toHex(bytes), toHex(viaAbi))
  const decoded = decodeResult(bytes)
  assert.equal(decoded.kind, 'blocks')
  if (decoded.kind !== 'blocks') return
  assert.deepEqual(
    { ...decoded.result, block: toHex(decoded.result.block!), deltas: toHex(decoded.result.deltas!) },
    { ...result, block: '0102', deltas: '', finalityData: undefined },
  )
})

test('encodeStatusResult() agrees with the ABI encoder for v0 and v1', () => {
  const base = {
    head: { blockNum: 11, blockId: ID_B },
    lastIrreversible: { blockNum: 1, blockId: ID_A },
    traceBeginBlock: 1,
    traceEndBlock: 12,
    chainStateBeginBlock: 1,
    chainStateEndBlock: 12,
    chainId: ID_A,
  }
  const json = {
    head: { block_num: 11, block_id: ID_B },
    last_irreversible: { block_num: 1, block_id: ID_A },
    trace_begin_block: 1,
    trace_end_block: 12,
    chain_state_begin_block: 1,
    chain_state_end_block: 12,
    chain_id: ID_A,
  }
  assert.equal(
    toHex(encodeStatusResult({ ...base, v1: false })),
    toHex(encodeShipType('result', ['get_status_result_v0', json])),
  )
  const v1 = { ...base, v1: true, finalityDataBeginBlock: 0, finalityDataEndBlock: 0 }
  assert.equal(
    toHex(encodeStatusResult(v1)),
    toHex(
      encodeShipType('result', [
        'get_status_result_v1',
        { ...json, finality_data_begin_block: 0, finality_data_end_block: 0 },
      ]),
    ),
  )
  assert.deepEqual(decodeResult(encodeStatusResult(v1)), { kind: 'status', status: v1 })
  const decodedV0 = decodeShipType<[string, { chain_id: string }]>('result', encodeStatusResult({ ...base, v1: false }))
  assert.equal(decodedV0[1].chain_id, ID_A)
})

test('decodeRequest() and decodeResult() refuse truncated, trailing and unknown input', () => {
  const good = encodeRequest({ kind: 'ack', numMessages: 4 })
  const cases = [good.subarray(0, 3), new Uint8Array([...good, 0]), fromHex('09'), fromHex(''), fromHex('01ffffffff')]
  for (const bytes of cases) {
    assert.throws(
      () => decodeRequest(bytes),
      (e: { code?: string }) => e.code === 'binary_decode_error',
      toHex(bytes),
    )
    assert.throws(
      () => decodeResult(bytes),
      (e: { code?: string }) => e.code === 'binary_decode_error',
      toHex(bytes),
    )
  }
  // a have_positions count larger than the message can hold is refused before allocating
  assert.throws(
    () => decodeRequest(fromHex('01000000000000000000000000ffffffff0f')),
    (e: { code?: string }) => e.code === 'binary_decode_error',
  )
})
