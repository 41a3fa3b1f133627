import {
  BinaryReader,
  BinaryDecodeError,
  bigIntToName,
  blockSlotToMs,
  readName,
  readPublicKey,
  toHex,
} from '../antelope/index.ts'
import {
  decodeAccountRow,
  decodeContractRow,
  decodeFinalityData,
  decodeFinalityExtension,
  FINALITY_EXTENSION_ID,
  SAVANNA_SCHEDULE_VERSION,
  decodeGeneratedTransactionRow,
  decodePermissionLinkRow,
  decodePermissionRow,
  decodeTableDeltas,
  decodeTransactionTraces,
  type BlocksResult,
  type ActionTraceValue,
  type TableDeltaValue,
  type TransactionTraceValue,
} from '../ship/index.ts'
import {
  TRANSACTION_CANCELED,
  type AbiChangeRecord,
  type ActionRecord,
  type ActionTraceDetails,
  type BlockBatch,
  type BlockHeaderDetails,
  type DeferredCreation,
  type LinkChangeRecord,
  type PermissionChangeRecord,
  type RowChangeRecord,
  type TransactionDetails,
  type TransactionRecord,
} from '../store/index.ts'

/** A global sequence as the store keeps it (a number): refused beyond 2^53, which no chain reaches. */
function safeSequence(value: bigint, blockNum: number): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER))
    throw BinaryDecodeError(`block ${blockNum}: global sequence ${value} is beyond 2^53`, 0)
  return Number(value)
}

/** SHiP's transaction status of a transaction that waits to run (delayed or deferred). */
const STATUS_DELAYED = 3

/**
 * The block header, read straight from the packed `signed_block` (docs/ARCHITECTURE.md, "SHiP wire facts"). In a
 * proper Savanna block (schedule version 1 << 31, with a `finality_extension`) the header's `action_mroot`
 * is the finality tree root: it goes to `finalityMroot`, and `actionMroot` takes the real action
 * root from `finality_data` when the result carries it ('' when it does not).
 */
function readHeader(
  block: Uint8Array,
  finalityData: Uint8Array | undefined,
): { timestampMs: number; producer: string; previous: string; details: BlockHeaderDetails } {
  const r = new BinaryReader(block)
  const slot = r.uint32()
  const producer = bigIntToName(r.uint64())
  const confirmed = r.uint16()
  const previous = toHex(r.raw(32))
  const transactionMroot = toHex(r.raw(32))
  const actionMroot = toHex(r.raw(32))
  const scheduleVersion = r.uint32()
  let newProducers: BlockHeaderDetails['newProducers'] = null
  if (r.bool()) {
    const version = r.uint32()
    const producers: { producerName: string; blockSigningKey: string }[] = []
    for (let i = r.varuint32(); i > 0; i--)
      producers.push({ producerName: readName(r), blockSigningKey: readPublicKey(r) })
    newProducers = { version, producers }
  }
  const headerExtensions: { type: number; data: string }[] = []
  for (let i = r.varuint32(); i > 0; i--) {
    const type = r.uint16()
    const data = r.bytes()
    // A malformed finality extension is a malformed block (it is read only to be checked).
    if (type === FINALITY_EXTENSION_ID) decodeFinalityExtension(data)
    headerExtensions.push({ type, data: toHex(data) })
  }
  // Spring's `is_proper_svnn_block()`: transition blocks carry the extension but keep the legacy roots.
  if (scheduleVersion === SAVANNA_SCHEDULE_VERSION) {
    const realActionMroot = finalityData ? decodeFinalityData(finalityData).actionMroot : ''
    return {
      timestampMs: blockSlotToMs(slot),
      producer,
      previous,
      details: {
        confirmed,
        transactionMroot,
        actionMroot: realActionMroot,
        scheduleVersion,
        newProducers,
        headerExtensions,
        finalityMroot: actionMroot,
      },
    }
  }
  return {
    timestampMs: blockSlotToMs(slot),
    producer,
    previous,
    details: { confirmed, transactionMroot, actionMroot, scheduleVersion, newProducers, headerExtensions },
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: false })

function actionTraceDetails(a: ActionTraceValue): ActionTraceDetails {
  return {
    elapsedUs: Number(a.elapsed),
    console: a.console.length ? utf8.decode(a.console) : '',
    contextFree: a.contextFree,
    except: a.except,
    authSequence: a.receipt ? a.receipt.authSequence.map(([name, seq]) => [name, String(seq)] as const) : [],
    codeSequence: a.receipt?.codeSequence ?? 0,
    abiSequence: a.receipt?.abiSequence ?? 0,
  }
}

