import { u8 } from './row-mapping.ts'

type DbRow = Record<string, unknown>
/**
 * Reverse lookups at head that Hyperion's state routes need (docs/HYPERION.md), as statements both adapters run
 * (write `?`; the PostgreSQL adapter numbers them): an account's token holdings, the accounts an account controls,
 * and permission links across accounts.
 */

/**
 * The token-holdings index: the current, present versions of every table named `accounts` (the token standard's
 * balances table, one scope per holder), by holder then contract. The database keeps it with the row versions it
 * indexes, so applying a block adds the new versions and drops the ones they close, and undoing blocks (deleting
 * versions, reopening closed ones) restores it: fork-correct with no write of its own. Only `accounts` rows are in
 * it, so ingest pays an index entry per balance change (a transfer: two), nothing for other tables. Created with
 * IF NOT EXISTS at every writer's open, so an existing store gets it too.
 */
export const TOKEN_HOLDINGS_INDEX =
  "CREATE INDEX IF NOT EXISTS row_versions_holdings ON row_versions (scope, code, pk) WHERE tbl = 'accounts' AND valid_to IS NULL AND value IS NOT NULL"

/** The index's name, for adapters that check whether it exists before creating it. */
export const TOKEN_HOLDINGS_INDEX_NAME = 'row_versions_holdings'

/**
 * The `accounts` rows of one scope at head, in every contract, by contract then primary key (parameters: scope,
 * limit). The predicate repeats the index's, so both databases read the partial index.
 */
export const TOKEN_HOLDINGS_OF = `SELECT code, pk, payer, value, block_num FROM row_versions
  WHERE tbl = 'accounts' AND scope = ? AND valid_to IS NULL AND value IS NOT NULL ORDER BY code, pk LIMIT ?`

/**
 * The current permissions that list accounts in their authority (most list keys only), with those accounts: what
 * CONTROLLED_ACCOUNTS walks, so its cost follows the delegated permissions, not every permission of the chain.
 * Permission changes are rare, so ingest hardly pays for it; created at a writer's open like TOKEN_HOLDINGS_INDEX.
 */
export const CONTROLLERS_INDEX =
  "CREATE INDEX IF NOT EXISTS permission_versions_delegated ON permission_versions (owner, accounts) WHERE valid_to IS NULL AND NOT removed AND accounts <> '[]'"

/** CONTROLLERS_INDEX's name. */
export const CONTROLLERS_INDEX_NAME = 'permission_versions_delegated'

/**
 * Accounts having a current permission whose authority lists an account (parameters: the quoted actor fragment
 * `"actor":"<name>"`, limit). Authorities are kept as JSON text; names hold no LIKE wildcard (`_`, `%`), so a
 * substring match on the quoted actor is exact. The predicate repeats CONTROLLERS_INDEX's, which covers the read;
 * `indexedBy` is SQLite's `INDEXED BY` clause naming it (without statistics SQLite would pick the valid_to index,
 * which walks every current permission), '' on PostgreSQL.
 */
export const controlledAccountsSql = (indexedBy = '') => `SELECT DISTINCT owner FROM permission_versions ${indexedBy}
  WHERE valid_to IS NULL AND NOT removed AND accounts <> '[]' AND accounts LIKE ? ORDER BY owner LIMIT ?`

export const CONTROLLED_ACCOUNTS = controlledAccountsSql()

/**
 * Permission links in force at head, over every account, each filter optional (parameters: account twice, code
 * twice, action twice, permission twice, limit), newest first.
 */
export const LINKS_AT_HEAD = `SELECT account, code, type, required, block_num FROM link_versions
  WHERE valid_to IS NULL AND required IS NOT NULL
    AND (CAST(? AS TEXT) IS NULL OR account = ?) AND (CAST(? AS TEXT) IS NULL OR code = ?)
    AND (CAST(? AS TEXT) IS NULL OR type = ?) AND (CAST(? AS TEXT) IS NULL OR required = ?)
  ORDER BY block_num DESC, account, code, type LIMIT ?`

/** The arguments of LINKS_AT_HEAD: each filter twice (absent: NULL), then the limit. */
export function linksAtHeadParams(args: {
  account?: string
  code?: string
  action?: string
  permission?: string
  limit: number
}): unknown[] {
  const pair = (v: string | undefined) => [v ?? null, v ?? null]
  return [...pair(args.account), ...pair(args.code), ...pair(args.action), ...pair(args.permission), args.limit]
}

/** A LINKS_AT_HEAD row as the port answers it. */
export const linkAtHeadFromRow = (r: DbRow) => ({
  account: r.account as string,
  contract: r.code as string,
  action: r.type as string,
  permission: r.required as string,
  blockNum: Number(r.block_num),
})

/** A TOKEN_HOLDINGS_OF row as the port answers it. */
export const holdingFromRow = (r: DbRow) => ({
  code: r.code as string,
  primaryKey: BigInt(`0x${r.pk as string}`),
  payer: r.payer as string,
  value: u8(r.value),
  blockNum: Number(r.block_num),
})

/**
 * CONTROLLED_ACCOUNTS' pattern for an account: its name as an authority's actor; undefined for a string that is no
 * account name (it could hold a LIKE wildcard, and no authority lists it).
 */
export const controllerPattern = (account: string): string | undefined =>
  /^[a-z1-5.]{1,13}$/.test(account) ? `%"actor":"${account}"%` : undefined
