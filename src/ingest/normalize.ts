import { BinaryReader, BinaryDecodeError, bigIntToName, blockSlotToMs, readName, toHex } from '../antelope/index.ts'
import {
  decodeAccountRow,
  decodeContractRow,
  decodePermissionLinkRow,
  decodePermissionRow,
  decodeTableDeltas,
  decodeTransactionTraces,
  type BlocksResult,
  type TableDeltaValue,
  type TransactionTraceValue,
} from '../ship/index.ts'
import { TRANSACTION_CANCELED, type AbiChangeRecord, type ActionRecord, type BlockBatch, type LinkChangeRecord, type PermissionChangeRecord, type RowChangeRecord, type TransactionRecord } from '../store/index.ts'

/** The header fields the store needs, read straight from the packed `signed_block`. */
function readHeader(block: Uint8Array): { timestampMs: number; producer: string; previous: string } {
  const r = new BinaryReader(block)
  const slot = r.uint32()
  const producer = bigIntToName(r.uint64())
  r.uint16()
  return { timestampMs: blockSlotToMs(slot), producer, previous: toHex(r.raw(32)) }
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
  if (!result.block || !result.traces || !result.deltas) throw BinaryDecodeError(`block ${thisBlock.blockNum} lacks block, traces or deltas (request all three)`, 0)
  const header = readHeader(result.block)
  let traces: TransactionTraceValue[]
  let deltas: TableDeltaValue[]
  try {
    traces = decodeTransactionTraces(result.traces)
    deltas = decodeTableDeltas(result.deltas)
  } catch (error) {
    throw BinaryDecodeError(`block ${thisBlock.blockNum}: ${(error as Error).message}`, 0)
  }

  const transactions: TransactionRecord[] = []
  const actions: ActionRecord[] = []
  traces.forEach((t, blockIndex) => {
    transactions.push({ id: t.id, blockNum: thisBlock.blockNum, blockIndex, status: t.status, cpuUsageUs: t.cpuUsageUs, netUsageWords: t.netUsageWords, scheduled: t.scheduled })
    // Traces list actions by ordinal; the store keeps them in execution (global sequence) order.
    const executed = t.actionTraces.filter((a) => a.receipt).sort((x, y) => (x.receipt!.globalSequence < y.receipt!.globalSequence ? -1 : 1))
    for (const a of executed) {
      if (!a.receipt) continue
      actions.push({
        globalSequence: a.receipt.globalSequence,
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
    transactions.push({ id, blockNum: thisBlock.blockNum, blockIndex: -1 - i, status: TRANSACTION_CANCELED, cpuUsageUs: 0, netUsageWords: 0, scheduled: true })
  })

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
            rows.push({ code: r.code, scope: r.scope, table: r.table, primaryKey: r.primaryKey, payer: r.payer, value: row.present ? r.value : undefined })
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
            links.push({ account: l.account, code: l.code, messageType: l.messageType, requiredPermission: row.present ? l.requiredPermission : undefined })
            break
          }
        }
      }
    }
  } catch (error) {
    throw BinaryDecodeError(`block ${thisBlock.blockNum}: ${(error as Error).message}`, 0)
  }

  return {
    block: { num: thisBlock.blockNum, id: thisBlock.blockId, previous: header.previous, timestampMs: header.timestampMs, producer: header.producer, transactionCount: traces.length, actionCount: actions.length },
    transactions,
    actions,
    rows,
    abis,
    permissions,
    links,
  }
}