/** What the store keeps of a trace beyond its status and actions (the lifecycle shows it). */
function transactionDetails(t: TransactionTraceValue, deferred: DeferredCreation | undefined): TransactionDetails {
  const p = t.partial
  return {
    elapsedUs: Number(t.elapsed),
    netUsage: Number(t.netUsage),
    except: t.except,
    header: p && {
      expiration: p.expiration,
      refBlockNum: p.refBlockNum,
      refBlockPrefix: p.refBlockPrefix,
      maxNetUsageWords: p.maxNetUsageWords,
      maxCpuUsageMs: p.maxCpuUsageMs,
      delaySec: p.delaySec,
      transactionExtensions: p.transactionExtensions.map((e) => ({ type: e.type, data: toHex(e.data) })),
      signatures: p.signatures.map(toHex),
      contextFreeData: p.contextFreeData.map(toHex),
    },
    unreceipted: t.actionTraces
      .filter((a) => !a.receipt)
      .map((a) => ({
        actionOrdinal: a.actionOrdinal,
        creatorActionOrdinal: a.creatorActionOrdinal,
        receiver: a.receiver,
        account: a.act.account,
        name: a.act.name,
        authorization: a.act.authorization,
        data: toHex(a.act.data),
        trace: actionTraceDetails(a),
      })),
    failedDtrx: t.failedDtrxTrace && {
      id: t.failedDtrxTrace.id,
      status: t.failedDtrxTrace.status,
      except: t.failedDtrxTrace.except,
    },
    deferred,
  }
}

/** Deferred transactions the block created (`generated_transaction` rows it wrote), by id. */
function createdDeferred(deltas: readonly TableDeltaValue[]): Map<string, Omit<DeferredCreation, 'createdBy'>> {
  const out = new Map<string, Omit<DeferredCreation, 'createdBy'>>()
  for (const delta of deltas) {
    if (delta.name !== 'generated_transaction') continue
    for (const row of delta.rows) {
      if (!row.present) continue
      const g = decodeGeneratedTransactionRow(row.data)
      out.set(g.trxId, {
        sender: g.sender,
        senderId: String(g.senderId),
        payer: g.payer,
        packedTrx: toHex(g.packedTrx),
      })
    }
  }
  return out
}

/** The id of the delayed transaction a `canceldelay` names (data: canceling_auth, then trx_id). */
function canceledTransactionId(data: Uint8Array): string {
  const r = new BinaryReader(data)
  readName(r)
  readName(r)
  return toHex(r.raw(32))
}

/**
 * Turns one SHiP blocks result into the platform records of that block. Action data and rows stay
 * bytes (decoded later with the ABI of their height). Throws `binary_decode_error` on malformed
 * payloads, so nothing partial reaches the store.
 */
