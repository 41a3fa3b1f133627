import type Database from 'better-sqlite3'
import type { StateReader } from '../port.ts'
import { permissionLinksFromRows, permissionsFromRows, pkText, u8 } from '../row-mapping.ts'
import { PERMISSIONS_AT, PERMISSION_LINKS_AT } from '../common-sql.ts'
import {
  CONTROLLED_ACCOUNTS,
  CONTROLLERS_INDEX_NAME,
  controlledAccountsSql,
  LINKS_AT_HEAD,
  TOKEN_HOLDINGS_OF,
  controllerPattern,
  holdingFromRow,
  linkAtHeadFromRow,
  linksAtHeadParams,
} from '../holdings-sql.ts'
import type { StorePosition } from '../types.ts'

/**
 * Scopes holding rows at a height. Every key ever written keeps exactly one current version (a
 * removal is a current tombstone), so the head index lists every scope the table ever had: the
 * next one is one seek past the last (a skip scan, whatever the number of keys and versions
 * below it). A scope is kept at its first key holding a row at the height, among the keys the
 * born index lists for it by then (a scope created after the height has none, and costs one
 * probe): a current version written by then is the version in force (so near head a scope costs
 * one probe), an older one is found by one backward seek. The cost follows the scopes (and the
 * keys of emptied scopes), not the versions: filtering every version on valid_to walked the
 * table's whole history.
 */
const SCOPES_AT_HEIGHT = `WITH RECURSIVE s(scope) AS (
    SELECT (SELECT h.scope FROM row_versions AS h INDEXED BY row_versions_head WHERE h.code = @code AND h.tbl = @table AND h.valid_to IS NULL ORDER BY h.scope LIMIT 1)
    UNION ALL
    SELECT (SELECT h.scope FROM row_versions AS h INDEXED BY row_versions_head WHERE h.code = @code AND h.tbl = @table AND h.scope > s.scope AND h.valid_to IS NULL ORDER BY h.scope LIMIT 1)
      FROM s WHERE s.scope IS NOT NULL
  )
  SELECT s.scope FROM s WHERE s.scope IS NOT NULL AND EXISTS (
    SELECT 1 FROM row_versions AS k INDEXED BY row_versions_born WHERE k.code = @code AND k.tbl = @table AND k.scope = s.scope AND k.valid_to IS NULL AND k.first_block <= @blockNum
      AND CASE WHEN k.block_num <= @blockNum THEN k.value IS NOT NULL ELSE
        (SELECT v.value IS NOT NULL FROM row_versions AS v WHERE v.code = k.code AND v.tbl = k.tbl AND v.scope = k.scope AND v.pk = k.pk AND v.block_num <= @blockNum ORDER BY v.block_num DESC LIMIT 1) END
  ) ORDER BY s.scope`

/**
 * A row read's answer as one JSON text of `[scope, pk, payer, hex value, block]` arrays. Building
 * a JS value per column costs better-sqlite3 more than the read itself (1,000 rows at head: 0.5 ms
 * to find them, 1.0 ms more for their 4,000 values, a Buffer each; 0.35 ms more as one text parsed
 * by JSON.parse). The texts come in the index's order: the head index's (scope, pk) at head, the
 * born index's (scope, first block, pk) at a past height; SQLite promises neither for an
 * aggregate, and the second is not the key order: inKeyOrder checks it, and sorts the rows when it
 * differs (an ORDER BY inside the aggregate sorts every key the read walks, tombstones included:
 * 15 % more on a 200,000-key scope).
 */
const ROW_JSON = (t: string) => `json_array(${t}.scope, ${t}.pk, ${t}.payer, hex(${t}.value), ${t}.block_num)`
/** Rows of scopes at head (`where` picks the scopes): the current versions. */
const ROWS_AT_HEAD = (
  where: string,
) => `SELECT json_group_array(${ROW_JSON('h')}) FROM row_versions AS h INDEXED BY row_versions_head
  WHERE h.code = @code AND h.tbl = @table AND ${where} AND h.valid_to IS NULL AND h.value IS NOT NULL`
