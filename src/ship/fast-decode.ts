import { BinaryDecodeError, BinaryReader, readName, readPublicKey, toHex } from '../antelope/index.ts'
import { readCount, readVariant } from './bounded-reads.ts'

/**
 * Hand-written decoders for the SHiP payloads the indexer reads on every block
 * (`transaction_trace[]`, `table_delta[]` and the state rows it keeps), about an order of magnitude
 * faster than the generic ABI serializer. They read exactly the layouts of the SHiP ABI bundled in
 * ship-abi.json (Spring 1.x; traces and deltas are unchanged since Leap 5, and the `action_trace_v0`
 * of older nodes is read too), which guard.ts checks a node's ABI against, and they are checked
 * against wharfkit's decoding in tests. Every read is bounded; malformed input throws
 * `binary_decode_error`. The Savanna header and finality decoders are in finality-decode.ts.
 */

export interface PermissionLevelValue {
  readonly actor: string
  readonly permission: string
}

export interface ActionReceiptValue {
  readonly receiver: string
  readonly actDigest: string
  readonly globalSequence: bigint
  readonly recvSequence: bigint
  readonly authSequence: readonly (readonly [string, bigint])[]
  readonly codeSequence: number
  readonly abiSequence: number
}

export interface ActionTraceValue {
  readonly actionOrdinal: number
  readonly creatorActionOrdinal: number
  readonly receipt: ActionReceiptValue | undefined
  readonly receiver: string
  readonly act: {
    readonly account: string
    readonly name: string
    readonly authorization: readonly PermissionLevelValue[]
    readonly data: Uint8Array
  }
  readonly contextFree: boolean
  readonly accountRamDeltas: readonly { readonly account: string; readonly delta: bigint }[]
  readonly except: string | undefined
  readonly returnValue: Uint8Array
  /** Microseconds. */
  readonly elapsed: bigint
  /** The raw console bytes (rendered as UTF-8 only when a lifecycle shows them). */
  readonly console: Uint8Array
}

/** The header and signatures of a transaction trace's `partial_transaction_v0`. */
export interface PartialTransactionValue {
  /** Seconds since the epoch. */
  readonly expiration: number
  readonly refBlockNum: number
  readonly refBlockPrefix: number
  readonly maxNetUsageWords: number
  readonly maxCpuUsageMs: number
  readonly delaySec: number
  readonly transactionExtensions: readonly { readonly type: number; readonly data: Uint8Array }[]
  /** Each signature's packed bytes (type byte first), rendered to `SIG_…` text only when shown. */
  readonly signatures: readonly Uint8Array[]
  readonly contextFreeData: readonly Uint8Array[]
}

export interface TransactionTraceValue {
  readonly id: string
  readonly status: number
  readonly cpuUsageUs: number
  readonly netUsageWords: number
  readonly scheduled: boolean
  readonly actionTraces: readonly ActionTraceValue[]
  readonly except: string | undefined
  readonly failedDtrxTrace: TransactionTraceValue | undefined
  readonly partial: PartialTransactionValue | undefined
  /** Microseconds. */
  readonly elapsed: bigint
  readonly netUsage: bigint
}

export interface TableDeltaValue {
  readonly name: string
  readonly rows: readonly { readonly present: boolean; readonly data: Uint8Array }[]
}

function readSignatureBytes(r: BinaryReader): Uint8Array {
  const start = r.offset
  const type = r.uint8()
  r.raw(65)
  if (type === 2) {
    r.bytes()
    r.bytes()
  } else if (type > 2) throw BinaryDecodeError(`unknown signature type ${type}`, r.offset)
  return r.slice(start)
}

function readPartialTransaction(r: BinaryReader): PartialTransactionValue {
  readVariant(r, 'partial_transaction', 0)
  const expiration = r.uint32()
  const refBlockNum = r.uint16()
  const refBlockPrefix = r.uint32()
  const maxNetUsageWords = r.varuint32()
  const maxCpuUsageMs = r.uint8()
  const delaySec = r.varuint32()
  const transactionExtensions: { type: number; data: Uint8Array }[] = []
  for (let i = readCount(r, 3); i > 0; i--) transactionExtensions.push({ type: r.uint16(), data: r.bytes() })
  const signatures: Uint8Array[] = []
  for (let i = readCount(r, 66); i > 0; i--) signatures.push(readSignatureBytes(r))
  const contextFreeData: Uint8Array[] = []
  for (let i = readCount(r, 1); i > 0; i--) contextFreeData.push(r.bytes())
  return {
    expiration,
    refBlockNum,
    refBlockPrefix,
    maxNetUsageWords,
    maxCpuUsageMs,
    delaySec,
    transactionExtensions,
    signatures,
    contextFreeData,
  }
}

