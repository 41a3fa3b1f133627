import type { CompiledAbi } from '../antelope/index.ts'
import type { BlockRecord, RowChange } from '../store/index.ts'
import { hyperionTime } from './time.ts'

/**
 * One Hyperion delta document: a contract row as one block left it, `data` decoded with the contract's ABI at that
 * block. Hyperion keeps one such document per (block, code, scope, table, primary key).
 */
export interface HyperionDeltaDocument {
  /** The block's time, Hyperion's format (no `Z`). */
  timestamp: string
  /** 1 when the block wrote the row, 0 when it removed it (Hyperion never stores removals; Antler does). */
  present: 0 | 1
  code: string
  scope: string
  table: string
  /** The uint64 primary key in decimal, as a string. */
  primary_key: string
  payer: string
  block_num: number
  block_id: string
  data: unknown
}

/** Decodes a row's bytes with the ABI of `code` in force at the block of the change. */
export type RowDecoder = (code: string, table: string, value: Uint8Array) => unknown

/**
 * A `RowDecoder` over the ABIs of one block (`abiOf`, as the lifecycle's decoder sources give): the row decoded with
 * the table's row type; `{}` when the contract has no ABI, the ABI no such table, or the bytes do not decode (Hyperion
 * keeps no row it cannot decode either; its `data` is always an object).
 */
export function rowDecoderOf(abiOf: (account: string) => CompiledAbi | undefined): RowDecoder {
  return (code, table, value) => {
    const abi = abiOf(code)
    const rowType = abi?.abi.tables.find((t) => t.name.toString() === table)?.type
    const decoded = abi && rowType !== undefined ? abi.decode(rowType, value) : undefined
    return decoded?.ok ? decoded.value : {}
  }
}

/**
 * Hyperion's documents of one block's row changes, in the order the block reports them. A removal (value undefined)
 * becomes `present: 0` whose data and payer are the removed row's last ones when the change carries them (`old`), and
 * `{}` otherwise.
 */
export function deltaDocuments(
  changes: readonly RowChange[],
  block: BlockRecord,
  decodeRow: RowDecoder,
): HyperionDeltaDocument[] {
  const timestamp = hyperionTime(block.timestampMs)
  return changes.map((change) => {
    const present = change.value !== undefined ? 1 : 0
    const bytes = change.value ?? change.old?.value
    const payer = change.value !== undefined ? change.payer : change.payer || (change.old?.payer ?? '')
    const data =
      bytes === undefined ? {} : withTableProjection(change.table, decodeRow(change.code, change.table, bytes))
    return {
      timestamp,
      present,
      code: change.code,
      scope: change.scope,
      table: change.table,
      primary_key: change.primaryKey.toString(),
      payer,
      block_num: block.num,
      block_id: block.id,
      data,
    }
  })
}

/**
 * Hyperion's per-table additions merged into `data` (its `@<table>` projections): a token `accounts` row whose
 * `balance` is an asset string ("1.5000 EOS") gains `amount` (a float) and `symbol` (the symbol code).
 */
export function withTableProjection(table: string, data: unknown): unknown {
  if (table !== 'accounts' || !isRecord(data) || typeof data.balance !== 'string') return data
  const [amount, symbol] = data.balance.split(' ')
  if (amount === undefined || symbol === undefined) return data
  const value = Number.parseFloat(amount)
  if (!Number.isFinite(value)) return data
  return { ...data, amount: value, symbol }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
