import { bigIntToName, parseKey, tableType, toHex } from '../../antelope/index.ts'
import type { Chain } from '../chain/chain.ts'
import { formatAsset, readAssetRow } from '../contracts/asset-format.ts'
import { chainErrors } from '../errors.ts'
import type { ContractRowRow } from '../state/rows.ts'
import { accountOf } from './account-routes.ts'
import { field, isName, isString, type ChainRouteContext } from './request.ts'

const MAX_TABLE_ROWS = 1000

/** Contract tables: `get_table_rows` (primary index only), `get_currency_balance` and `get_currency_stats`. */
export function tableRoutes({ chain, route, abiOf, decoder }: ChainRouteContext): void {
  route('/v1/chain/get_table_rows', (body) => {
    const code = field(body, 'code', isName, 'an account name')
    const table = field(body, 'table', isName, 'a table name')
    const scope = scopeOf(body.scope)
    const json = body.json === true || body.json === 'true'
    const keyType = typeof body.key_type === 'string' ? body.key_type : ''
    const index =
      body.index_position === undefined ||
      body.index_position === '' ||
      body.index_position === 1 ||
      body.index_position === '1' ||
      body.index_position === 'primary'
    if (!index) throw chainErrors.contractTableQuery('the devchain serves the primary index only (index_position 1)')
    const limit = Math.min(MAX_TABLE_ROWS, Math.max(1, Number(body.limit ?? 10) || 10))
    const lower = boundOf(body.lower_bound, keyType)
    const upper = boundOf(body.upper_bound, keyType)
    const abi = abiOf(code)
    const rowType = abi ? tableType(abi, table) : undefined
    if (json && abi && !rowType) throw chainErrors.contractTableQuery(`Table ${table} is not specified in the ABI`)
    let keys = tableRows(chain, code, scope, table)
    keys = keys.filter(
      (r) => (lower === undefined || r.primaryKey >= lower) && (upper === undefined || r.primaryKey <= upper),
    )
    if (body.reverse === true) keys.reverse()
    const page = keys.slice(0, limit)
    const rows = page.map((r) => {
      let data: unknown = toHex(r.value)
      if (json && abi && rowType) {
        const decoded = decoder.decode({ abi, type: rowType, data: r.value })
        data = decoded.ok ? decoded.value : toHex(r.value)
      }
      return body.show_payer === true ? { data, payer: r.payer } : data
    })
    const more = keys.length > limit
    return { rows, more, next_key: more ? keys[limit].primaryKey.toString() : '' }
  })

  route('/v1/chain/get_currency_balance', (body) => {
    const code = field(body, 'code', isName, 'an account name')
    const account = field(body, 'account', isName, 'an account name')
    accountOf(chain, code)
    const symbol = typeof body.symbol === 'string' ? body.symbol : undefined
    return tableRows(chain, code, account, 'accounts')
      .map((r) => formatAsset(readAssetRow(r.value)))
      .filter((text) => symbol === undefined || text.endsWith(` ${symbol}`))
  })
  route('/v1/chain/get_currency_stats', (body) => {
    const code = field(body, 'code', isName, 'an account name')
    const symbol = field(body, 'symbol', isString, 'a symbol code')
    let scope: string
    try {
      scope = bigIntToName(parseKey(symbol, 'symbol_code'))
    } catch {
      throw chainErrors.badRequest(`invalid symbol ${JSON.stringify(symbol)}`)
    }
    const out: Record<string, unknown> = {}
    for (const row of tableRows(chain, code, scope, 'stat')) {
      const abi = abiOf(code)
      const decoded = abi ? decoder.decode({ abi, type: 'currency_stats', data: row.value }) : undefined
      if (decoded?.ok) out[symbol] = decoded.value
    }
    return out
  })
}

/** The rows of a contract table in one scope, in primary key order. */
function tableRows(chain: Chain, code: string, scope: string, table: string): ContractRowRow[] {
  return chain.state.contractRowKeys(code, scope, table).map((k) => chain.state.get('contract_row', k)!)
}

/** A scope given as a name or as a number (nodeos takes both), as its name. */
function scopeOf(value: unknown): string {
  if (typeof value !== 'string' && typeof value !== 'number') throw chainErrors.badRequest('scope must be a string')
  const text = String(value)
  try {
    return bigIntToName(/^[0-9]+$/.test(text) ? parseKey(text, 'uint64') : parseKey(text, 'name'))
  } catch {
    throw chainErrors.badRequest(`invalid scope ${JSON.stringify(text)}`)
  }
}

/** A primary key bound given as a name or a number (a name when `key_type` is `name`); absent = unbounded. */
function boundOf(value: unknown, keyType: string): bigint | undefined {
  if (value === undefined || value === '' || value === null) return undefined
  const text = String(value)
  try {
    if (keyType === 'name') return parseKey(text, 'name')
    if (/^[0-9]+$/.test(text)) return parseKey(text, 'uint64')
    return parseKey(text, 'name')
  } catch {
    throw chainErrors.badRequest(`invalid bound ${JSON.stringify(text)}`)
  }
}
