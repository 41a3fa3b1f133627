import { BinaryWriter } from './binary.ts'
import { InvalidChainValueError } from './errors.ts'
import { fromHex, sha256, toHex } from './hash.ts'

const ID_PATTERN = /^[0-9a-f]{64}$/

/** Block id: sha256 of the packed header (no signature), first 4 bytes = big-endian block number. */
export function blockIdFromPackedHeader(packedHeader: Uint8Array, blockNum: number): string {
  const digest = sha256(packedHeader)
  new DataView(digest.buffer, digest.byteOffset).setUint32(0, blockNum, false)
  return toHex(digest)
}

/** The block number carried in the first 4 bytes of a block id. */
export function blockNumFromId(blockId: string): number {
  if (!ID_PATTERN.test(blockId))
    throw InvalidChainValueError({ kind: 'block id', value: blockId, reason: 'expected 64 lowercase hex digits' })
  return parseInt(blockId.slice(0, 8), 16)
}

/** TAPOS `ref_block_prefix`: the little-endian uint32 at bytes 8..11 of the block id. */
export function refBlockPrefix(blockId: string): number {
  const bytes = fromHex(blockId)
  return new DataView(bytes.buffer, bytes.byteOffset).getUint32(8, true)
}

/** TAPOS `ref_block_num`: the low 16 bits of the block number. */
export function refBlockNum(blockNum: number): number {
  return blockNum & 0xffff
}

/** Transaction id: sha256 of the packed (inflated) transaction. */
export function transactionId(packedTrx: Uint8Array): string {
  return toHex(sha256(packedTrx))
}

/**
 * The digest a transaction's signatures sign: sha256(chain_id ‖ packed trx ‖ cfd hash), where the
 * cfd hash is sha256 of the packed context-free data, or 32 zero bytes when there is none.
 * (wharfkit's `signingDigest` always uses zeros, which is wrong when context-free data exists.)
 */
export function signingDigest(chainId: string, packedTrx: Uint8Array, packedContextFreeData: Uint8Array): Uint8Array {
  const cfdHash = packedContextFreeData.length > 0 ? sha256(packedContextFreeData) : new Uint8Array(32)
  return sha256(fromHex(chainId), packedTrx, cfdHash)
}

/** Packs a context-free data list as nodeos does (`vector<bytes>`); empty when there is none. */
export function packContextFreeData(items: readonly Uint8Array[]): Uint8Array {
  if (items.length === 0) return new Uint8Array(0)
  const w = new BinaryWriter(16 + items.reduce((n, item) => n + item.length + 5, 0)).varuint32(items.length)
  for (const item of items) w.bytes(item)
  return w.finish()
}

export function isChecksum256(value: string): boolean {
  return ID_PATTERN.test(value)
}
