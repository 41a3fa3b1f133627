import type { SnapshotReader } from '../port.ts'
import { createCommonReads } from '../common-reads.ts'
import { blockFromRow, permissionLinksFromRows, permissionsFromRows, pkText, positionOf, u8 } from '../row-mapping.ts'
import { GET_META, PERMISSIONS_AT, PERMISSION_LINKS_AT, numbered } from '../common-sql.ts'
import {
  CONTROLLED_ACCOUNTS,
  LINKS_AT_HEAD,
  TOKEN_HOLDINGS_OF,
  controllerPattern,
  holdingFromRow,
  linkAtHeadFromRow,
  linksAtHeadParams,
} from '../holdings-sql.ts'
import type pg from 'pg'
import type { BlockRecord, StorePosition } from '../types.ts'
import type { Queryable } from './column-insert.ts'
import { createPostgresSession } from './postgres-runner.ts'

/**
 * Rows of scopes at a height (`where` picks the scopes of `k`): the keys they had by then, from the
 * born index (every key ever written keeps one current version, a removal being a tombstone, which
 * carries the block of the key's first version: a scope of 200,000 keys at head and 1,000 at the
 * height costs 1.5 ms, not 700 through the head index), sorted to key order; a key whose current
 * version was written by the height has it in force, any other one's version is one backward seek,
 * whatever the number of versions it has (sqlite-readers.ts ROWS_AT_HEIGHT). The first branch
 * costs nothing when every key changed since (5.4 ms either way for 1,000 keys) and saves the seek
 * of each key that did not (1.2 ms instead of 5.4 at head).
 */
const rowsAtHeight = (columns: string, where: string, order: string) => `SELECT ${columns} FROM row_versions k
  CROSS JOIN LATERAL (SELECT k.pk, k.payer, k.value, k.block_num WHERE k.block_num <= $4
    UNION ALL (SELECT p.pk, p.payer, p.value, p.block_num FROM row_versions p
      WHERE p.code = k.code AND p.tbl = k.tbl AND p.scope = k.scope AND p.pk = k.pk AND p.block_num <= $4 ORDER BY p.block_num DESC LIMIT 1) LIMIT 1) v
  WHERE k.code = $1 AND k.tbl = $2 AND ${where} AND k.valid_to IS NULL AND k.first_block <= $4 AND v.value IS NOT NULL ORDER BY ${order}`
const TABLE_ROWS_OF_SCOPES_AT_HEIGHT = rowsAtHeight(
  'k.scope, v.pk, v.payer, v.value, v.block_num',
  'k.scope = ANY($3::text[])',
  'k.scope, k.pk',
)
const TABLE_ROWS_AT_HEIGHT = rowsAtHeight('v.pk, v.payer, v.value, v.block_num', 'k.scope = $3', 'k.pk')
/**
 * Scopes holding rows at a height, from one walk of the table's current versions: every key ever
 * written keeps exactly one current version (a removal is a current tombstone) carrying the block
 * of its first version, so the walk lists every scope that had a key by the height, the keys first
 * written after it left out (on the born index: the chain's 200,000-key scope at a height where it
 * had 1,000 keys, 83 ms -> 13 ms; the same near head). A current version written by then is the
 * version in force, so most scopes are settled by the walk itself; a scope left open (no live key
 * written by then, and keys rewritten after the height) is decided by one backward seek per such
 * key, stopping at the first live one (a scalar subquery with LIMIT, so it stays a per-scope
 * probe). The cost follows the table's keys, not its history. A skip scan (a probe per scope, as
 * SQLite does: sqlite-readers.ts SCOPES_AT_HEIGHT) measured up to 9× slower here on a table of one
 * row per scope, a rescan costing PostgreSQL several times a streamed row. The probe's test on
 * the height sits inside a CASE so that no index can serve it: as `u.block_num > $3`, statistics
 * older than the last blocks (ANALYZE runs as tables double) made the planner read every version
 * written after the height once per scope through the block index (28 s instead of 15 ms).
 */
const SCOPES_AT_HEIGHT = `SELECT k.scope FROM row_versions k WHERE k.code = $1 AND k.tbl = $2 AND k.valid_to IS NULL AND k.first_block <= $3 GROUP BY k.scope
  HAVING bool_or(k.block_num <= $3 AND k.value IS NOT NULL)
    OR (bool_or(k.block_num > $3) AND (SELECT true FROM row_versions u WHERE u.code = $1 AND u.tbl = $2 AND u.scope = k.scope AND u.valid_to IS NULL AND u.first_block <= $3
      AND CASE WHEN u.block_num <= $3 THEN false ELSE
        (SELECT v.value IS NOT NULL FROM row_versions v WHERE v.code = $1 AND v.tbl = $2 AND v.scope = u.scope AND v.pk = u.pk AND v.block_num <= $3 ORDER BY v.block_num DESC LIMIT 1) END
      LIMIT 1))
  ORDER BY k.scope`
