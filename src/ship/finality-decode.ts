import { BinaryReader, readName, readPublicKey, toHex } from '../antelope/index.ts'
import { readCount, readVariant } from './bounded-reads.ts'

/**
 * Hand-written decoders for what Savanna (Spring 1.x) adds to a block: the `finality_extension`
 * header extension and the `finality_data` SHiP sends beside a block. Like fast-decode.ts, every read
 * is bounded and malformed input throws `binary_decode_error`.
 */

/** `block_header.schedule_version` of a proper Savanna block (Spring `proper_svnn_schedule_version`, 1 << 31). */
export const SAVANNA_SCHEDULE_VERSION = 0x80000000
/** Header extension id of Spring's `finality_extension` (`block_header_extension` variant index 2). */
export const FINALITY_EXTENSION_ID = 2

/** A `finalizer_authority` of a header's `new_finalizer_policy_diff` (BLS key as raw bytes). */
export interface FinalizerAuthorityValue {
  readonly description: string
  readonly weight: bigint
  readonly publicKey: Uint8Array
}

/** A `producer_authority` of a header's `new_proposer_policy_diff`. */
export interface ProducerAuthorityValue {
  readonly producerName: string
  readonly threshold: number
  readonly keys: readonly { readonly key: string; readonly weight: number }[]
}

/** Spring's `finality_extension` (header extension 2) of a Savanna block. */
export interface FinalityExtensionValue {
  readonly qcClaim: { readonly blockNum: number; readonly isStrongQc: boolean }
  readonly newFinalizerPolicyDiff:
    | {
        readonly generation: number
        readonly threshold: bigint
        readonly removeIndexes: readonly number[]
        readonly insertIndexes: readonly { readonly index: number; readonly value: FinalizerAuthorityValue }[]
      }
    | undefined
  readonly newProposerPolicyDiff:
    | {
        readonly version: number
        readonly proposalTimeSlot: number
        readonly removeIndexes: readonly number[]
        readonly insertIndexes: readonly { readonly index: number; readonly value: ProducerAuthorityValue }[]
      }
    | undefined
}

/** A `finalizer_policy_with_string_key` (what `finality_data.pending_finalizer_policy` carries). */
export interface FinalizerPolicyValue {
  readonly generation: number
  readonly threshold: bigint
  readonly finalizers: readonly { readonly description: string; readonly weight: bigint; readonly publicKey: string }[]
}

/** Spring's `finality_data` (the `get_blocks_result_v1.finality_data` bytes), its 11 fields in wire order. */
export interface FinalityDataValue {
  readonly majorVersion: number
  readonly minorVersion: number
  readonly activeFinalizerPolicyGeneration: number
  /** The block's real action merkle root (the header's `action_mroot` is the finality root in Savanna). */
  readonly actionMroot: string
  readonly reversibleBlocksMroot: string
  readonly latestQcClaimBlockNum: number
  readonly latestQcClaimFinalityDigest: string
  /** `block_timestamp_type` slot. */
  readonly latestQcClaimTimestampSlot: number
  readonly baseDigest: string
  readonly pendingFinalizerPolicy: FinalizerPolicyValue | undefined
  readonly lastPendingFinalizerPolicyGeneration: number
}

function readUint16List(r: BinaryReader): number[] {
  const out: number[] = []
  for (let i = readCount(r, 2); i > 0; i--) out.push(r.uint16())
  return out
}

function readProducerAuthority(r: BinaryReader): ProducerAuthorityValue {
  const producerName = readName(r)
  readVariant(r, 'block_signing_authority', 0)
  const threshold = r.uint32()
  const keys: { key: string; weight: number }[] = []
  for (let i = readCount(r, 36); i > 0; i--) keys.push({ key: readPublicKey(r), weight: r.uint16() })
  return { producerName, threshold, keys }
}

/** Decodes the data of a `finality_extension` header extension (id 2). */
export function decodeFinalityExtension(data: Uint8Array): FinalityExtensionValue {
  const r = new BinaryReader(data)
  const qcClaim = { blockNum: r.uint32(), isStrongQc: r.bool() }
  let newFinalizerPolicyDiff: FinalityExtensionValue['newFinalizerPolicyDiff']
  if (r.bool()) {
    const generation = r.uint32()
    const threshold = r.uint64()
    const removeIndexes = readUint16List(r)
    const insertIndexes: { index: number; value: FinalizerAuthorityValue }[] = []
    for (let i = readCount(r, 12); i > 0; i--)
      insertIndexes.push({
        index: r.uint16(),
        value: { description: r.string(), weight: r.uint64(), publicKey: r.bytes() },
      })
    newFinalizerPolicyDiff = { generation, threshold, removeIndexes, insertIndexes }
  }
  let newProposerPolicyDiff: FinalityExtensionValue['newProposerPolicyDiff']
  if (r.bool()) {
    const version = r.uint32()
    const proposalTimeSlot = r.uint32()
    const removeIndexes = readUint16List(r)
    const insertIndexes: { index: number; value: ProducerAuthorityValue }[] = []
    for (let i = readCount(r, 16); i > 0; i--)
      insertIndexes.push({ index: r.uint16(), value: readProducerAuthority(r) })
    newProposerPolicyDiff = { version, proposalTimeSlot, removeIndexes, insertIndexes }
  }
  r.end()
  return { qcClaim, newFinalizerPolicyDiff, newProposerPolicyDiff }
}

/** Decodes a packed `finality_data` (the Spring 1.x layout of that type in ship-abi.json). */
export function decodeFinalityData(data: Uint8Array): FinalityDataValue {
  const r = new BinaryReader(data)
  const majorVersion = r.uint32()
  const minorVersion = r.uint32()
  const activeFinalizerPolicyGeneration = r.uint32()
  const actionMroot = toHex(r.raw(32))
  const reversibleBlocksMroot = toHex(r.raw(32))
  const latestQcClaimBlockNum = r.uint32()
  const latestQcClaimFinalityDigest = toHex(r.raw(32))
  const latestQcClaimTimestampSlot = r.uint32()
  const baseDigest = toHex(r.raw(32))
  let pendingFinalizerPolicy: FinalizerPolicyValue | undefined
  if (r.bool()) {
    const generation = r.uint32()
    const threshold = r.uint64()
    const finalizers: { description: string; weight: bigint; publicKey: string }[] = []
    for (let i = readCount(r, 10); i > 0; i--)
      finalizers.push({ description: r.string(), weight: r.uint64(), publicKey: r.string() })
    pendingFinalizerPolicy = { generation, threshold, finalizers }
  }
  const lastPendingFinalizerPolicyGeneration = r.uint32()
  r.end()
  return {
    majorVersion,
    minorVersion,
    activeFinalizerPolicyGeneration,
    actionMroot,
    reversibleBlocksMroot,
    latestQcClaimBlockNum,
    latestQcClaimFinalityDigest,
    latestQcClaimTimestampSlot,
    baseDigest,
    pendingFinalizerPolicy,
    lastPendingFinalizerPolicyGeneration,
  }
}