export function normalizeBlock(result: BlocksResult): BlockBatch {
  const thisBlock = result.thisBlock
  if (!thisBlock) throw BinaryDecodeError('blocks result without this_block', 0)
  if (!result.block || !result.traces || !result.deltas)
    throw BinaryDecodeError(`block ${thisBlock.blockNum} lacks block, traces or deltas (request all three)`, 0)
  let header: ReturnType<typeof readHeader>
  try {
    header = readHeader(result.block, result.finalityData)
  } catch (error) {
    throw BinaryDecodeError(`block ${thisBlock.blockNum}: header: ${(error as Error).message}`, 0)
  }
  let traces: TransactionTraceValue[]
  let deltas: TableDeltaValue[]
  try {
    traces = decodeTransactionTraces(result.traces)
    deltas = decodeTableDeltas(result.deltas)
  } catch (error) {
    throw BinaryDecodeError(`block ${thisBlock.blockNum}: ${(error as Error).message}`, 0)
  }

  let created: Map<string, Omit<DeferredCreation, 'createdBy'>>
  try {
    created = createdDeferred(deltas)
  } catch (error) {
    throw BinaryDecodeError(`block ${thisBlock.blockNum}: ${(error as Error).message}`, 0)
  }
  const transactions: TransactionRecord[] = []
  const actions: ActionRecord[] = []
  traces.forEach((t, blockIndex) => {
    const own = t.status === STATUS_DELAYED ? created.get(t.id) : undefined
    if (own) created.delete(t.id)
    const deferred = own && { ...own, createdBy: { trxId: t.id, actionOrdinal: 0 } }
    transactions.push({
      id: t.id,
      blockNum: thisBlock.blockNum,
      blockIndex,
      status: t.status,
      cpuUsageUs: t.cpuUsageUs,
      netUsageWords: t.netUsageWords,
      scheduled: t.scheduled,
      details: transactionDetails(t, deferred),
    })
    // Traces list actions by ordinal; the store keeps them in execution (global sequence) order.
    const executed = t.actionTraces
      .filter((a) => a.receipt)
      .sort((x, y) => (x.receipt!.globalSequence < y.receipt!.globalSequence ? -1 : 1))
    for (const a of executed) {
      if (!a.receipt) continue
      actions.push({
        globalSequence: safeSequence(a.receipt.globalSequence, thisBlock.blockNum),
        blockNum: thisBlock.blockNum,
        trxId: t.id,
        actionOrdinal: a.actionOrdinal,
        creatorActionOrdinal: a.creatorActionOrdinal,
        receiver: a.receiver,
        account: a.act.account,
        name: a.act.name,
        authorization: a.act.authorization,
        data: a.act.data,
        returnValue: a.returnValue,
        actDigest: a.receipt.actDigest,
        recvSequence: a.receipt.recvSequence,
        ramDeltas: a.accountRamDeltas,
        trace: actionTraceDetails(a),
      })
    }
  })

  // Cancelations are facts about other transactions, recorded in the canceling block.
  const canceled = actions.filter((a) => a.account === 'eosio' && a.name === 'canceldelay' && a.receiver === 'eosio')
  canceled.forEach((a, i) => {
    let id: string
    try {
      id = canceledTransactionId(a.data)
    } catch (error) {
      throw BinaryDecodeError(`block ${thisBlock.blockNum}: canceldelay data: ${(error as Error).message}`, 0)
    }
    transactions.push({
      id,
      blockNum: thisBlock.blockNum,
      blockIndex: -1 - i,
      status: TRANSACTION_CANCELED,
      cpuUsageUs: 0,
      netUsageWords: 0,
      scheduled: true,
    })
  })
  // Deferred transactions a contract scheduled have no trace in the creating block: a fact record
  // says they were created here, by the first action of the block the sender ran.
  let factIndex = -1 - canceled.length
  for (const [id, creation] of created) {
    const by = actions.find((a) => a.receiver === creation.sender)
    const deferred = { ...creation, createdBy: by && { trxId: by.trxId, actionOrdinal: by.actionOrdinal } }
    const details: TransactionDetails = {
      elapsedUs: 0,
      netUsage: 0,
      except: undefined,
      header: undefined,
      unreceipted: [],
      failedDtrx: undefined,
      deferred,
    }
    transactions.push({
      id,
      blockNum: thisBlock.blockNum,
      blockIndex: factIndex--,
      status: STATUS_DELAYED,
      cpuUsageUs: 0,
      netUsageWords: 0,
      scheduled: false,
      details,
    })
  }

  const rows: RowChangeRecord[] = []
  const abis: AbiChangeRecord[] = []
  const permissions: PermissionChangeRecord[] = []
  const links: LinkChangeRecord[] = []
  try {
    for (const delta of deltas) {
      for (const row of delta.rows) {
        switch (delta.name) {
          case 'contract_row': {
            const r = decodeContractRow(row.data)
            rows.push({
              code: r.code,
              scope: r.scope,
              table: r.table,
              primaryKey: r.primaryKey,
              payer: r.payer,
              value: row.present ? r.value : undefined,
            })
            break
          }
          case 'account': {
            if (row.present) {
              const a = decodeAccountRow(row.data)
              abis.push({ account: a.name, abi: a.abi })
            }
            break
          }
          case 'permission': {
            const p = decodePermissionRow(row.data)
            permissions.push({ ...p, removed: !row.present })
            break
          }
          case 'permission_link': {
            const l = decodePermissionLinkRow(row.data)
            links.push({
              account: l.account,
              code: l.code,
              messageType: l.messageType,
              requiredPermission: row.present ? l.requiredPermission : undefined,
            })
            break
          }
        }
      }
    }
  } catch (error) {
    throw BinaryDecodeError(`block ${thisBlock.blockNum}: ${(error as Error).message}`, 0)
  }

  return {
    block: {
      num: thisBlock.blockNum,
      id: thisBlock.blockId,
      previous: header.previous,
      timestampMs: header.timestampMs,
      producer: header.producer,
      transactionCount: traces.length,
      actionCount: actions.length,
      header: header.details,
    },
    transactions,
    actions,
    rows,
    abis,
    permissions,
    links,
  }
}
