import type { AbiCache } from '../antelope/index.ts'
import type { SnapshotReader } from '../store/index.ts'
import { assetParts } from './action-data.ts'

/**
 * Token balances as Hyperion's state routes answer them. A balances table is what the token standard writes: a table
 * named `accounts`, one scope per holder, whose row struct (in the contract's ABI at head) has a field `balance` of
 * type `asset`. A contract whose ABI lacks that shape, or a row that does not decode, holds no balance here.
 */

/** One balance of `get_tokens`: the asset's amount as a float and its precision, always given (0 included). */
export interface TokenBalance {
  readonly symbol: string
  readonly precision: number
  readonly amount: number
  readonly contract: string
}

/** An asset string (`1.0000 EOS`) as a balance's parts, with the precision its decimals give. */
export function balanceOf(asset: unknown): { symbol: string; precision: number; amount: number } | undefined {
  const parts = assetParts(asset)
  if (!parts) return undefined
  const dot = (asset as string).indexOf('.')
  const precision = dot < 0 ? 0 : (asset as string).indexOf(' ') - dot - 1
  return { symbol: parts.symbol, precision, amount: parts.amount }
}

/**
 * Decodes `accounts` rows of one contract at head: the row's `balance` asset, or undefined when the contract has no
 * ABI, its `accounts` table is not a balances table, or the row does not decode.
 */
export async function balanceDecoder(
  reader: Pick<SnapshotReader, 'abi'>,
  abis: AbiCache,
  contract: string,
  blockNum: number,
): Promise<(value: Uint8Array) => string | undefined> {
  const none = () => undefined
  const stored = await reader.abi({ account: contract, blockNum })
  const compiled = stored && abis.fromBinary(stored.abi)
  if (!compiled || !compiled.ok) return none
  const rowType = compiled.value.abi.tables.find((t) => t.name.toString() === 'accounts')?.type
  if (rowType === undefined) return none
  return (value) => {
    const decoded = compiled.value.decode(rowType, value)
    if (!decoded.ok || typeof decoded.value !== 'object' || decoded.value === null) return undefined
    const balance = (decoded.value as Record<string, unknown>).balance
    return typeof balance === 'string' && assetParts(balance) ? balance : undefined
  }
}

/**
 * Every balance `account` holds at head, in every contract, by contract then symbol (the primary key of a balances
 * row is its symbol code): the token-holdings index's rows, decoded with each contract's ABI at head. `window` bounds
 * the rows read (skip + limit of the page).
 */
export async function tokenBalances(
  reader: Pick<SnapshotReader, 'abi' | 'tokenHoldings'>,
  abis: AbiCache,
  args: { account: string; blockNum: number; window: number },
): Promise<TokenBalance[]> {
  const rows = await reader.tokenHoldings({ account: args.account, limit: args.window })
  const decoders = new Map<string, (value: Uint8Array) => string | undefined>()
  const out: TokenBalance[] = []
  for (const row of rows) {
    let decode = decoders.get(row.code)
    if (!decode) {
      decode = await balanceDecoder(reader, abis, row.code, args.blockNum)
      decoders.set(row.code, decode)
    }
    const balance = balanceOf(decode(row.value))
    if (balance) out.push({ ...balance, contract: row.code })
  }
  return out
}

/** A holder of `get_top_holders`: the scope, its balance's float amount and symbol, and the block that set it. */
export interface TopHolder {
  readonly owner: string
  readonly amount: number
  readonly symbol: string
  readonly blockNum: number
}

/**
 * The holders of a contract's token at head, largest balance first (then owner), optionally of one symbol; every scope
 * of its `accounts` table is read, at most `maxRows` rows (undefined: more than that, the answer would be partial).
 */
export async function topHolders(
  reader: Pick<SnapshotReader, 'abi' | 'scopes' | 'tableRowsOfScopes'>,
  abis: AbiCache,
  args: { contract: string; symbol: string | undefined; blockNum: number; maxRows: number },
): Promise<TopHolder[] | undefined> {
  const decode = await balanceDecoder(reader, abis, args.contract, args.blockNum)
  const scopes = await reader.scopes({ code: args.contract, table: 'accounts', blockNum: args.blockNum })
  if (scopes.length > args.maxRows) return undefined
  if (scopes.length === 0) return []
  const rows = await reader.tableRowsOfScopes({
    code: args.contract,
    table: 'accounts',
    scopes,
    blockNum: args.blockNum,
  })
  if (rows.length > args.maxRows) return undefined
  const holders: TopHolder[] = []
  for (const row of rows) {
    const balance = balanceOf(decode(row.value))
    if (!balance || (args.symbol !== undefined && balance.symbol !== args.symbol)) continue
    holders.push({ owner: row.scope, amount: balance.amount, symbol: balance.symbol, blockNum: row.blockNum })
  }
  return holders.sort((a, b) => b.amount - a.amount || (a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : 0))
}
