import type {
  AccountPermission,
  ActionRecord,
  ActionTraceDetails,
  BlockBatch,
  BlockHeaderDetails,
  BlockRecord,
  TransactionDetails,
  PermissionLevel,
  RowChange,
  Step,
  StepType,
  StorePosition,
  TransactionRecord,
} from './types.ts'
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
    ...(r.header ? { header: JSON.parse(r.header as string) as BlockHeaderDetails } : {}),
  }
}

/** A JSON column of details (`header`, `details`, `trace`): NULL on rows stored before schema version 5. */
export const detailsText = (details: object | undefined): string | null =>
  details === undefined ? null : JSON.stringify(details)

/**
 * An action's trace details as stored: a positional JSON array (elapsed, console, context-free as 0/1, except or null,
 * auth sequence, code sequence, abi sequence), under half the keyed object's bytes; ingest writes one per action trace.
 */
export function traceText(t: ActionTraceDetails | undefined): string | null {
  if (t === undefined) return null
  const except = t.except ?? null
  return JSON.stringify([
    t.elapsedUs,
    t.console,
    t.contextFree ? 1 : 0,
    except,
    t.authSequence,
    t.codeSequence,
    t.abiSequence,
  ])
}

/** Trace details from either stored form: the positional array, or the keyed object stores wrote before it. */
export function traceFromText(text: string): ActionTraceDetails {
  const parsed = JSON.parse(text) as unknown
  if (!Array.isArray(parsed)) return parsed as ActionTraceDetails
  const [elapsedUs, consoleText, contextFree, except, authSequence, codeSequence, abiSequence] = parsed as [
    number,
    string,
    number,
    string | null,
    ActionTraceDetails['authSequence'],
    number,
    number,
  ]
  // `except` is absent when there is none, as a keyed object read back without it.
  const head = { elapsedUs, console: consoleText, contextFree: contextFree === 1 }
  const tail = { authSequence, codeSequence, abiSequence }
  return (except === null ? { ...head, ...tail } : { ...head, except, ...tail }) as ActionTraceDetails
}

/** `actor@permission` pairs, comma-separated (names never hold `@` or `,`). */
export function authText(levels: readonly PermissionLevel[]): string {
  return levels.map((l) => `${l.actor}@${l.permission}`).join(',')
}

function parseAuth(text: string): PermissionLevel[] {
  if (text === '') return []
  return text.split(',').map((l) => {
    const [actor, permission] = l.split('@')
    return { actor, permission }
  })
}

/** `account:delta` pairs, comma-separated. */
export function ramText(deltas: ActionRecord['ramDeltas']): string {
  return deltas.map((d) => `${d.account}:${d.delta}`).join(',')
}

function parseRam(text: string): ActionRecord['ramDeltas'] {
  if (text === '') return []
  return text.split(',').map((d) => {
    const [account, delta] = d.split(':')
    return { account, delta: BigInt(delta) }
  })
}

/** The global sequence range of each transaction's actions, and of the whole block (null when it has none). */
export function sequenceRanges(batch: BlockBatch): {
  blockFirstSeq: number | null
  trx: Map<string, { firstSeq: number; count: number }>
} {
  const trx = new Map<string, { firstSeq: number; count: number }>()
  for (const a of batch.actions) {
    const range = trx.get(a.trxId)
    if (range) range.count++
    else trx.set(a.trxId, { firstSeq: a.globalSequence, count: 1 })
  }
  return { blockFirstSeq: batch.actions.length ? batch.actions[0].globalSequence : null, trx }
}

/**
 * The select-list item giving an action row (`a`) its transaction id. A correlated lookup, so
 * each action costs one index probe whatever the planner knows of the tables' sizes.
 */
export const TRX_ID_OF_ACTION =
  '(SELECT t.id FROM transactions t WHERE t.block_num = a.block_num AND t.block_index = a.trx_index) AS trx_id'

