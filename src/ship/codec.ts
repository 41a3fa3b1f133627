import { BinaryDecodeError, BinaryReader, BinaryWriter, fromHex, toHex, type BlockRef } from '../antelope/index.ts'

/**
 * The SHiP envelope (request and result variants) coded by hand: the `bytes?` payloads of a
 * blocks result stay zero-copy views, which matters when a result carries megabytes.
 * The inner payloads (`signed_block`, `transaction_trace[]`, `table_delta[]`) go through the ABI.
 */

export interface BlocksRequest {
  /** `get_blocks_request_v0` (false) or Spring's `_v1` with `fetch_finality_data` (true). */
  readonly v1: boolean
  readonly startBlockNum: number
  /** Exclusive; 0xffffffff streams forever. */
  readonly endBlockNum: number
  readonly maxMessagesInFlight: number
  readonly havePositions: readonly BlockRef[]
  readonly irreversibleOnly: boolean
  readonly fetchBlock: boolean
  readonly fetchTraces: boolean
  readonly fetchDeltas: boolean
  readonly fetchFinalityData: boolean
}

export type ShipRequestMessage =
  | { readonly kind: 'status'; readonly v1: boolean }
  | { readonly kind: 'blocks'; readonly request: BlocksRequest }
  | { readonly kind: 'ack'; readonly numMessages: number }

export interface StatusResult {
  readonly v1: boolean
  readonly head: BlockRef
  readonly lastIrreversible: BlockRef
  readonly traceBeginBlock: number
  readonly traceEndBlock: number
  readonly chainStateBeginBlock: number
  readonly chainStateEndBlock: number
  readonly chainId: string | undefined
  readonly finalityDataBeginBlock?: number
  readonly finalityDataEndBlock?: number
}

export interface BlocksResult {
  readonly v1: boolean
  readonly head: BlockRef
  readonly lastIrreversible: BlockRef
  readonly thisBlock: BlockRef | undefined
  readonly prevBlock: BlockRef | undefined
  readonly block: Uint8Array | undefined
  readonly traces: Uint8Array | undefined
  readonly deltas: Uint8Array | undefined
  readonly finalityData?: Uint8Array | undefined
}

export type ShipResultMessage =
  | { readonly kind: 'status'; readonly status: StatusResult }
  | { readonly kind: 'blocks'; readonly result: BlocksResult }

const REQUEST = { statusV0: 0, blocksV0: 1, ack: 2, blocksV1: 3, statusV1: 4 } as const
const RESULT = { statusV0: 0, blocksV0: 1, blocksV1: 2, statusV1: 3 } as const

function writePosition(w: BinaryWriter, p: BlockRef): void {
  w.uint32(p.blockNum).raw(fromHex(p.blockId))
}

function readPosition(r: BinaryReader): BlockRef {
  return { blockNum: r.uint32(), blockId: toHex(r.raw(32)) }
}

function writeOptionalPosition(w: BinaryWriter, p: BlockRef | undefined): void {
  w.bool(p !== undefined)
  if (p) writePosition(w, p)
}

function readOptionalPosition(r: BinaryReader): BlockRef | undefined {
  return r.bool() ? readPosition(r) : undefined
}

function writeOptionalBytes(w: BinaryWriter, b: Uint8Array | undefined): void {
  w.bool(b !== undefined)
  if (b) w.bytes(b)
}

function readOptionalBytes(r: BinaryReader): Uint8Array | undefined {
  return r.bool() ? r.bytes() : undefined
}

export function encodeRequest(message: ShipRequestMessage): Uint8Array {
  const w = new BinaryWriter(64)
  switch (message.kind) {
    case 'status':
      return w.varuint32(message.v1 ? REQUEST.statusV1 : REQUEST.statusV0).finish()
    case 'ack':
      return w.varuint32(REQUEST.ack).uint32(message.numMessages).finish()
    case 'blocks': {
      const q = message.request
      w.varuint32(q.v1 ? REQUEST.blocksV1 : REQUEST.blocksV0)
      w.uint32(q.startBlockNum).uint32(q.endBlockNum).uint32(q.maxMessagesInFlight)
      w.varuint32(q.havePositions.length)
      for (const p of q.havePositions) writePosition(w, p)
      w.bool(q.irreversibleOnly).bool(q.fetchBlock).bool(q.fetchTraces).bool(q.fetchDeltas)
      if (q.v1) w.bool(q.fetchFinalityData)
      return w.finish()
    }
  }
}

