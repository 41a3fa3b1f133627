import { inflateSync } from 'node:zlib'
import { BinaryReader, fromHex, transactionId } from '../antelope/index.ts'
import { PushInvalidTransactionError } from './errors.ts'

/** What the push service needs of a packed transaction body. */
export interface PackedTransactionFacts {
  /** sha256 of the uncompressed packed transaction, as the chain computes it. */
  readonly id: string
  /** `time_point_sec` of the header: the chain refuses the transaction in any block at or after it. */
  readonly expirationSec: number
  readonly delaySec: number
  /** Context-free actions run first, so they hold action ordinals 1..n of the trace. */
  readonly contextFreeActionCount: number
}

/** nodeos's limit on a packed transaction, also the inflate limit. */
const MAX_TRANSACTION_BYTES = 512 * 1024
const HEX = /^(?:[0-9a-fA-F]{2})*$/

/**
 * Validates a nodeos `packed_transaction` JSON body (signatures, compression 0|1|"none"|"zlib",
 * packed_context_free_data and packed_trx as hex) and reads its id and header. Throws
 * `push_invalid_transaction_error` with `details.reason` for anything else.
 */
export function readPackedTransaction(body: unknown): PackedTransactionFacts {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('the body must be a JSON object')
  const b = body as Record<string, unknown>
  if (!Array.isArray(b.signatures) || !b.signatures.every((s) => typeof s === 'string'))
    throw invalid('signatures must be an array of strings')
  const c = b.compression ?? 0
  const zlib = c === 1 || c === 'zlib'
  if (!zlib && c !== 0 && c !== 'none')
    throw invalid(`compression must be 0, 1, "none" or "zlib", got ${JSON.stringify(c)}`)
  const cfd = b.packed_context_free_data ?? ''
  if (typeof cfd !== 'string' || !HEX.test(cfd)) throw invalid('packed_context_free_data must be a hex string')
  if (typeof b.packed_trx !== 'string' || b.packed_trx === '' || !HEX.test(b.packed_trx))
    throw invalid('packed_trx must be a non-empty hex string')
  if ((b.packed_trx.length + cfd.length) / 2 > MAX_TRANSACTION_BYTES)
    throw invalid(`the transaction is larger than ${MAX_TRANSACTION_BYTES} bytes`)
  const packed = zlib ? inflate(fromHex(b.packed_trx)) : fromHex(b.packed_trx)
  return { id: transactionId(packed), ...readHeader(packed) }
}

function invalid(reason: string) {
  return PushInvalidTransactionError({ reason })
}

function inflate(bytes: Uint8Array): Uint8Array {
  try {
    const out = inflateSync(bytes, { maxOutputLength: MAX_TRANSACTION_BYTES })
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength)
  } catch (error) {
    throw invalid(`packed_trx does not inflate (zlib): ${(error as Error).message}`)
  }
}

/** Reads the whole `transaction` (header, actions, extensions) so a body the chain cannot unpack is refused here. */
function readHeader(packed: Uint8Array): Omit<PackedTransactionFacts, 'id'> {
  const r = new BinaryReader(packed)
  try {
    const expirationSec = r.uint32()
    r.uint16() // ref_block_num
    r.uint32() // ref_block_prefix
    r.varuint32() // max_net_usage_words
    r.uint8() // max_cpu_usage_ms
    const delaySec = r.varuint32()
    const contextFreeActionCount = skipActions(r)
    skipActions(r)
    const extensions = r.varuint32()
    for (let i = 0; i < extensions; i++) {
      r.uint16()
      r.bytes()
    }
    r.end()
    return { expirationSec, delaySec, contextFreeActionCount }
  } catch (error) {
    throw invalid(`packed_trx does not unpack as a transaction: ${(error as Error).message}`)
  }
}

/** Skips a `vector<action>` and returns its length. */
function skipActions(r: BinaryReader): number {
  const count = r.varuint32()
  for (let i = 0; i < count; i++) {
    r.raw(16) // account, name
    r.raw(16 * r.varuint32()) // authorization: (actor, permission) pairs
    r.bytes() // data
  }
  return count
}
