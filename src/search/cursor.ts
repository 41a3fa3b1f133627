import { createHmac, timingSafeEqual } from 'node:crypto'
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

const VERSION = 1
/** version (1) + block number (4) + block id (32) + global sequence (8). */
const PAYLOAD_BYTES = 45
const MAC_BYTES = 16
/** base64url of 61 bytes, no padding. */
const CURSOR_LENGTH = Math.ceil(((PAYLOAD_BYTES + MAC_BYTES) * 4) / 3)

export function createCursorCodec(key: Uint8Array): CursorCodec {
  const mac = (payload: Buffer) => createHmac('sha256', key).update(payload).digest().subarray(0, MAC_BYTES)
  return {
    encode({ blockNum, blockId, seq }) {
      const payload = Buffer.alloc(PAYLOAD_BYTES)
      payload.writeUInt8(VERSION, 0)
      payload.writeUInt32BE(blockNum, 1)
      Buffer.from(blockId, 'hex').copy(payload, 5)
      payload.writeBigUInt64BE(BigInt(seq), 37)
      return Buffer.concat([payload, mac(payload)]).toString('base64url')
    },
    decode(cursor) {
      if (cursor.length !== CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor))
        throw InvalidCursorError({ reason: 'not a cursor of this server' })
      const bytes = Buffer.from(cursor, 'base64url')
      const payload = bytes.subarray(0, PAYLOAD_BYTES)
      if (bytes.length !== PAYLOAD_BYTES + MAC_BYTES || !timingSafeEqual(mac(payload), bytes.subarray(PAYLOAD_BYTES)))
        throw InvalidCursorError({ reason: 'the cursor was altered or made by another server' })
      if (payload.readUInt8(0) !== VERSION)
        throw InvalidCursorError({ reason: `cursor version ${payload.readUInt8(0)} is not served here` })
      return {
        blockNum: payload.readUInt32BE(1),
        blockId: payload.subarray(5, 37).toString('hex'),
        seq: Number(payload.readBigUInt64BE(37)),
      }
    },
  }
}