/** Decodes one client request; throws `binary_decode_error` on anything malformed. */
export function decodeRequest(data: Uint8Array): ShipRequestMessage {
  const r = new BinaryReader(data)
  const index = r.varuint32()
  let message: ShipRequestMessage
  switch (index) {
    case REQUEST.statusV0:
    case REQUEST.statusV1:
      message = { kind: 'status', v1: index === REQUEST.statusV1 }
      break
    case REQUEST.ack:
      message = { kind: 'ack', numMessages: r.uint32() }
      break
    case REQUEST.blocksV0:
    case REQUEST.blocksV1: {
      const v1 = index === REQUEST.blocksV1
      const startBlockNum = r.uint32()
      const endBlockNum = r.uint32()
      const maxMessagesInFlight = r.uint32()
      const count = r.varuint32()
      if (count > r.remaining / 36)
        throw BinaryDecodeError(`have_positions count ${count} exceeds the message`, r.offset)
      const havePositions: BlockRef[] = []
      for (let i = 0; i < count; i++) havePositions.push(readPosition(r))
      const irreversibleOnly = r.bool()
      const fetchBlock = r.bool()
      const fetchTraces = r.bool()
      const fetchDeltas = r.bool()
      const fetchFinalityData = v1 ? r.bool() : false
      message = {
        kind: 'blocks',
        request: {
          v1,
          startBlockNum,
          endBlockNum,
          maxMessagesInFlight,
          havePositions,
          irreversibleOnly,
          fetchBlock,
          fetchTraces,
          fetchDeltas,
          fetchFinalityData,
        },
      }
      break
    }
    default:
      throw BinaryDecodeError(`unknown request variant ${index}`, 0)
  }
  r.end()
  return message
}

export function encodeStatusResult(s: StatusResult): Uint8Array {
  const w = new BinaryWriter(160)
  w.varuint32(s.v1 ? RESULT.statusV1 : RESULT.statusV0)
  writePosition(w, s.head)
  writePosition(w, s.lastIrreversible)
  w.uint32(s.traceBeginBlock).uint32(s.traceEndBlock).uint32(s.chainStateBeginBlock).uint32(s.chainStateEndBlock)
  if (s.v1) {
    w.raw(fromHex(s.chainId ?? '0'.repeat(64)))
    w.uint32(s.finalityDataBeginBlock ?? 0).uint32(s.finalityDataEndBlock ?? 0)
  } else if (s.chainId !== undefined) {
    w.raw(fromHex(s.chainId))
  }
  return w.finish()
}

/** Encodes a blocks result; the payloads are copied once into the message. */
export function encodeBlocksResult(b: BlocksResult): Uint8Array {
  const size =
    160 + (b.block?.length ?? 0) + (b.traces?.length ?? 0) + (b.deltas?.length ?? 0) + (b.finalityData?.length ?? 0)
  const w = new BinaryWriter(size)
  w.varuint32(b.v1 ? RESULT.blocksV1 : RESULT.blocksV0)
  writePosition(w, b.head)
  writePosition(w, b.lastIrreversible)
  writeOptionalPosition(w, b.thisBlock)
  writeOptionalPosition(w, b.prevBlock)
  writeOptionalBytes(w, b.block)
  writeOptionalBytes(w, b.traces)
  writeOptionalBytes(w, b.deltas)
  if (b.v1) writeOptionalBytes(w, b.finalityData)
  return w.finish()
}

/** Decodes one server result; payloads are views into `data`. Throws `binary_decode_error`. */
export function decodeResult(data: Uint8Array): ShipResultMessage {
  const r = new BinaryReader(data)
  const index = r.varuint32()
  let message: ShipResultMessage
  switch (index) {
    case RESULT.statusV0:
    case RESULT.statusV1: {
      const v1 = index === RESULT.statusV1
      const head = readPosition(r)
      const lastIrreversible = readPosition(r)
      const traceBeginBlock = r.uint32()
      const traceEndBlock = r.uint32()
      const chainStateBeginBlock = r.uint32()
      const chainStateEndBlock = r.uint32()
      // chain_id is a binary extension in v0: absent on EOSIO 2.0.
      const chainId = v1 || r.remaining >= 32 ? toHex(r.raw(32)) : undefined
      const finality = v1 ? { finalityDataBeginBlock: r.uint32(), finalityDataEndBlock: r.uint32() } : {}
      message = {
        kind: 'status',
        status: {
          v1,
          head,
          lastIrreversible,
          traceBeginBlock,
          traceEndBlock,
          chainStateBeginBlock,
          chainStateEndBlock,
          chainId,
          ...finality,
        },
      }
      break
    }
    case RESULT.blocksV0:
    case RESULT.blocksV1: {
      const v1 = index === RESULT.blocksV1
      const head = readPosition(r)
      const lastIrreversible = readPosition(r)
      const thisBlock = readOptionalPosition(r)
      const prevBlock = readOptionalPosition(r)
      const block = readOptionalBytes(r)
      const traces = readOptionalBytes(r)
      const deltas = readOptionalBytes(r)
      const finalityData = v1 ? readOptionalBytes(r) : undefined
      message = {
        kind: 'blocks',
        result: { v1, head, lastIrreversible, thisBlock, prevBlock, block, traces, deltas, finalityData },
      }
      break
    }
    default:
      throw BinaryDecodeError(`unknown result variant ${index}`, 0)
  }
  r.end()
  return message
}
