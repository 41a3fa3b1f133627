import type { SnapshotReader } from '../port.ts'
import { blockByTimeClause, blockFromRow, permissionLinksFromRows, permissionsFromRows, u8 } from '../row-mapping.ts'
import { PERMISSIONS_AT, PERMISSION_LINKS_AT, numbered } from '../shared-sql.ts'
import type { StorePosition } from '../types.ts'
import type { Queryable } from './column-insert.ts'

/**
 * Rows of scopes at a height: their keys from the head index (every key ever written keeps one
 * current version, a removal being a tombstone), then one backward seek per key, whatever the
 * number of versions it has (sqlite-readers.ts tableRowsOfScopes).
 */
const TABLE_ROWS_AT_HEIGHT = `SELECT k.scope, v.pk, v.payer, v.value, v.block_num FROM row_versions k
  CROSS JOIN LATERAL (SELECT p.pk, p.payer, p.value, p.block_num FROM row_versions p
    WHERE p.code = k.code AND p.tbl = k.tbl AND p.scope = k.scope AND p.pk = k.pk AND p.block_num <= $4 ORDER BY p.block_num DESC LIMIT 1) v
  WHERE k.code = $1 AND k.tbl = $2 AND k.scope = ANY($3::text[]) AND k.valid_to IS NULL AND v.value IS NOT NULL ORDER BY k.scope, k.pk`
/**
 * Scopes holding rows at a height, from the head index: every key ever written keeps exactly one
 * current version (a removal is a current tombstone), so one walk of the table's current versions
 * lists every scope it ever had. A current version written by then is the version in force, so
 * most scopes are settled by the walk itself; a scope left open (no live key written by then, and
 * keys rewritten after the height) is decided by one backward seek per such key, stopping at the
 * first live one (a scalar subquery with LIMIT, so it stays a per-scope probe). The cost follows
 * the table's keys, not its history. A skip scan (a probe per scope, as SQLite does:
 * sqlite-readers.ts SCOPES_AT_HEIGHT) measured up to 9× slower here on a table of one row per
 * scope, a rescan costing PostgreSQL several times a streamed row. The probe's test on the
 * height sits inside a CASE so that no index can serve it: as `u.block_num > $3`, statistics
 * older than the last blocks (ANALYZE runs as tables double) made the planner read every version
 * written after the height once per scope through the block index (28 s instead of 15 ms).
 */
const SCOPES_AT_HEIGHT = `SELECT k.scope FROM row_versions k WHERE k.code = $1 AND k.tbl = $2 AND k.valid_to IS NULL GROUP BY k.scope
  HAVING bool_or(k.block_num <= $3 AND k.value IS NOT NULL)
    OR (bool_or(k.block_num > $3) AND (SELECT true FROM row_versions u WHERE u.code = $1 AND u.tbl = $2 AND u.scope = k.scope AND u.valid_to IS NULL
      AND CASE WHEN u.block_num <= $3 THEN false ELSE
        (SELECT v.value IS NOT NULL FROM row_versions v WHERE v.code = $1 AND v.tbl = $2 AND v.scope = u.scope AND v.pk = u.pk AND v.block_num <= $3 ORDER BY v.block_num DESC LIMIT 1) END
      LIMIT 1))
  ORDER BY k.scope`
const PERMISSIONS_SQL = numbered(PERMISSIONS_AT)
const PERMISSION_LINKS_SQL = numbered(PERMISSION_LINKS_AT)

/** A primary key as the 16-digit hex text both stores key rows by. */
export const pkText = (pk: bigint) => pk.toString(16).padStart(16, '0')

/** A meta row's value. */
export const meta = async (q: Queryable, key: string) => (await q.query<{ value: string }>('SELECT value FROM meta WHERE key = $1', [key])).rows[0]?.value

/** The head and LIB the store's meta rows record; undefined for an empty store. */
export const position = async (q: Queryable): Promise<StorePosition | undefined> => {
  const head = await meta(q, 'head')
  if (!head) return undefined
  const [num, id] = head.split(':')
  return { head: { blockNum: Number(num), blockId: id }, lib: Number((await meta(q, 'lib')) ?? 0) }
}