const POSITION_SQL =
  "SELECT (SELECT value FROM meta WHERE key = 'head') AS head, (SELECT value FROM meta WHERE key = 'lib') AS lib"
/**
 * A snapshot's first read: the position and the blocks at head and at LIB, which every state read
 * of the snapshot needs (resolveHeight), in one round trip (the LIB meta value is a number, the
 * head one `num:id`: the part before any colon is the block). Named, so planned once per
 * connection (planning it took 0.6–0.8 ms, more than running it); the block columns are listed
 * (blockFromRow's), as a named statement's result may not change shape when a column is added.
 */
const BLOCK_COLUMNS = (b: string) =>
  ['num', 'id', 'previous', 'ts', 'producer', 'trx_count', 'action_count', 'first_seq', 'header']
    .map((c) => `${b}.${c}`)
    .join(', ')
const POSITION_AND_BLOCKS_SQL = `SELECT m.key, m.value, ${BLOCK_COLUMNS('b')}
  FROM meta m LEFT JOIN blocks b ON b.num = split_part(m.value, ':', 1)::bigint WHERE m.key IN ('head', 'lib')`
const BLOCK_BY_NUM = `SELECT ${BLOCK_COLUMNS('b')} FROM blocks b WHERE b.num = $1`
const TABLE_ROWS_HEAD =
  'SELECT pk, payer, value, block_num FROM row_versions WHERE code = $1 AND tbl = $2 AND scope = $3 AND valid_to IS NULL AND value IS NOT NULL ORDER BY pk'
const TABLE_ROWS_OF_SCOPES_HEAD =
  'SELECT scope, pk, payer, value, block_num FROM row_versions WHERE code = $1 AND tbl = $2 AND scope = ANY($3::text[]) AND valid_to IS NULL AND value IS NOT NULL ORDER BY scope, pk'
const TABLE_ROW =
  'SELECT payer, value, block_num FROM row_versions WHERE code = $1 AND tbl = $2 AND scope = $3 AND pk = $4 AND block_num <= $5 ORDER BY block_num DESC LIMIT 1'
const ABI_AT =
  'SELECT abi, block_num FROM abi_versions WHERE account = $1 AND block_num <= $2 ORDER BY block_num DESC LIMIT 1'
const PERMISSIONS_SQL = numbered(PERMISSIONS_AT)
const PERMISSION_LINKS_SQL = numbered(PERMISSION_LINKS_AT)
const TOKEN_HOLDINGS_SQL = numbered(TOKEN_HOLDINGS_OF)
const CONTROLLED_ACCOUNTS_SQL = numbered(CONTROLLED_ACCOUNTS)
const LINKS_AT_HEAD_SQL = numbered(LINKS_AT_HEAD)

/** A meta row's value. */
export const meta = async (q: Queryable, key: string) =>
  (await q.query<{ value: string }>(numbered(GET_META), [key])).rows[0]?.value

/** The head and LIB the store's meta rows record; undefined for an empty store. One statement. */
export const position = async (q: Queryable): Promise<StorePosition | undefined> => {
  const r = (
    await q.query<{ head: string | null; lib: string | null }>({ name: 'antler_position', text: POSITION_SQL })
  ).rows[0]
  return positionOf(r?.head, r?.lib)
}

/**
 * Statements a read runs often, named so that each connection plans them once (PostgreSQL plans
 * an unnamed statement at every execution: 1.2 ms of the past-height row read's 17 ms). Their
 * rows come as arrays (no object per row).
 */
const named = (name: string, text: string, values: unknown[]) => ({
  name: `antler_${name}`,
  text,
  values,
  rowMode: 'array' as const,
})

type TableRowTuple = [pk: string, payer: string, value: Buffer, blockNum: string]

const tableRowOf = (r: TableRowTuple) => ({
  primaryKey: BigInt(`0x${r[0]}`),
  payer: r[1],
  value: u8(r[2]),
  blockNum: Number(r[3]),
})

/**
 * State, block and position reads over a pool (each read on its own) or one client. A client is a
 * snapshot's transaction (REPEATABLE READ: postgres-store.ts snapshot()), which cannot see the
 * position move: its first position read also fetches the blocks at head and at LIB, and both
 * are kept for the rest of the snapshot (a state read needs them to resolve its height), so a read
 * at head costs three statements (position and blocks, ABI, rows) besides BEGIN and COMMIT.
 */
