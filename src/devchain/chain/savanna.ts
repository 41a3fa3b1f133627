import { PublicKey, Serializer } from '@wharfkit/antelope'
import { BinaryReader, BinaryWriter, fromHex, nameToBigInt, sha256 } from '../../antelope/index.ts'
import { FINALITY_EXTENSION_ID, decodeFinalityExtension, type FinalityExtensionValue } from '../../ship/index.ts'
import { DEV_PUBLIC_KEY } from './genesis.ts'
import type { TransactionTrace } from './traces.ts'

/**
 * What the devchain's Savanna mode adds to a block (docs/DEVCHAIN.md, "Savanna mode"): Spring's
 * `finality_extension` in the header, the Savanna merkle for `transaction_mroot` and the action
 * root, and the `finality_data` SHiP sends to v1 readers. There are no finalizers voting: every
 * block claims a strong QC on its parent (the first Savanna block, Spring's "Savanna Genesis
 * block", claims itself and carries the first finalizer and proposer policies), so LIB is head − 2;
 * while finality is stalled each block repeats its parent's claim and LIB stays where it was.
 *
 * The finality tree root (the header's `action_mroot`), `reversible_blocks_mroot`, the finality
 * and base digests are deterministic stand-ins computed from the chain's own ids, not Spring's
 * finality-leaf recipes: nothing outside a Savanna light client checks them.
 */

export interface QcClaim {
  readonly blockNum: number
  readonly isStrongQc: boolean
}

/** The devchain's finalizer policy: one finalizer per producer, weight 1, 2/3 + 1 threshold. */
export interface FinalizerPolicy {
  readonly generation: number
  readonly threshold: bigint
  readonly finalizers: readonly {
    readonly description: string
    readonly weight: bigint
    readonly publicKey: Uint8Array
  }[]
}

const SALT = new TextEncoder()

/** A deterministic 96-byte stand-in for a producer's BLS public key (affine G1, as Spring packs it). */
function blsKeyOf(producer: string): Uint8Array {
  const key = new Uint8Array(96)
  for (let i = 0; i < 3; i++) key.set(sha256(SALT.encode(`antler devchain bls ${producer} ${i}`)), i * 32)
  return key
}

export function finalizerPolicyOf(producers: readonly string[]): FinalizerPolicy {
  return {
    generation: 1,
    threshold: BigInt(Math.floor((producers.length * 2) / 3) + 1),
    finalizers: producers.map((p) => ({ description: p, weight: 1n, publicKey: blsKeyOf(p) })),
  }
}

/** Spring's text form of a BLS public key (`PUB_BLS_` + base64url of the key bytes). */
export function blsKeyText(key: Uint8Array): string {
  return `PUB_BLS_${Buffer.from(key).toString('base64url')}`
}

/** Spring's `calculate_merkle`: the left subtree is the largest power of two, no node flagging. */
export function savannaMerkleRoot(digests: readonly Uint8Array[]): Uint8Array {
  if (digests.length === 0) return new Uint8Array(32)
  const build = (start: number, end: number): Uint8Array => {
    const size = end - start
    if (size === 1) return digests[start]
    let left = 1
    while (left * 2 < size) left *= 2
    return sha256(build(start, start + left), build(start + left, end))
  }
  return build(0, digests.length)
}

/** Spring's `action_trace::digest_savanna()`, the leaf of the real (finality_data) action root. */
function actionDigestSavanna(t: TransactionTrace['actionTraces'][number]): Uint8Array {
  const r = t.receipt!
  const witness = new BinaryWriter(64).uint64(r.globalSequence).varuint32(r.authSequence.length)
  for (const [account, sequence] of r.authSequence) witness.uint64(nameToBigInt(account)).uint64(sequence)
  witness.varuint32(r.codeSequence).varuint32(r.abiSequence)
  const w = new BinaryWriter(96)
    .uint64(nameToBigInt(r.receiver))
    .uint64(r.recvSequence)
    .uint64(nameToBigInt(t.act.account))
    .uint64(nameToBigInt(t.act.name))
  return sha256(w.raw(fromHex(r.actDigest)).raw(sha256(witness.finish())).finish())
}

/** The Savanna action root of a block's traces: every receipt in execution (global sequence) order. */
export function savannaActionMroot(traces: readonly TransactionTrace[]): Uint8Array {
  const executed = traces.flatMap((t) => t.actionTraces.filter((a) => a.receipt))
  executed.sort((a, b) => (a.receipt!.globalSequence < b.receipt!.globalSequence ? -1 : 1))
  return savannaMerkleRoot(executed.map(actionDigestSavanna))
}

