import { AbiCache, abiToJson, formatRfc3339, toHex } from '../antelope/index.ts'
import type { SnapshotReader, SnapshotSource, TimeComparator } from '../store/index.ts'
import {
  AbiNotFoundError,
  BlockTimeNotFoundError,
  DecodingTableRowError,
  PublicKeyNotFoundError,
  RowNotFoundError,
  TableNotFoundError,
} from './errors.ts'
import { resolveHeight, type ReadHeight } from './height.ts'
import { abiJson, rowRenderer, tableAbi, type RowFormat, type TableAbi, type WireRow } from './rows.ts'

/** Where a state read answers: `blockNum` absent or 0 = head (LIB with `irreversibleOnly`). */
export interface HeightArgs {
  readonly blockNum?: number
  readonly irreversibleOnly?: boolean
}

/** A table read: names already validated and in their canonical (name) form. */
export interface TableArgs extends HeightArgs {
  readonly account: string
  readonly table: string
  readonly format: RowFormat
  /** `with_abi`: the ABI in force is part of the answer (when `format.json`, as dfuse did). */
  readonly withAbi: boolean
}

type Header = ReadHeight['header']
export type TableAnswer = Header & { abi?: unknown; rows: WireRow[] }
export type TableRowAnswer = Header & { row: WireRow }
export type MultiTableAnswer = Header & { tables: { account: string; scope: string; abi?: unknown; rows: WireRow[] }[] }
/** dfuse's `/v0/state/permission_links` answer: the header fields and the links in force, by contract then action. */
export type PermissionLinksAnswer = Header & {
  linked_permissions: { contract: string; action: string; permission_name: string }[]
}

/** The state endpoints' reads: each one snapshot of the store, rows decoded with the ABI in force at the height. */
export interface StateService {
  table(args: TableArgs & { scope: string }): Promise<TableAnswer>
  tableRow(args: TableArgs & { scope: string; primaryKey: bigint; keyText: string }): Promise<TableRowAnswer>
  tablesForScopes(args: TableArgs & { scopes: readonly string[] }): Promise<MultiTableAnswer>
  tablesForAccounts(
    args: Omit<TableArgs, 'account'> & { accounts: readonly string[]; scope: string },
  ): Promise<MultiTableAnswer>
  tableScopes(args: HeightArgs & { account: string; table: string }): Promise<{ block_num: number; scopes: string[] }>
  abi(
    args: HeightArgs & { account: string; json: boolean },
  ): Promise<{ block_num: number; account: string; abi: unknown }>
  binToJson(
    args: HeightArgs & { account: string; table: string; hexRows: readonly string[] },
  ): Promise<{ block_num: number; account: string; table: string; rows: unknown[] }>
  keyAccounts(args: HeightArgs & { publicKey: string }): Promise<{ block_num: number; account_names: string[] }>
  /** The permission links of `account` at the height (an empty `action` links the whole contract). */
  permissionLinks(args: HeightArgs & { account: string }): Promise<PermissionLinksAnswer>
  blockByTime(args: {
    timeMs: number
    comparator: TimeComparator
    timeText: string
  }): Promise<{ block: { id: string; num: number; time: string } }>
}

/** The ABI of a table read when rows are decoded: none when `json` is false. */
async function abiFor(
  reader: SnapshotReader,
  abis: AbiCache,
  args: { account: string; table: string; blockNum: number; json: boolean },
): Promise<TableAbi | undefined> {
  return args.json ? tableAbi(reader, abis, args) : undefined
}

const withAbiField = (args: TableArgs | Omit<TableArgs, 'account'>, abi: TableAbi | undefined) =>
  args.withAbi && abi ? { abi: abiJson(abi) } : {}

