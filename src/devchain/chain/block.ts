import { Serializer, Signature } from '@wharfkit/antelope'
import { BinaryWriter, fromHex, nameToBigInt, blockIdFromPackedHeader } from '../../antelope/index.ts'
import type { PackedTransactionInput } from './intake.ts'

/** The header fields the devchain fills (no schedule changes; Savanna blocks carry the finality extension). */
export interface BlockHeader {
  readonly slot: number
  readonly producer: string
  readonly previous: string
  readonly transactionMroot: string
  /** In a Savanna block: the finality tree root. */
  readonly actionMroot: string
  readonly scheduleVersion: number
  readonly headerExtensions?: readonly { readonly type: number; readonly data: Uint8Array }[]
}

/** A receipt in the block: the packed transaction, or the id alone for deferred ones. */
export interface BlockReceipt {
  readonly status: number
  readonly cpuUsageUs: number
  readonly netUsageWords: number
  readonly trx:
    | { readonly kind: 'id'; readonly id: string }
    | { readonly kind: 'packed'; readonly id: string; readonly packed: PackedTransactionInput }
}

export function packHeader(h: BlockHeader): Uint8Array {
  const w = new BinaryWriter(160)
  w.uint32(h.slot).uint64(nameToBigInt(h.producer)).uint16(0).raw(fromHex(h.previous))
  w.raw(fromHex(h.transactionMroot)).raw(fromHex(h.actionMroot)).uint32(h.scheduleVersion)
  w.bool(false).varuint32(h.headerExtensions?.length ?? 0) // new_producers, header_extensions
  for (const e of h.headerExtensions ?? []) w.uint16(e.type).bytes(e.data)
  return w.finish()
}

export function blockIdOf(header: BlockHeader, blockNum: number): string {
  return blockIdFromPackedHeader(packHeader(header), blockNum)
}

// module-memo: signature text → packed bytes is a pure function; shared and bounded, no caller can tell.
const signatureCache = new Map<string, Uint8Array>()
export function signatureBytes(text: string): Uint8Array {
  let bytes = signatureCache.get(text)
  if (!bytes) {
    bytes = Serializer.encode({ object: Signature.from(text) }).array
    if (signatureCache.size > 10_000) signatureCache.clear()
    signatureCache.set(text, bytes)
  }
  return bytes
}

/** Packs the `signed_block` SHiP sends in `block`. */
export function packSignedBlock(
  header: BlockHeader,
  producerSignature: string,
  receipts: readonly BlockReceipt[],
): Uint8Array {
  const w = new BinaryWriter(256 + receipts.length * 256).raw(packHeader(header)).raw(signatureBytes(producerSignature))
  w.varuint32(receipts.length)
  for (const r of receipts) {
    w.uint8(r.status).uint32(r.cpuUsageUs).varuint32(r.netUsageWords)
    if (r.trx.kind === 'id') w.uint8(0).raw(fromHex(r.trx.id))
    else {
      const p = r.trx.packed
      w.uint8(1).varuint32(p.signatures.length)
      for (const s of p.signatures) w.raw(signatureBytes(s))
      w.uint8(p.compression).bytes(p.packedContextFreeData).bytes(p.packedTrx)
    }
  }
  return w.varuint32(0).finish() // block_extensions
}
