import { abiToJson, toHex, type AbiCache, type CompiledAbi, type KeyType } from '../antelope/index.ts'
import type { SnapshotReader } from '../store/index.ts'
import { AbiNotFoundError, TableNotFoundError } from './errors.ts'
import { keyRenderer } from './keys.ts'

/** How rows are rendered: dfuse's `json`, `key_type` and `with_block_num` parameters. */
export interface RowFormat {
  readonly json: boolean
  readonly keyType: KeyType
  readonly withBlockNum: boolean
}

/** A row on the wire (spec "Table row"): exactly one of `json` and `hex`; `error` with `hex` when decoding failed. */
export interface WireRow {
  key: string
  payer?: string
  json?: unknown
  hex?: string
  error?: string
  block?: number
}

/** A contract's ABI at a height, compiled, with the block that set it and the row type of the table asked. */
export interface TableAbi {
  readonly compiled: CompiledAbi
  readonly setAt: number
  readonly rowType: string
}

/**
 * The ABI that decodes `table` of `account` at `blockNum`. Without an ABI: `data_abi_not_found_error`;
 * without the table in it: `data_table_not_found_error` (dfuse's rules for json=true).
 */
export async function tableAbi(
  reader: Pick<SnapshotReader, 'abi'>,
  abis: AbiCache,
  args: { account: string; table: string; blockNum: number },
): Promise<TableAbi> {
  const stored = await reader.abi({ account: args.account, blockNum: args.blockNum })
  const compiled = stored && abis.fromBinary(stored.abi)
  if (!stored || !compiled || !compiled.ok) throw AbiNotFoundError({ account: args.account, blockNum: args.blockNum })
  const rowType = compiled.value.abi.tables.find((t) => t.name.toString() === args.table)?.type
  if (rowType === undefined) throw TableNotFoundError({ account: args.account, table: args.table })
  return { compiled: compiled.value, setAt: stored.blockNum, rowType }
}

/** The ABI as JSON (what `with_abi` answers). */
export const abiJson = (abi: TableAbi): unknown => abiToJson(abi.compiled.abi)

/** Renders stored rows per `format`; `abi` is required when `format.json`. */
export function rowRenderer(
  format: RowFormat,
  abi: TableAbi | undefined,
): (row: { primaryKey: bigint; payer: string; value: Uint8Array; blockNum: number }) => WireRow {
  const key = keyRenderer(format.keyType)
  const decode = format.json && abi ? abi : undefined
  return (row) => {
    const out: WireRow = { key: key(row.primaryKey) }
    if (row.payer !== '') out.payer = row.payer
    if (decode) {
      const decoded = decode.compiled.decode(decode.rowType, row.value)
      if (decoded.ok) out.json = decoded.value
      else {
        out.hex = toHex(row.value)
        out.error = `ABI from block ${decode.setAt}, row struct "${decode.rowType}", err: ${decoded.error}`
      }
    } else out.hex = toHex(row.value)
    if (format.withBlockNum && row.blockNum > 0) out.block = row.blockNum
    return out
  }
}