function readActionTrace(r: BinaryReader): ActionTraceValue {
  const version = readVariant(r, 'action_trace', 1)
  const actionOrdinal = r.varuint32()
  const creatorActionOrdinal = r.varuint32()
  let receipt: ActionReceiptValue | undefined
  if (r.bool()) {
    readVariant(r, 'action_receipt', 0)
    const receiver = readName(r)
    const actDigest = toHex(r.raw(32))
    const globalSequence = r.uint64()
    const recvSequence = r.uint64()
    const authSequence: (readonly [string, bigint])[] = []
    for (let i = readCount(r, 16); i > 0; i--) authSequence.push([readName(r), r.uint64()])
    receipt = {
      receiver,
      actDigest,
      globalSequence,
      recvSequence,
      authSequence,
      codeSequence: r.varuint32(),
      abiSequence: r.varuint32(),
    }
  }
  const receiver = readName(r)
  const account = readName(r)
  const name = readName(r)
  const authorization: PermissionLevelValue[] = []
  for (let i = readCount(r, 16); i > 0; i--) authorization.push({ actor: readName(r), permission: readName(r) })
  const data = r.bytes()
  const contextFree = r.bool()
  const elapsed = r.uint64()
  const console = r.bytes()
  const accountRamDeltas: { account: string; delta: bigint }[] = []
  for (let i = readCount(r, 16); i > 0; i--)
    accountRamDeltas.push({ account: readName(r), delta: BigInt.asIntN(64, r.uint64()) })
  const except = r.bool() ? r.string() : undefined
  if (r.bool()) r.uint64() // error_code
  const returnValue = version === 1 ? r.bytes() : new Uint8Array(0)
  return {
    actionOrdinal,
    creatorActionOrdinal,
    receipt,
    receiver,
    act: { account, name, authorization, data },
    contextFree,
    accountRamDeltas,
    except,
    returnValue,
    elapsed,
    console,
  }
}

function readTransactionTrace(r: BinaryReader, depth = 0): TransactionTraceValue {
  if (depth > 4) throw BinaryDecodeError('failed_dtrx_trace nested too deeply', r.offset)
  readVariant(r, 'transaction_trace', 0)
  const id = toHex(r.raw(32))
  const status = r.uint8()
  const cpuUsageUs = r.uint32()
  const netUsageWords = r.varuint32()
  const elapsed = r.uint64()
  const netUsage = r.uint64()
  const scheduled = r.bool()
  const actionTraces: ActionTraceValue[] = []
  for (let i = readCount(r, 40); i > 0; i--) actionTraces.push(readActionTrace(r))
  if (r.bool()) r.raw(16) // account_ram_delta
  const except = r.bool() ? r.string() : undefined
  if (r.bool()) r.uint64() // error_code
  const failedDtrxTrace = r.bool() ? readTransactionTrace(r, depth + 1) : undefined
  const partial = r.bool() ? readPartialTransaction(r) : undefined
  return {
    id,
    status,
    cpuUsageUs,
    netUsageWords,
    scheduled,
    actionTraces,
    except,
    failedDtrxTrace,
    partial,
    elapsed,
    netUsage,
  }
}

/** Decodes a packed `transaction_trace[]`. */
export function decodeTransactionTraces(data: Uint8Array): TransactionTraceValue[] {
  const r = new BinaryReader(data)
  const out: TransactionTraceValue[] = []
  for (let i = readCount(r, 50); i > 0; i--) out.push(readTransactionTrace(r))
  r.end()
  return out
}

/** Decodes a packed `table_delta[]`; rows stay bytes (decode the ones you keep with the readers below). */
export function decodeTableDeltas(data: Uint8Array): TableDeltaValue[] {
  const r = new BinaryReader(data)
  const out: TableDeltaValue[] = []
  for (let i = readCount(r, 3); i > 0; i--) {
    readVariant(r, 'table_delta', 0)
    const name = r.string()
    const rows: { present: boolean; data: Uint8Array }[] = []
    for (let j = readCount(r, 2); j > 0; j--) rows.push({ present: r.bool(), data: r.bytes() })
    out.push({ name, rows })
  }
  r.end()
  return out
}

function rowReader<T>(table: string, read: (r: BinaryReader) => T): (data: Uint8Array) => T {
  return (data) => {
    const r = new BinaryReader(data)
    readVariant(r, table, 0)
    const value = read(r)
    r.end()
    return value
  }
}

export const decodeContractRow = rowReader('contract_row', (r) => ({
  code: readName(r),
  scope: readName(r),
  table: readName(r),
  primaryKey: r.uint64(),
  payer: readName(r),
  value: r.bytes(),
}))

/** A deferred transaction waiting in the chain (`generated_transaction_v0`); `senderId` is a uint128. */
export const decodeGeneratedTransactionRow = rowReader('generated_transaction', (r) => ({
  sender: readName(r),
  senderId: r.uint64() | (r.uint64() << 64n),
  payer: readName(r),
  trxId: toHex(r.raw(32)),
  packedTrx: r.bytes(),
}))

export const decodeAccountRow = rowReader('account', (r) => ({
  name: readName(r),
  creationSlot: r.uint32(),
  abi: r.bytes(),
}))

export const decodePermissionLinkRow = rowReader('permission_link', (r) => ({
  account: readName(r),
  code: readName(r),
  messageType: readName(r),
  requiredPermission: readName(r),
}))

export const decodePermissionRow = rowReader('permission', (r) => {
  const owner = readName(r)
  const name = readName(r)
  const parent = readName(r)
  r.uint64() // last_updated
  const threshold = r.uint32()
  const keys: { key: string; weight: number }[] = []
  for (let i = readCount(r, 36); i > 0; i--) keys.push({ key: readPublicKey(r), weight: r.uint16() })
  const accounts: { permission: PermissionLevelValue; weight: number }[] = []
  for (let i = readCount(r, 18); i > 0; i--)
    accounts.push({ permission: { actor: readName(r), permission: readName(r) }, weight: r.uint16() })
  for (let i = readCount(r, 6); i > 0; i--) r.raw(6) // waits
  return { owner, name, parent, threshold, keys, accounts }
})
