import { BinaryWriter, fromHex, nameToBigInt, type RawAction } from '../../antelope/index.ts'
import { signatureBytes } from './block.ts'

/** The receipt and permission shapes are SHiP's (`action_receipt_v0`, `permission_level`). */
export type { ActionReceiptValue as ActionReceipt, PermissionLevelValue as PermissionLevel } from '../../ship/index.ts'
import type { ActionReceiptValue as ActionReceipt } from '../../ship/index.ts'

export interface AccountDelta {
  readonly account: string
  readonly delta: bigint
}

/** One action execution as nodeos traces it (`action_trace_v1`). */
export interface ActionTrace {
  readonly actionOrdinal: number
  readonly creatorActionOrdinal: number
  readonly closestUnnotifiedAncestorActionOrdinal: number
  receipt: ActionReceipt | undefined
  readonly receiver: string
  readonly act: RawAction
  readonly contextFree: boolean
  readonly accountRamDeltas: AccountDelta[]
  returnValue: Uint8Array
}

/** A transaction header's fields (`transaction_header`). */
export interface TransactionHeaderFields {
  readonly expirationSec: number
  readonly refBlockNum: number
  readonly refBlockPrefix: number
  readonly maxNetUsageWords: number
  readonly maxCpuUsageMs: number
  readonly delaySec: number
}

/** The transaction fields SHiP repeats in `partial_transaction_v0`. */
export interface PartialTransaction extends TransactionHeaderFields {
  readonly signatures: readonly string[]
  readonly contextFreeData: readonly Uint8Array[]
}

export const TRX_STATUS = { executed: 0, soft_fail: 1, hard_fail: 2, delayed: 3, expired: 4 } as const
export type TrxStatusName = keyof typeof TRX_STATUS
export const TRX_STATUS_NAMES: readonly TrxStatusName[] = ['executed', 'soft_fail', 'hard_fail', 'delayed', 'expired']

export interface TransactionTrace {
  readonly id: string
  readonly status: number
  readonly cpuUsageUs: number
  readonly netUsageWords: number
  readonly netUsage: number
  readonly scheduled: boolean
  readonly actionTraces: readonly ActionTrace[]
  readonly accountRamDelta: AccountDelta | undefined
  readonly except: string | undefined
  readonly partial: PartialTransaction | undefined
}

function writeName(w: BinaryWriter, name: string): BinaryWriter {
  return w.uint64(nameToBigInt(name))
}

function writeAction(w: BinaryWriter, act: RawAction): void {
  writeName(w, act.account)
  writeName(w, act.name)
  w.varuint32(act.authorization.length)
  for (const level of act.authorization) writeName(writeName(w, level.actor), level.permission)
  w.bytes(act.data)
}

function writeActionTrace(w: BinaryWriter, t: ActionTrace): void {
  w.uint8(1) // action_trace_v1
  w.varuint32(t.actionOrdinal).varuint32(t.creatorActionOrdinal)
  w.bool(t.receipt !== undefined)
  if (t.receipt) {
    const r = t.receipt
    writeName(w.uint8(0), r.receiver)
    w.raw(fromHex(r.actDigest)).uint64(r.globalSequence).uint64(r.recvSequence).varuint32(r.authSequence.length)
    for (const [account, sequence] of r.authSequence) writeName(w, account).uint64(sequence)
    w.varuint32(r.codeSequence).varuint32(r.abiSequence)
  }
  writeName(w, t.receiver)
  writeAction(w, t.act)
  // context_free, elapsed (zeroed without trace-history-debug-mode), console (emptied)
  w.bool(t.contextFree).int64(0n).varuint32(0)
  w.varuint32(t.accountRamDeltas.length)
  for (const d of t.accountRamDeltas) writeName(w, d.account).int64(d.delta)
  w.bool(false).bool(false) // except, error_code
  w.bytes(t.returnValue)
}

function writeTransactionTrace(w: BinaryWriter, t: TransactionTrace): void {
  w.uint8(0).raw(fromHex(t.id)).uint8(t.status).uint32(t.cpuUsageUs).varuint32(t.netUsageWords)
  w.int64(0n).uint64(BigInt(t.netUsage)).bool(t.scheduled)
  w.varuint32(t.actionTraces.length)
  for (const a of t.actionTraces) writeActionTrace(w, a)
  w.bool(t.accountRamDelta !== undefined)
  if (t.accountRamDelta) writeName(w, t.accountRamDelta.account).int64(t.accountRamDelta.delta)
  w.bool(t.except !== undefined)
  // Without trace-history-debug-mode nodeos writes the placeholder "Y" for an exception.
  if (t.except !== undefined) w.string('Y')
  w.bool(false) // error_code
  w.bool(false) // failed_dtrx_trace
  w.bool(t.partial !== undefined)
  if (t.partial) {
    const p = t.partial
    w.uint8(0).uint32(p.expirationSec).uint16(p.refBlockNum).uint32(p.refBlockPrefix)
    w.varuint32(p.maxNetUsageWords).uint8(p.maxCpuUsageMs).varuint32(p.delaySec).varuint32(0)
    w.varuint32(p.signatures.length)
    for (const s of p.signatures) w.raw(signatureBytes(s))
    w.varuint32(p.contextFreeData.length)
    for (const d of p.contextFreeData) w.bytes(d)
  }
}

/** Packs a block's `transaction_trace[]` as SHiP sends it. */
export function encodeTraces(traces: readonly TransactionTrace[]): Uint8Array {
  const w = new BinaryWriter(512 * (traces.length + 1)).varuint32(traces.length)
  for (const t of traces) writeTransactionTrace(w, t)
  return w.finish()
}