export function createPostgresSnapshotReader(q: Queryable): SnapshotReader {
  const inSnapshot = typeof (q as pg.PoolClient).release === 'function'
  let snapshotPosition: Promise<StorePosition | undefined> | undefined
  const snapshotBlocks = new Map<number, BlockRecord>()
  const readPosition = (): Promise<StorePosition | undefined> => {
    if (!inSnapshot) return position(q)
    snapshotPosition ??= q
      .query({ name: 'antler_position_and_blocks', text: POSITION_AND_BLOCKS_SQL })
      .then((result) => {
        let head: string | undefined
        let lib: string | undefined
        for (const r of result.rows) {
          if (r.key === 'head') head = r.value
          else lib = r.value
          if (r.num !== null) snapshotBlocks.set(Number(r.num), blockFromRow(r))
        }
        return positionOf(head, lib)
      })
    return snapshotPosition
  }

  const { blockById, blockByTime } = createCommonReads(createPostgresSession(q))
  return {
    position: readPosition,
    async tableRows({ code, table, scope, blockNum }) {
      const head = await readPosition()
      const result =
        head && blockNum >= head.head.blockNum
          ? await q.query<TableRowTuple>(named('table_rows_head', TABLE_ROWS_HEAD, [code, table, scope]))
          : await q.query<TableRowTuple>(named('table_rows_at', TABLE_ROWS_AT_HEIGHT, [code, table, scope, blockNum]))
      const rows = result.rows
      const out = new Array<ReturnType<typeof tableRowOf>>(rows.length)
      for (let i = 0; i < rows.length; i++) out[i] = tableRowOf(rows[i])
      return out
    },
    async tableRowsOfScopes({ code, table, scopes, blockNum }) {
      const distinct = [...new Set(scopes)]
      const head = await readPosition()
      const result =
        head && blockNum >= head.head.blockNum
          ? await q.query<[string, ...TableRowTuple]>(
              named('table_rows_of_scopes_head', TABLE_ROWS_OF_SCOPES_HEAD, [code, table, distinct]),
            )
          : await q.query<[string, ...TableRowTuple]>(
              named('table_rows_of_scopes_at', TABLE_ROWS_OF_SCOPES_AT_HEIGHT, [code, table, distinct, blockNum]),
            )
      return result.rows.map((r) => ({
        scope: r[0],
        primaryKey: BigInt(`0x${r[1]}`),
        payer: r[2],
        value: u8(r[3]),
        blockNum: Number(r[4]),
      }))
    },
    async tableRow({ code, table, scope, primaryKey, blockNum }) {
      const r = (
        await q.query<[string, Buffer | null, string]>(
          named('table_row', TABLE_ROW, [code, table, scope, pkText(primaryKey), blockNum]),
        )
      ).rows[0]
      return r && r[1] ? { payer: r[0], value: u8(r[1]), blockNum: Number(r[2]) } : undefined
    },
    async scopes({ code, table, blockNum }) {
      return (await q.query<{ scope: string }>(SCOPES_AT_HEIGHT, [code, table, blockNum])).rows.map((r) => r.scope)
    },
    async abi({ account, blockNum }) {
      const r = (await q.query<[Buffer, string]>(named('abi_at', ABI_AT, [account, blockNum]))).rows[0]
      return r && r[0].length > 0 ? { abi: u8(r[0]), blockNum: Number(r[1]) } : undefined
    },
    async keyAccounts({ publicKey, blockNum }) {
      const rows = await q.query(
        'SELECT owner, permission FROM key_versions WHERE public_key = $1 AND block_num <= $2 AND (valid_to IS NULL OR valid_to > $2) ORDER BY owner, permission',
        [publicKey, blockNum],
      )
      return rows.rows.map((r) => ({ account: r.owner as string, permission: r.permission as string }))
    },
    async permissions({ account, blockNum }) {
      return permissionsFromRows((await q.query(PERMISSIONS_SQL, [account, blockNum, blockNum])).rows)
    },
    async permissionLinks({ account, blockNum }) {
      return permissionLinksFromRows((await q.query(PERMISSION_LINKS_SQL, [account, blockNum, blockNum])).rows)
    },
    async tokenHoldings({ account, limit }) {
      return (await q.query(TOKEN_HOLDINGS_SQL, [account, limit])).rows.map(holdingFromRow)
    },
    async controlledAccounts({ account, limit }) {
      const pattern = controllerPattern(account)
      if (pattern === undefined) return []
      return (await q.query<{ owner: string }>(CONTROLLED_ACCOUNTS_SQL, [pattern, limit])).rows.map((r) => r.owner)
    },
    async linksAtHead(args) {
      return (await q.query(LINKS_AT_HEAD_SQL, linksAtHeadParams(args))).rows.map(linkAtHeadFromRow)
    },
    async blockByNum(num) {
      if (snapshotPosition) {
        await snapshotPosition
        const known = snapshotBlocks.get(num)
        if (known) return known
      }
      const r = (await q.query({ name: 'antler_block_by_num', text: BLOCK_BY_NUM, values: [num] })).rows[0]
      return r && blockFromRow(r)
    },
    blockById,
    blockByTime,
  }
}
