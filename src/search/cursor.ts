import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto'
import { InvalidCursorError } from './errors.ts'

/**
 * Where a search stopped: the last delivered match (its action's global sequence) and the block
 * holding it. Resuming forward continues after `seq`, backward before it; a `blockId` that is no
 * longer the stored block at `blockNum` means a fork replaced it (forked_head_warning).
 */
export interface SearchPosition {
  readonly blockNum: number
  readonly blockId: string
  readonly seq: number
  /**
   * A subscription's place in the step log (GraphQL streams): the step that delivered the result, and whether it was
   * an undo. Searches ignore it; a subscription resumes inside that step.
   */
  readonly step?: { readonly seq: number; readonly undo: boolean }
}

/** Opaque, tamper-evident cursors: the position and an HMAC-SHA-256 (truncated) keyed by the store's `cursor_key`. */
export interface CursorCodec {
  encode(position: SearchPosition): string
  /**
   * The position, or `request_validation_error` naming `cursor` for garbage, a changed byte, another server's cursor
   * or another version.
   */
  decode(cursor: string): SearchPosition
}

/** Version 1: a search position; version 2 adds the step (a subscription's cursor). */
const VERSION = 1
const VERSION_WITH_STEP = 2
/** version (1) + block number (4) + block id (32) + global sequence (8). */
const PAYLOAD_BYTES = 45
/** Version 2 adds the step's seq (8) and whether it is an undo (1). */
const STEP_BYTES = 9
const MAC_BYTES = 16
/** base64url, no padding, of each version's bytes. */
const CURSOR_LENGTHS: ReadonlyMap<number, number> = new Map([
  [Math.ceil(((PAYLOAD_BYTES + MAC_BYTES) * 4) / 3), PAYLOAD_BYTES],
  [Math.ceil(((PAYLOAD_BYTES + STEP_BYTES + MAC_BYTES) * 4) / 3), PAYLOAD_BYTES + STEP_BYTES],
])

export function createCursorCodec(key: Uint8Array): CursorCodec {
  // The key prepared once: an HMAC per cursor, thousands a second in a subscription fan-out.
  const secret = createSecretKey(key)
  const mac = (payload: Buffer) => createHmac('sha256', secret).update(payload).digest().subarray(0, MAC_BYTES)
  return {
    encode({ blockNum, blockId, seq, step }) {
      const payload = Buffer.alloc(PAYLOAD_BYTES + (step ? STEP_BYTES : 0))
      payload.writeUInt8(step ? VERSION_WITH_STEP : VERSION, 0)
      payload.writeUInt32BE(blockNum, 1)
      Buffer.from(blockId, 'hex').copy(payload, 5)
      payload.writeBigUInt64BE(BigInt(seq), 37)
      if (step) {
        payload.writeBigUInt64BE(BigInt(step.seq), PAYLOAD_BYTES)
        payload.writeUInt8(step.undo ? 1 : 0, PAYLOAD_BYTES + 8)
      }
      return Buffer.concat([payload, mac(payload)]).toString('base64url')
    },
    decode(cursor) {
      const payloadBytes = CURSOR_LENGTHS.get(cursor.length)
      if (payloadBytes === undefined || !/^[A-Za-z0-9_-]+$/.test(cursor))
        throw InvalidCursorError({ reason: 'not a cursor of this server' })
      const bytes = Buffer.from(cursor, 'base64url')
      const payload = bytes.subarray(0, payloadBytes)
      if (bytes.length !== payloadBytes + MAC_BYTES || !timingSafeEqual(mac(payload), bytes.subarray(payloadBytes)))
        throw InvalidCursorError({ reason: 'the cursor was altered or made by another server' })
      const version = payload.readUInt8(0)
      if (version !== (payloadBytes === PAYLOAD_BYTES ? VERSION : VERSION_WITH_STEP))
        throw InvalidCursorError({ reason: `cursor version ${version} is not served here` })
      const position = {
        blockNum: payload.readUInt32BE(1),
        blockId: payload.subarray(5, 37).toString('hex'),
        seq: Number(payload.readBigUInt64BE(37)),
      }
      if (version === VERSION) return position
      const step = {
        seq: Number(payload.readBigUInt64BE(PAYLOAD_BYTES)),
        undo: payload.readUInt8(PAYLOAD_BYTES + 8) === 1,
      }
      return { ...position, step }
    },
  }
}
