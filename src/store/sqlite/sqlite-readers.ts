import type Database from 'better-sqlite3'
import type { StateReader } from '../port.ts'
import { permissionLinksFromRows, permissionsFromRows, u8 } from '../row-mapping.ts'
import { PERMISSIONS_AT, PERMISSION_LINKS_AT } from '../shared-sql.ts'
import type { StorePosition } from '../types.ts'

const pkText = (pk: bigint) => pk.toString(16).padStart(16, '0')

/**
 * Scopes holding rows at a height. Every key ever written keeps exactly one current version (a
 * removal is a current tombstone), so the head index lists every scope the table ever had: the
 * next one is one seek past the last (a skip scan, whatever the number of keys and versions
 * below it). A scope is kept at its first key holding a row at the height: a current version
 * written by then is the version in force (so near head a scope costs one probe), an older one is
 * found by one backward seek. The cost follows the scopes (and the keys of emptied scopes), not
 * the versions: filtering every version on valid_to walked the table's whole history.
 */
const SCOPES_AT_HEIGHT = `WITH RECURSIVE s(scope) AS (
    SELECT (SELECT h.scope FROM row_versions AS h INDEXED BY row_versions_head WHERE h.code = @code AND h.tbl = @table AND h.valid_to IS NULL ORDER BY h.scope LIMIT 1)
    UNION ALL
    SELECT (SELECT h.scope FROM row_versions AS h INDEXED BY row_versions_head WHERE h.code = @code AND h.tbl = @table AND h.scope > s.scope AND h.valid_to IS NULL ORDER BY h.scope LIMIT 1)
      FROM s WHERE s.scope IS NOT NULL
  )
  SELECT s.scope FROM s WHERE s.scope IS NOT NULL AND EXISTS (
    SELECT 1 FROM row_versions AS k INDEXED BY row_versions_head WHERE k.code = @code AND k.tbl = @table AND k.scope = s.scope AND k.valid_to IS NULL
      AND CASE WHEN k.block_num <= @blockNum THEN k.value IS NOT NULL ELSE
        (SELECT v.value IS NOT NULL FROM row_versions AS v WHERE v.code = k.code AND v.tbl = k.tbl AND v.scope = k.scope AND v.pk = k.pk AND v.block_num <= @blockNum ORDER BY v.block_num DESC LIMIT 1) END
  ) ORDER BY s.scope`

/** Contract state, ABIs, keys and permissions at any height, over the store's connection. */
export function createSqliteStateReader(db: Database.Database, position: () => StorePosition | undefined): StateReader {
  const s = {
    // Rows of scopes at a height. Every key ever written keeps exactly one current version (a
    // removal is a current tombstone), so the head index lists a scope's keys; each key's version
    // at the height is then one backward seek, however many versions it has (a filter on valid_to
    // would walk all of them). The scopes travel as one JSON array: one statement for any number.
    tableRowsOfScopes: db.prepare(
      `SELECT k.scope, v.pk, v.payer, v.value, v.block_num FROM row_versions AS k INDEXED BY row_versions_head
         JOIN row_versions AS v ON v.code = k.code AND v.tbl = k.tbl AND v.scope = k.scope AND v.pk = k.pk AND v.block_num =
           (SELECT max(p.block_num) FROM row_versions AS p WHERE p.code = k.code AND p.tbl = k.tbl AND p.scope = k.scope AND p.pk = k.pk AND p.block_num <= @blockNum)
       WHERE k.code = @code AND k.tbl = @table AND k.scope IN (SELECT value FROM json_each(@scopes)) AND k.valid_to IS NULL AND v.value IS NOT NULL ORDER BY k.scope, k.pk`,
    ),
    tableRowsOfScopesHead: db.prepare(
      'SELECT scope, pk, payer, value, block_num FROM row_versions INDEXED BY row_versions_head WHERE code = @code AND tbl = @table AND scope IN (SELECT value FROM json_each(@scopes)) AND valid_to IS NULL AND value IS NOT NULL ORDER BY scope, pk',
    ),
    tableRowsHead: db.prepare('SELECT pk, payer, value, block_num FROM row_versions INDEXED BY row_versions_head WHERE code = ? AND tbl = ? AND scope = ? AND valid_to IS NULL AND value IS NOT NULL ORDER BY pk'),
    tableRow: db.prepare('SELECT payer, value, block_num FROM row_versions WHERE code = ? AND tbl = ? AND scope = ? AND pk = ? AND block_num <= ? ORDER BY block_num DESC LIMIT 1'),
    scopes: db.prepare(SCOPES_AT_HEIGHT),
    abiAt: db.prepare('SELECT abi, block_num FROM abi_versions WHERE account = ? AND block_num <= ? ORDER BY block_num DESC LIMIT 1'),
    keyAccounts: db.prepare('SELECT owner, permission FROM key_versions WHERE public_key = ? AND block_num <= ? AND (valid_to IS NULL OR valid_to > ?) ORDER BY owner, permission'),
    permissions: db.prepare(PERMISSIONS_AT),
    permissionLinks: db.prepare(PERMISSION_LINKS_AT),
  }
  const atHead = (blockNum: number) => {
    const head = position()
    return head !== undefined && blockNum >= head.head.blockNum
  }

  return {
    async tableRows({ code, table, scope, blockNum }) {
      const rows = (atHead(blockNum) ? s.tableRowsHead.all(code, table, scope) : s.tableRowsOfScopes.all({ code, table, scopes: JSON.stringify([scope]), blockNum })) as { pk: string; payer: string; value: Buffer; block_num: number }[]
      return rows.map((r) => ({ primaryKey: BigInt(`0x${r.pk}`), payer: r.payer, value: u8(r.value), blockNum: r.block_num }))
    },
    async tableRowsOfScopes({ code, table, scopes, blockNum }) {
      const statement = atHead(blockNum) ? s.tableRowsOfScopesHead : s.tableRowsOfScopes
      const rows = statement.all({ code, table, scopes: JSON.stringify([...new Set(scopes)]), blockNum }) as { scope: string; pk: string; payer: string; value: Buffer; block_num: number }[]
      return rows.map((r) => ({ scope: r.scope, primaryKey: BigInt(`0x${r.pk}`), payer: r.payer, value: u8(r.value), blockNum: r.block_num }))
    },
    async tableRow({ code, table, scope, primaryKey, blockNum }) {
      const row = s.tableRow.get(code, table, scope, pkText(primaryKey), blockNum) as { payer: string; value: Buffer | null; block_num: number } | undefined
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
      return (s.keyAccounts.all(publicKey, blockNum, blockNum) as { owner: string; permission: string }[]).map((r) => ({ account: r.owner, permission: r.permission }))
    },
    async permissions({ account, blockNum }) {
      return permissionsFromRows(s.permissions.all(account, blockNum, blockNum) as Record<string, unknown>[])
    },
    async permissionLinks({ account, blockNum }) {
      return permissionLinksFromRows(s.permissionLinks.all(account, blockNum, blockNum) as Record<string, unknown>[])
    },
  }
}