/**
 * Rows of scopes at a height (`where` picks the scopes of `k`). Every key ever written keeps
 * exactly one current version (a removal is a current tombstone) carrying the block of the key's
 * first version, so the born index lists the keys a scope had by the height, and only those (a
 * scope of 200,000 keys at head and 1,000 at the height: 460 ms through the head index, 1.3 ms);
 * it lists them by first block, so inKeyOrder sorts them. A key whose current version was
 * written by the height has it in force, any other one's version is one backward seek on the
 * primary key, however many versions it has (a filter on valid_to would walk all of them). The
 * seek lands on the version's row (WITHOUT ROWID: the key's B-tree holds it), so the subquery
 * renders it there: one seek a key, not a seek for the block and a second one to fetch that
 * version (1.2 ms instead of 2.2 for 1,000 keys). A tombstone, or a key erased at the height,
 * renders as NULL, which group_concat skips.
 */
const ROWS_AT_HEIGHT = (
  where: string,
) => `SELECT '[' || coalesce(group_concat(CASE WHEN k.block_num <= @blockNum THEN CASE WHEN k.value IS NULL THEN NULL ELSE ${ROW_JSON('k')} END ELSE
    (SELECT CASE WHEN p.value IS NULL THEN NULL ELSE ${ROW_JSON('p')} END FROM row_versions AS p
      WHERE p.code = k.code AND p.tbl = k.tbl AND p.scope = k.scope AND p.pk = k.pk AND p.block_num <= @blockNum ORDER BY p.block_num DESC LIMIT 1) END, ','), '') || ']'
  FROM row_versions AS k INDEXED BY row_versions_born WHERE k.code = @code AND k.tbl = @table AND ${where} AND k.valid_to IS NULL AND k.first_block <= @blockNum`

type RowTuple = [scope: string, pk: string, payer: string, hex: string, blockNum: number]

/**
 * Rows by (scope, pk), as the port answers them: the statement's order, checked (one pass), sorted if it is another (a
 * past height's, by first block).
 */
function inKeyOrder(rows: RowTuple[]): RowTuple[] {
  for (let i = 1; i < rows.length; i++) {
    const a = rows[i - 1]
    const b = rows[i]
    if (a[0] > b[0] || (a[0] === b[0] && a[1] >= b[1]))
      return rows.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0))
  }
  return rows
}

/** Bytes from `hex(value)` text, as a Uint8Array (not a Buffer: the port's type). */
const fromHexText = (hex: string) => u8(Buffer.from(hex, 'hex'))

