import { BinaryReader, BinaryDecodeError, bigIntToName, blockSlotToMs, fromHex, toHex } from '../antelope/index.ts'
import { decodeShipType, type BlocksResult } from '../ship/index.ts'
import type { AbiChangeRecord, ActionRecord, BlockBatch, LinkChangeRecord, PermissionChangeRecord, RowChangeRecord, TransactionRecord } from '../store/index.ts'

type Variant<T> = [string, T]

interface ShipActionTrace {
  action_ordinal: number
  creator_action_ordinal: number
  receipt: Variant<{ receiver: string; act_digest: string; global_sequence: string | number; recv_sequence: string | number }> | null
  receiver: string
  act: { account: string; name: string; authorization: { actor: string; permission: string }[]; data: string }
  return_value?: string
}

interface ShipTransactionTrace {
  id: string
  status: number
  cpu_usage_us: number
  net_usage_words: number
  scheduled: boolean
  action_traces: Variant<ShipActionTrace>[]
}

interface ShipDelta {
  name: string
  rows: { present: boolean; data: string }[]
}

/** The header fields the store needs, read straight from the packed `signed_block`. */
function readHeader(block: Uint8Array): { timestampMs: number; producer: string; previous: string } {
  const r = new BinaryReader(block)
  const slot = r.uint32()
  const producer = bigIntToName(r.uint64())
  r.uint16()
  return { timestampMs: blockSlotToMs(slot), producer, previous: toHex(r.raw(32)) }
}

function decodeRow<T>(table: string, hex: string): T {
  return decodeShipType<Variant<T>>(table, fromHex(hex))[1]
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
  let traces: Variant<ShipTransactionTrace>[]
  let deltas: Variant<ShipDelta>[]
  try {
    traces = decodeShipType<Variant<ShipTransactionTrace>[]>('transaction_trace[]', result.traces)
    deltas = decodeShipType<Variant<ShipDelta>[]>('table_delta[]', result.deltas)
  } catch (error) {
    throw BinaryDecodeError(`block ${thisBlock.blockNum}: ${(error as Error).message}`, 0)
  }

  const transactions: TransactionRecord[] = []
  const actions: ActionRecord[] = []
  traces.forEach(([, t], blockIndex) => {
    transactions.push({ id: t.id, blockNum: thisBlock.blockNum, blockIndex, status: t.status, cpuUsageUs: t.cpu_usage_us, netUsageWords: t.net_usage_words, scheduled: t.scheduled })
    for (const [, a] of t.action_traces) {
      if (!a.receipt) continue
      const receipt = a.receipt[1]
      actions.push({
        globalSequence: BigInt(receipt.global_sequence),
        blockNum: thisBlock.blockNum,
        trxId: t.id,
        actionOrdinal: a.action_ordinal,
        creatorActionOrdinal: a.creator_action_ordinal,
        receiver: a.receiver,
        account: a.act.account,
        name: a.act.name,
        authorization: a.act.authorization,
        data: fromHex(a.act.data),
        returnValue: fromHex(a.return_value ?? ''),
        actDigest: receipt.act_digest,
        recvSequence: BigInt(receipt.recv_sequence),
      })
    }
  })

  const rows: RowChangeRecord[] = []
  const abis: AbiChangeRecord[] = []
  const permissions: PermissionChangeRecord[] = []
  const links: LinkChangeRecord[] = []
  for (const [, delta] of deltas) {
    for (const row of delta.rows) {
      switch (delta.name) {
        case 'contract_row': {
          const r = decodeRow<{ code: string; scope: string; table: string; primary_key: string | number; payer: string; value: string }>('contract_row', row.data)
          rows.push({ code: r.code, scope: r.scope, table: r.table, primaryKey: BigInt(r.primary_key), payer: r.payer, value: row.present ? fromHex(r.value) : undefined })
          break
        }
        case 'account': {
          if (!row.present) break
          const a = decodeRow<{ name: string; abi: string }>('account', row.data)
          abis.push({ account: a.name, abi: fromHex(a.abi) })
          break
        }
        case 'permission': {
          const p = decodeRow<{ owner: string; name: string; parent: string; auth: { threshold: number; keys: { key: string; weight: number }[]; accounts: { permission: { actor: string; permission: string }; weight: number }[] } }>('permission', row.data)
          permissions.push({ owner: p.owner, name: p.name, parent: p.parent, threshold: p.auth.threshold, keys: p.auth.keys, accounts: p.auth.accounts, removed: !row.present })
          break
        }
        case 'permission_link': {
          const l = decodeRow<{ account: string; code: string; message_type: string; required_permission: string }>('permission_link', row.data)
          links.push({ account: l.account, code: l.code, messageType: l.message_type, requiredPermission: row.present ? l.required_permission : undefined })
          break
        }
      }
    }
  }

  return {
    block: { num: thisBlock.blockNum, id: thisBlock.blockId, previous: header.previous, timestampMs: header.timestampMs, producer: header.producer, transactionCount: transactions.length, actionCount: actions.length },
    transactions,
    actions,
    rows,
    abis,
    permissions,
    links,
  }
}
