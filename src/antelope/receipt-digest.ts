import { BinaryWriter } from './binary.ts'
import { fromHex, sha256 } from './hash.ts'

/** A block's transaction receipt: the id alone (deferred, implicit) or the packed transaction. */
export interface TransactionReceiptParts {
  readonly status: number
  readonly cpuUsageUs: number
  readonly netUsageWords: number
  readonly trx:
    | { readonly kind: 'id'; readonly id: string }
    | {
        readonly kind: 'packed'
        readonly signatures: readonly Uint8Array[]
        readonly compression: number
        readonly packedContextFreeData: Uint8Array
        readonly packedTrx: Uint8Array
      }
}

/** `packed_transaction::packed_digest()`: sha256(compression, packed_trx, sha256(signatures, packed cfd)). */
function packedTransactionDigest(trx: Extract<TransactionReceiptParts['trx'], { kind: 'packed' }>): Uint8Array {
  const prunable = new BinaryWriter(128).varuint32(trx.signatures.length)
  for (const signature of trx.signatures) prunable.raw(signature)
  prunable.bytes(trx.packedContextFreeData)
  const w = new BinaryWriter(64 + trx.packedTrx.length)
    .uint8(trx.compression)
    .bytes(trx.packedTrx)
    .raw(sha256(prunable.finish()))
  return sha256(w.finish())
}

/** `transaction_receipt::digest()`, the leaf of the legacy `transaction_mroot`. */
export function transactionReceiptDigest(receipt: TransactionReceiptParts): Uint8Array {
  const w = new BinaryWriter(80).uint8(receipt.status).uint32(receipt.cpuUsageUs).varuint32(receipt.netUsageWords)
  w.raw(receipt.trx.kind === 'id' ? fromHex(receipt.trx.id) : packedTransactionDigest(receipt.trx))
  return sha256(w.finish())
}

/** An action receipt as nodeos packs it (the SHiP `action_receipt_v0` fields). */
export interface ActionReceiptParts {
  readonly receiver: bigint
  readonly actDigest: Uint8Array
  readonly globalSequence: bigint
  readonly recvSequence: bigint
  /** Sorted by account, one entry per distinct authorizing actor. */
  readonly authSequence: readonly { readonly account: bigint; readonly sequence: bigint }[]
  readonly codeSequence: number
  readonly abiSequence: number
}

/** `action_receipt::digest()`, the leaf of the legacy `action_mroot`: sha256 of the packed receipt. */
export function actionReceiptDigest(receipt: ActionReceiptParts): Uint8Array {
  const w = new BinaryWriter(128)
    .uint64(receipt.receiver)
    .raw(receipt.actDigest)
    .uint64(receipt.globalSequence)
    .uint64(receipt.recvSequence)
  w.varuint32(receipt.authSequence.length)
  for (const entry of receipt.authSequence) w.uint64(entry.account).uint64(entry.sequence)
  return sha256(w.varuint32(receipt.codeSequence).varuint32(receipt.abiSequence).finish())
}
