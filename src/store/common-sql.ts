/**
 * Statements both adapters run as they are (only the placeholder style differs: write `?`, the
 * PostgreSQL adapter numbers them).
 */

/**
 * Records a block's application: `redo` when the same block id was undone before, else `new`.
 * (Parameters: id, num, id.) A VALUES row, not INSERT … SELECT: SQLite materializes a SELECT that
 * reads the table it inserts into in a temporary table first, which made this 30 µs a block.
 */
export const INSERT_APPLY_STEP =
  "INSERT INTO steps (type, block_num, block_id) VALUES ((SELECT CASE WHEN EXISTS (SELECT 1 FROM steps WHERE block_id = ? AND type = 'undo') THEN 'redo' ELSE 'new' END), ?, ?)"

/** A meta row's value (parameter: key). */
export const GET_META = 'SELECT value FROM meta WHERE key = ?'

/** Sets a meta row (parameters: key, value). */
export const SET_META = 'INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'

/** Appends a step to the log (parameters: type, block number, block id). */
export const INSERT_STEP = 'INSERT INTO steps (type, block_num, block_id) VALUES (?, ?, ?)'

/** The stored blocks above a height, ascending (parameter: height). */
export const BLOCKS_ABOVE = 'SELECT num, id FROM blocks WHERE num > ? ORDER BY num'

/** Keeps the transactions of blocks about to be undone (parameter: first undone block). */
export const RECORD_FORKED_TRANSACTIONS =
  'INSERT INTO forked_transactions SELECT t.id, t.block_num, b.id FROM transactions t JOIN blocks b ON b.num = t.block_num WHERE t.block_num >= ? AND t.block_index >= 0 ON CONFLICT DO NOTHING'

/**
 * The rows a block changed, each with the version it closed (parameter: block): the key's version
 * just below, found by one backward seek rather than by walking every version of the key.
 */
export const ROW_CHANGES_OF_BLOCK = `SELECT n.code, n.tbl, n.scope, n.pk, n.payer, n.value, o.payer AS old_payer, o.value AS old_value, o.block_num AS old_block
  FROM row_versions n LEFT JOIN row_versions o ON o.code = n.code AND o.tbl = n.tbl AND o.scope = n.scope AND o.pk = n.pk
    AND o.block_num = (SELECT max(p.block_num) FROM row_versions p WHERE p.code = n.code AND p.tbl = n.tbl AND p.scope = n.scope AND p.pk = n.pk AND p.block_num < n.block_num)
  WHERE n.block_num = ? ORDER BY n.code, n.tbl, n.scope, n.pk`

/**
 * A transaction's latest record (parameters: trxIdKey(id), id): the latest block, and within a
 * block a cancelation (negative index) before the trace it cancels.
 */
export const LATEST_TRANSACTION_RECORD =
  'SELECT * FROM transactions WHERE id_key = ? AND id = ? ORDER BY block_num DESC, block_index ASC LIMIT 1'

/** A transaction id as stored: 64 lowercase hex digits. */
export const TRX_ID = /^[0-9a-f]{64}$/

/**
 * The global-sequence spans of a transaction's executions, ascending (parameters: trxIdKey(id),
 * id): a trace's actions are consecutive sequences, first_seq and action_count of them.
 */
export const TRANSACTION_SPANS =
  'SELECT first_seq, first_seq + action_count - 1 AS last_seq FROM transactions WHERE id_key = ? AND id = ? AND first_seq IS NOT NULL AND action_count > 0 ORDER BY first_seq'

/** Every record of a transaction in block order (parameters: trxIdKey(id), id). */
export const TRANSACTION_RECORDS =
  'SELECT * FROM transactions WHERE id_key = ? AND id = ? ORDER BY block_num, block_index'

/**
 * Transactions whose id starts with a hex prefix (parameters: id key range of trxIdKeyRange, prefix, its upper bound,
 * limit).
 */
export const TRANSACTIONS_BY_ID_PREFIX =
  'SELECT * FROM transactions WHERE id_key >= ? AND id_key < ? AND id >= ? AND id < ? ORDER BY id_key, id, block_num, block_index LIMIT ?'

/**
 * The permissions of an account in force at a height (parameters: owner, height, height), unsorted
 * (permissionsFromRows sorts them). An account has a few permissions, rarely changed: filtering
 * the versions of its own permissions is a short walk of the primary key.
 */
export const PERMISSIONS_AT =
  'SELECT name, parent, threshold, keys, accounts, block_num FROM permission_versions WHERE owner = ? AND block_num <= ? AND (valid_to IS NULL OR valid_to > ?) AND NOT removed'

/**
 * The permission links of an account in force at a height (parameters: account, height, height), unsorted
 * (permissionLinksFromRows).
 */
export const PERMISSION_LINKS_AT =
  'SELECT code, type, required, block_num FROM link_versions WHERE account = ? AND block_num <= ? AND (valid_to IS NULL OR valid_to > ?) AND required IS NOT NULL'

/** `?` placeholders as PostgreSQL's `$1, $2…`. */
export function numbered(sql: string): string {
  let n = 0
  return sql.replace(/\?/g, () => `$${++n}`)
}
