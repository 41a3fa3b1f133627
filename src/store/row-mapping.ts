import type { ActionRecord, BlockRecord, TransactionRecord } from './types.ts'
import type { TimeComparator } from './port.ts'

/** A database row as both drivers return it (integers may come back as numbers, bigints or strings). */
type DbRow = Record<string, unknown>

/** A driver's Buffer as a Uint8Array view (no copy). */
export function u8(b: unknown): Uint8Array {
  const buffer = b as Buffer
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
}

/** The `blocks` row of either adapter as a record. */
export function blockFromRow(r: DbRow): BlockRecord {
  return {
    num: Number(r.num),
    id: r.id as string,
    previous: r.previous as string,
    timestampMs: Number(r.ts),
    producer: r.producer as string,
    transactionCount: Number(r.trx_count),
    actionCount: Number(r.action_count),
  }
}

/** The `actions` row of either adapter as a record. */
export function actionFromRow(r: DbRow): ActionRecord {
  return {
    globalSequence: BigInt(r.global_seq as string),
    blockNum: Number(r.block_num),
    trxId: r.trx_id as string,
    actionOrdinal: Number(r.ordinal),
    creatorActionOrdinal: Number(r.creator_ordinal),
    receiver: r.receiver as string,
    account: r.account as string,
    name: r.name as string,
    authorization: JSON.parse(r.authorization_json as string),
    data: u8(r.data),
    returnValue: u8(r.return_value),
    actDigest: r.act_digest as string,
    recvSequence: BigInt(r.recv_seq as string),
  }
}

/** The `transactions` row of either adapter as a record. */
export function transactionFromRow(r: DbRow): TransactionRecord {
  return {
    id: r.id as string,
    blockNum: Number(r.block_num),
    blockIndex: Number(r.block_index),
    status: Number(r.status),
    cpuUsageUs: Number(r.cpu_usage_us),
    netUsageWords: Number(r.net_usage_words),
    scheduled: r.scheduled === true || r.scheduled === 1,
  }
}

/** The WHERE/ORDER of a block-by-time lookup, the same SQL in both adapters (`?` is the time). */
export function blockByTimeClause(comparator: TimeComparator): string {
  switch (comparator) {
    case 'gt':
      return 'ts > ? ORDER BY ts ASC, num ASC'
    case 'gte':
      return 'ts >= ? ORDER BY ts ASC, num ASC'
    case 'lt':
      return 'ts < ? ORDER BY ts DESC, num DESC'
    case 'lte':
      return 'ts <= ? ORDER BY ts DESC, num DESC'
    case 'eq':
      return 'ts = ? ORDER BY num ASC'
  }
}

/** The exclusive upper bound of ids starting with a hex prefix (`ab` → `ac`, `af` → `ag`). */
export function prefixUpperBound(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1)
}