/** Contract state, ABIs, keys and permissions at any height, over the store's connection. */
export function createSqliteStateReader(db: Database.Database, position: () => StorePosition | undefined): StateReader {
  const s = {
    tableRowsOfScopes: db.prepare(ROWS_AT_HEIGHT('k.scope IN (SELECT value FROM json_each(@scopes))')).pluck(),
    tableRowsOfScopesHead: db.prepare(ROWS_AT_HEAD('h.scope IN (SELECT value FROM json_each(@scopes))')).pluck(),
    tableRowsAt: db.prepare(ROWS_AT_HEIGHT('k.scope = @scope')).pluck(),
    tableRowsHead: db.prepare(ROWS_AT_HEAD('h.scope = @scope')).pluck(),
    tableRow: db.prepare(
      'SELECT payer, value, block_num FROM row_versions WHERE code = ? AND tbl = ? AND scope = ? AND pk = ? AND block_num <= ? ORDER BY block_num DESC LIMIT 1',
    ),
    scopes: db.prepare(SCOPES_AT_HEIGHT),
    abiAt: db.prepare(
      'SELECT abi, block_num FROM abi_versions WHERE account = ? AND block_num <= ? ORDER BY block_num DESC LIMIT 1',
    ),
    keyAccounts: db.prepare(
      'SELECT owner, permission FROM key_versions WHERE public_key = ? AND block_num <= ? AND (valid_to IS NULL OR valid_to > ?) ORDER BY owner, permission',
    ),
    permissions: db.prepare(PERMISSIONS_AT),
    permissionLinks: db.prepare(PERMISSION_LINKS_AT),
    tokenHoldings: db.prepare(TOKEN_HOLDINGS_OF),
    linksAtHead: db.prepare(LINKS_AT_HEAD),
  }
  // Through the controllers index, or without it on a store no writer of this build has opened yet (it creates it).
  let controlledAccounts: Database.Statement | undefined
  const controlledAccountsStatement = () => {
    if (controlledAccounts) return controlledAccounts
    try {
      controlledAccounts = db.prepare(controlledAccountsSql(`INDEXED BY ${CONTROLLERS_INDEX_NAME}`)).pluck()
    } catch {
      return db.prepare(CONTROLLED_ACCOUNTS).pluck()
    }
    return controlledAccounts
  }
  const atHead = (blockNum: number) => {
    const head = position()
    return head !== undefined && blockNum >= head.head.blockNum
  }

  return {
    async tableRows({ code, table, scope, blockNum }) {
      const json = (
        atHead(blockNum)
          ? s.tableRowsHead.get({ code, table, scope })
          : s.tableRowsAt.get({ code, table, scope, blockNum })
      ) as string
      const rows = inKeyOrder(JSON.parse(json) as RowTuple[])
      const out = new Array<{ primaryKey: bigint; payer: string; value: Uint8Array; blockNum: number }>(rows.length)
      for (let i = 0; i < rows.length; i++) {
        const r = rows[i]
        out[i] = { primaryKey: BigInt(`0x${r[1]}`), payer: r[2], value: fromHexText(r[3]), blockNum: r[4] }
      }
      return out
    },
    async tableRowsOfScopes({ code, table, scopes, blockNum }) {
      const statement = atHead(blockNum) ? s.tableRowsOfScopesHead : s.tableRowsOfScopes
      const rows = inKeyOrder(
        JSON.parse(
          statement.get({ code, table, scopes: JSON.stringify([...new Set(scopes)]), blockNum }) as string,
        ) as RowTuple[],
      )
      return rows.map((r) => ({
        scope: r[0],
        primaryKey: BigInt(`0x${r[1]}`),
        payer: r[2],
        value: fromHexText(r[3]),
        blockNum: r[4],
      }))
    },
    async tableRow({ code, table, scope, primaryKey, blockNum }) {
      const row = s.tableRow.get(code, table, scope, pkText(primaryKey), blockNum) as
        { payer: string; value: Buffer | null; block_num: number } | undefined
      return row && row.value ? { payer: row.payer, value: u8(row.value), blockNum: row.block_num } : undefined
    },
    async scopes({ code, table, blockNum }) {
      return s.scopes.pluck().all({ code, table, blockNum }) as string[]
    },
    async abi({ account, blockNum }) {
      const row = s.abiAt.get(account, blockNum) as { abi: Buffer; block_num: number } | undefined
      return row && row.abi.length > 0 ? { abi: u8(row.abi), blockNum: row.block_num } : undefined
    },
    async keyAccounts({ publicKey, blockNum }) {
      return (s.keyAccounts.all(publicKey, blockNum, blockNum) as { owner: string; permission: string }[]).map((r) => ({
        account: r.owner,
        permission: r.permission,
      }))
    },
    async permissions({ account, blockNum }) {
      return permissionsFromRows(s.permissions.all(account, blockNum, blockNum) as Record<string, unknown>[])
    },
    async permissionLinks({ account, blockNum }) {
      return permissionLinksFromRows(s.permissionLinks.all(account, blockNum, blockNum) as Record<string, unknown>[])
    },
    async tokenHoldings({ account, limit }) {
      return (s.tokenHoldings.all(account, limit) as Record<string, unknown>[]).map(holdingFromRow)
    },
    async controlledAccounts({ account, limit }) {
      const pattern = controllerPattern(account)
      return pattern === undefined ? [] : (controlledAccountsStatement().all(pattern, limit) as string[])
    },
    async linksAtHead(args) {
      return (s.linksAtHead.all(...linksAtHeadParams(args)) as Record<string, unknown>[]).map(linkAtHeadFromRow)
    },
  }
}