/** State, block and position reads over a pool (each read on its own) or one client (a snapshot's transaction). */
export function createPostgresSnapshotReader(q: Queryable): SnapshotReader {
  return {
    position: () => position(q),
    async tableRows({ code, table, scope, blockNum }) {
      const head = await position(q)
      const rows =
        head && blockNum >= head.head.blockNum
          ? await q.query('SELECT pk, payer, value, block_num FROM row_versions WHERE code = $1 AND tbl = $2 AND scope = $3 AND valid_to IS NULL AND value IS NOT NULL ORDER BY pk', [code, table, scope])
          : await q.query(TABLE_ROWS_AT_HEIGHT, [code, table, [scope], blockNum])
      return rows.rows.map((r) => ({ primaryKey: BigInt(`0x${r.pk}`), payer: r.payer, value: u8(r.value), blockNum: Number(r.block_num) }))
    },
    async tableRowsOfScopes({ code, table, scopes, blockNum }) {
      const distinct = [...new Set(scopes)]
      const head = await position(q)
      const rows =
        head && blockNum >= head.head.blockNum
          ? await q.query('SELECT scope, pk, payer, value, block_num FROM row_versions WHERE code = $1 AND tbl = $2 AND scope = ANY($3::text[]) AND valid_to IS NULL AND value IS NOT NULL ORDER BY scope, pk', [code, table, distinct])
          : await q.query(TABLE_ROWS_AT_HEIGHT, [code, table, distinct, blockNum])
      return rows.rows.map((r) => ({ scope: r.scope as string, primaryKey: BigInt(`0x${r.pk}`), payer: r.payer as string, value: u8(r.value), blockNum: Number(r.block_num) }))
    },
    async tableRow({ code, table, scope, primaryKey, blockNum }) {
      const r = (await q.query('SELECT payer, value, block_num FROM row_versions WHERE code = $1 AND tbl = $2 AND scope = $3 AND pk = $4 AND block_num <= $5 ORDER BY block_num DESC LIMIT 1', [code, table, scope, pkText(primaryKey), blockNum])).rows[0]
      return r && r.value ? { payer: r.payer, value: u8(r.value), blockNum: Number(r.block_num) } : undefined
    },
    async scopes({ code, table, blockNum }) {
      return (await q.query<{ scope: string }>(SCOPES_AT_HEIGHT, [code, table, blockNum])).rows.map((r) => r.scope)
    },
    async abi({ account, blockNum }) {
      const r = (await q.query('SELECT abi, block_num FROM abi_versions WHERE account = $1 AND block_num <= $2 ORDER BY block_num DESC LIMIT 1', [account, blockNum])).rows[0]
      return r && r.abi.length > 0 ? { abi: u8(r.abi), blockNum: Number(r.block_num) } : undefined
    },
    async keyAccounts({ publicKey, blockNum }) {
      const rows = await q.query('SELECT owner, permission FROM key_versions WHERE public_key = $1 AND block_num <= $2 AND (valid_to IS NULL OR valid_to > $2) ORDER BY owner, permission', [publicKey, blockNum])
      return rows.rows.map((r) => ({ account: r.owner as string, permission: r.permission as string }))
    },
    async permissions({ account, blockNum }) {
      return permissionsFromRows((await q.query(PERMISSIONS_SQL, [account, blockNum, blockNum])).rows)
    },
    async permissionLinks({ account, blockNum }) {
      return permissionLinksFromRows((await q.query(PERMISSION_LINKS_SQL, [account, blockNum, blockNum])).rows)
    },
    async blockByNum(num) {
      const r = (await q.query('SELECT * FROM blocks WHERE num = $1', [num])).rows[0]
      return r && blockFromRow(r)
    },
    async blockById(id) {
      const r = (await q.query('SELECT * FROM blocks WHERE id = $1', [id])).rows[0]
      return r && blockFromRow(r)
    },
    async blockByTime({ timeMs, comparator }) {
      const r = (await q.query(`SELECT * FROM blocks WHERE ${blockByTimeClause(comparator).replace('?', '$1')} LIMIT 1`, [timeMs])).rows[0]
      return r && blockFromRow(r)
    },
  }
}