/** The `actions` row of either adapter as a record; `trx_id` comes from the transaction it belongs to. */
export function actionFromRow(r: DbRow, trxId: string = r.trx_id as string): ActionRecord {
  return {
    globalSequence: Number(r.global_seq),
    blockNum: Number(r.block_num),
    trxId,
    actionOrdinal: Number(r.ordinal),
    creatorActionOrdinal: Number(r.creator_ordinal),
    receiver: r.receiver as string,
    account: r.account as string,
    name: r.name as string,
    authorization: parseAuth(r.auth as string),
    data: u8(r.data),
    returnValue: u8(r.return_value),
    actDigest: r.act_digest as string,
    recvSequence: BigInt(r.recv_seq as string),
    ramDeltas: parseRam(r.ram as string),
    ...(r.trace ? { trace: traceFromText(r.trace as string) } : {}),
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
    ...(r.details ? { details: JSON.parse(r.details as string) as TransactionDetails } : {}),
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

/** Hex digits of a transaction id its integer key holds: 52 bits, a safe integer in JS and a BIGINT. */
const TRX_ID_KEY_DIGITS = 13

/**
 * The integer key transactions are indexed by: the id's first 13 hex digits. An index of 8-byte
 * keys instead of 64-character ids is a fifth of the size, so the random inserts of ingest dirty
 * fewer pages; a lookup compares the full id among the (practically never more than one) rows of a key.
 */
export const trxIdKey = (id: string): number =>
  parseInt(id.slice(0, TRX_ID_KEY_DIGITS).padEnd(TRX_ID_KEY_DIGITS, '0'), 16)

/** The `[low, high)` id keys of the ids starting with a hex prefix. */
export function trxIdKeyRange(prefix: string): [number, number] {
  const head = prefix.slice(0, TRX_ID_KEY_DIGITS)
  const span = 16 ** (TRX_ID_KEY_DIGITS - head.length)
  const low = parseInt(head, 16) * span
  return [low, low + span]
}

/** The exclusive upper bound of ids starting with a hex prefix (`ab` → `ac`, `af` → `ag`). */
export function prefixUpperBound(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1)
}

/** A row of ROW_CHANGES_OF_BLOCK as a change record. */
export function rowChangeFromRow(r: DbRow): RowChange {
  return {
    code: r.code as string,
    table: r.tbl as string,
    scope: r.scope as string,
    primaryKey: BigInt(`0x${r.pk as string}`),
    payer: r.payer as string,
    value: r.value === null ? undefined : u8(r.value),
    old:
      r.old_block === null || r.old_block === undefined
        ? undefined
        : { payer: r.old_payer as string, value: r.old_value === null ? undefined : u8(r.old_value) },
  }
}

/** A `steps` row as either driver returns it. */
export type StepRow = { seq: number | string; type: string; block_num: number | string; block_id: string }

export function stepFromRow(r: StepRow): Step {
  return { seq: Number(r.seq), type: r.type as StepType, blockNum: Number(r.block_num), blockId: r.block_id }
}

/** Byte order of names (ASCII), whatever the database's collation: both adapters answer in the same order. */
export const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** Rows of PERMISSIONS_AT as permissions, by name. */
export function permissionsFromRows(rows: DbRow[]): AccountPermission[] {
  return rows
    .map((r) => ({
      name: r.name as string,
      parent: r.parent as string,
      threshold: Number(r.threshold),
      keys: JSON.parse(r.keys as string) as AccountPermission['keys'],
      accounts: JSON.parse(r.accounts as string) as AccountPermission['accounts'],
      blockNum: Number(r.block_num),
    }))
    .sort((a, b) => byteOrder(a.name, b.name))
}

/** Rows of PERMISSION_LINKS_AT as links, by contract then action. */
export function permissionLinksFromRows(
  rows: DbRow[],
): { contract: string; action: string; permission: string; blockNum: number }[] {
  return rows
    .map((r) => ({
      contract: r.code as string,
      action: r.type as string,
      permission: r.required as string,
      blockNum: Number(r.block_num),
    }))
    .sort((a, b) => byteOrder(a.contract, b.contract) || byteOrder(a.action, b.action))
}

/** A primary key as the 16-digit hex text both stores key rows by. */
export const pkText = (pk: bigint) => pk.toString(16).padStart(16, '0')

/** The position in a head meta value (`num:id`) and a LIB one; undefined without a head. */
export function positionOf(head: string | null | undefined, lib: string | null | undefined): StorePosition | undefined {
  if (!head) return undefined
  const [num, id] = head.split(':')
  return { head: { blockNum: Number(num), blockId: id }, lib: Number(lib ?? 0) }
}