export function createStateService(deps: { store: SnapshotSource; abiCacheSize?: number }): StateService {
  const abis = new AbiCache(deps.abiCacheSize ?? 256)
  const read = <T>(fn: (reader: SnapshotReader) => Promise<T>) => deps.store.snapshot(fn)

  return {
    table: (args) =>
      read(async (reader) => {
        const height = await resolveHeight(reader, args)
        const abi = await abiFor(reader, abis, { ...args, blockNum: height.blockNum, json: args.format.json })
        const rows = await reader.tableRows({
          code: args.account,
          table: args.table,
          scope: args.scope,
          blockNum: height.blockNum,
        })
        return { ...height.header, ...withAbiField(args, abi), rows: rows.map(rowRenderer(args.format, abi)) }
      }),

    tableRow: (args) =>
      read(async (reader) => {
        const height = await resolveHeight(reader, args)
        const abi = await abiFor(reader, abis, { ...args, blockNum: height.blockNum, json: args.format.json })
        const row = await reader.tableRow({
          code: args.account,
          table: args.table,
          scope: args.scope,
          primaryKey: args.primaryKey,
          blockNum: height.blockNum,
        })
        if (!row)
          throw RowNotFoundError({
            account: args.account,
            scope: args.scope,
            table: args.table,
            primaryKey: args.keyText,
          })
        return { ...height.header, row: rowRenderer(args.format, abi)({ ...row, primaryKey: args.primaryKey }) }
      }),

    tablesForScopes: (args) =>
      read(async (reader) => {
        const height = await resolveHeight(reader, args)
        const abi = await abiFor(reader, abis, { ...args, blockNum: height.blockNum, json: args.format.json })
        const scopes = [...new Set(args.scopes)].sort()
        const rows = await reader.tableRowsOfScopes({
          code: args.account,
          table: args.table,
          scopes,
          blockNum: height.blockNum,
        })
        const byScope = new Map<string, WireRow[]>(scopes.map((s) => [s, []]))
        const render = rowRenderer(args.format, abi)
        for (const r of rows) byScope.get(r.scope)?.push(render(r))
        return {
          ...height.header,
          tables: scopes.map((scope) => ({
            account: args.account,
            scope,
            ...withAbiField(args, abi),
            rows: byScope.get(scope)!,
          })),
        }
      }),

    tablesForAccounts: (args) =>
      read(async (reader) => {
        const height = await resolveHeight(reader, args)
        const tables: MultiTableAnswer['tables'] = []
        for (const account of [...new Set(args.accounts)].sort()) {
          const abi = await abiFor(reader, abis, {
            account,
            table: args.table,
            blockNum: height.blockNum,
            json: args.format.json,
          })
          const rows = await reader.tableRows({
            code: account,
            table: args.table,
            scope: args.scope,
            blockNum: height.blockNum,
          })
          tables.push({
            account,
            scope: args.scope,
            ...withAbiField(args, abi),
            rows: rows.map(rowRenderer(args.format, abi)),
          })
        }
        return { ...height.header, tables }
      }),

    tableScopes: (args) =>
      read(async (reader) => {
        const height = await resolveHeight(reader, args)
        const scopes = await reader.scopes({ code: args.account, table: args.table, blockNum: height.blockNum })
        if (scopes.length === 0) throw TableNotFoundError({ account: args.account, table: args.table })
        return { block_num: height.blockNum, scopes }
      }),

    abi: (args) =>
      read(async (reader) => {
        const height = await resolveHeight(reader, args)
        const stored = await reader.abi({ account: args.account, blockNum: height.blockNum })
        const compiled = stored && abis.fromBinary(stored.abi)
        if (!stored || !compiled?.ok) throw AbiNotFoundError({ account: args.account, blockNum: height.blockNum })
        return {
          block_num: stored.blockNum,
          account: args.account,
          abi: args.json ? abiToJson(compiled.value.abi) : toHex(stored.abi),
        }
      }),

    binToJson: (args) =>
      read(async (reader) => {
        const height = await resolveHeight(reader, args)
        const abi = await tableAbi(reader, abis, { ...args, blockNum: height.blockNum })
        const rows = args.hexRows.map((hex) => {
          const decoded = abi.compiled.decode(abi.rowType, Buffer.from(hex, 'hex'))
          if (!decoded.ok) throw DecodingTableRowError({ data: hex, reason: decoded.error })
          return decoded.value
        })
        return { block_num: height.blockNum, account: args.account, table: args.table, rows }
      }),

    keyAccounts: (args) =>
      read(async (reader) => {
        const height = await resolveHeight(reader, args)
        const found = await reader.keyAccounts({ publicKey: args.publicKey, blockNum: height.blockNum })
        if (found.length === 0) throw PublicKeyNotFoundError({ publicKey: args.publicKey })
        return { block_num: height.blockNum, account_names: [...new Set(found.map((f) => f.account))].sort() }
      }),

    permissionLinks: (args) =>
      read(async (reader) => {
        const height = await resolveHeight(reader, args)
        const links = await reader.permissionLinks({ account: args.account, blockNum: height.blockNum })
        return {
          ...height.header,
          linked_permissions: links.map((l) => ({
            contract: l.contract,
            action: l.action,
            permission_name: l.permission,
          })),
        }
      }),

    blockByTime: (args) =>
      read(async (reader) => {
        const block = await reader.blockByTime({ timeMs: args.timeMs, comparator: args.comparator })
        if (!block) throw BlockTimeNotFoundError({ time: args.timeText, comparator: args.comparator })
        return { block: { id: block.id, num: block.num, time: formatRfc3339(block.timestampMs) } }
      }),
  }
}