// module-memo: key text → packed bytes is a pure function; shared and bounded, no caller can tell it is there.
const publicKeyBytes = new Map<string, Uint8Array>()
function packedPublicKey(text: string): Uint8Array {
  let bytes = publicKeyBytes.get(text)
  if (!bytes) {
    if (publicKeyBytes.size >= 10_000) publicKeyBytes.clear()
    publicKeyBytes.set(text, (bytes = Serializer.encode({ object: PublicKey.from(text) }).array))
  }
  return bytes
}

/** Packs a `finality_extension`; the first Savanna block carries both policies as diffs from nothing. */
export function encodeFinalityExtension(args: {
  qcClaim: QcClaim
  genesis?: { policy: FinalizerPolicy; producers: readonly string[]; slot: number }
}): Uint8Array {
  const w = new BinaryWriter(256).uint32(args.qcClaim.blockNum).bool(args.qcClaim.isStrongQc)
  const g = args.genesis
  w.bool(g !== undefined)
  if (g) {
    w.uint32(g.policy.generation).uint64(g.policy.threshold).varuint32(0).varuint32(g.policy.finalizers.length)
    g.policy.finalizers.forEach((f, i) => w.uint16(i).string(f.description).uint64(f.weight).bytes(f.publicKey))
  }
  w.bool(g !== undefined)
  if (g) {
    w.uint32(1).uint32(g.slot).varuint32(0).varuint32(g.producers.length)
    g.producers.forEach((p, i) =>
      w
        .uint16(i)
        .uint64(nameToBigInt(p))
        .uint8(0)
        .uint32(1)
        .varuint32(1)
        .raw(packedPublicKey(DEV_PUBLIC_KEY))
        .uint16(1),
    )
  }
  return w.finish()
}

/** The `finality_extension` of a packed `signed_block`, if it has one. */
export function finalityExtensionOf(block: Uint8Array): FinalityExtensionValue | undefined {
  const r = new BinaryReader(block)
  r.raw(4 + 8 + 2 + 32 * 3 + 4)
  if (r.bool()) {
    r.uint32()
    for (let i = r.varuint32(); i > 0; i--) {
      r.uint64()
      r.raw(34)
    }
  }
  for (let i = r.varuint32(); i > 0; i--) {
    const type = r.uint16()
    const data = r.bytes()
    if (type === FINALITY_EXTENSION_ID) return decodeFinalityExtension(data)
  }
  return undefined
}

/** Everything `finality_data` holds for one block. */
export interface FinalityDataFields {
  readonly actionMroot: Uint8Array
  readonly reversibleBlocksMroot: Uint8Array
  readonly qcClaim: QcClaim
  readonly qcClaimFinalityDigest: Uint8Array
  readonly qcClaimSlot: number
  readonly baseDigest: Uint8Array
  readonly pendingPolicy: FinalizerPolicy | undefined
}

/** Packs Spring's `finality_data` (its 11 fields, in the order docs/DEVCHAIN.md lists them). */
export function encodeFinalityData(f: FinalityDataFields): Uint8Array {
  const w = new BinaryWriter(256).uint32(1).uint32(0).uint32(1) // major 1, minor 0, active generation 1
  w.raw(f.actionMroot)
    .raw(f.reversibleBlocksMroot)
    .uint32(f.qcClaim.blockNum)
    .raw(f.qcClaimFinalityDigest)
    .uint32(f.qcClaimSlot)
    .raw(f.baseDigest)
  w.bool(f.pendingPolicy !== undefined)
  if (f.pendingPolicy) {
    w.uint32(f.pendingPolicy.generation).uint64(f.pendingPolicy.threshold).varuint32(f.pendingPolicy.finalizers.length)
    for (const x of f.pendingPolicy.finalizers) w.string(x.description).uint64(x.weight).string(blsKeyText(x.publicKey))
  }
  return w.uint32(1).finish() // last_pending_finalizer_policy_generation
}

/** A stand-in digest of `parts` under a label (finality root, finality digest, base digest). */
export function standInDigest(label: string, ...parts: (Uint8Array | string | number)[]): Uint8Array {
  const w = new BinaryWriter(128).string(label)
  for (const p of parts) {
    if (typeof p === 'number') w.uint32(p)
    else if (typeof p === 'string') w.raw(fromHex(p))
    else w.raw(p)
  }
  return sha256(w.finish())
}
