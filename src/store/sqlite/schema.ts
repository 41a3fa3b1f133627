import { blocksDdl, keysDdl, versionIndexes } from '../common-schema.ts'
import { API_KEY_ADDED_COLUMNS } from '../api-keys-sql.ts'
import { portalTablesDdl } from '../portal-sql.ts'
import { webhookTablesDdl } from '../webhooks-sql.ts'

/**
 * SQLite schema. History that changes over time is kept as versions: a version is valid from the
 * block that wrote it (`block_num`) until the block that superseded it (`valid_to`, NULL while
 * current). State at height h = the versions with block_num <= h and (valid_to IS NULL or
 * valid_to > h); a removal is a version whose value is NULL (a tombstone). Undoing blocks >= n is
 * two statements per table: delete the versions written at or after n, and reopen the versions
 * those had closed (valid_to >= n). Contract rows, the largest table, carry no index on valid_to:
 * every row version closes exactly one predecessor of the same key in the same block, so undo
 * reopens by the keys of the versions it deletes.
 */
export const SQLITE_SCHEMA_VERSION = 8
/**
 * Versions a writer upgrades in place: 4 added `api_keys` and `secrets` (created by the IF NOT
 * EXISTS below), 5 the lifecycle columns, 6 `row_versions.first_block` (ADDED_COLUMNS, then
 * BACKFILL_FIRST_BLOCK and ROW_VERSIONS_BORN), 7 the webhook tables (created by the IF NOT EXISTS below), 8 the portal
 * tables (likewise) and the portal's columns of `api_keys` (ADDED_COLUMNS, then API_KEYS_ACCOUNT_INDEX).
 */
export const SQLITE_UPGRADABLE_VERSIONS: readonly number[] = [3, 4, 5, 6, 7]

/**
 * Columns appended after version 4 (NULL on rows written before). Version 5: the full block
 * header, a trace's details, an action's trace details (JSON). Version 6: a row version's
 * `first_block`, the block where its key got its first version (kept by a key erased and
 * written again), which ROW_VERSIONS_BORN indexes so that a read at a past height walks only the
 * keys written by then. Version 8: the portal's columns of an API key (its account, prefix, last use, limits).
 */
export const ADDED_COLUMNS: readonly {
  readonly table: string
  readonly column: string
  readonly type: 'TEXT' | 'INTEGER'
}[] = [
  { table: 'blocks', column: 'header', type: 'TEXT' },
  { table: 'transactions', column: 'details', type: 'TEXT' },
  { table: 'actions', column: 'trace', type: 'TEXT' },
  { table: 'row_versions', column: 'first_block', type: 'INTEGER' },
  ...API_KEY_ADDED_COLUMNS.map(({ column, integer }) => ({
    table: 'api_keys',
    column,
    type: integer ? ('INTEGER' as const) : ('TEXT' as const),
  })),
]

/**
 * Version 6's backfill of `first_block` (a store upgraded from 5 or older), on the versions that
 * are or may become current: the current ones (through the head index), and, for each key written
 * above LIB (`@lib`), its versions from the last one at or below LIB, which undo may reopen (undo
 * never cuts at or below LIB). Older closed versions keep NULL: no read or write uses them.
 */
export const BACKFILL_FIRST_BLOCK = {
  current: `UPDATE row_versions INDEXED BY row_versions_head SET first_block =
    (SELECT min(p.block_num) FROM row_versions AS p WHERE p.code = row_versions.code AND p.tbl = row_versions.tbl AND p.scope = row_versions.scope AND p.pk = row_versions.pk)
    WHERE valid_to IS NULL`,
  keysAboveLib:
    'SELECT DISTINCT code, tbl, scope, pk FROM row_versions INDEXED BY row_versions_block WHERE block_num > ?',
  reopenable: `UPDATE row_versions SET first_block =
      (SELECT min(block_num) FROM row_versions WHERE code = @code AND tbl = @tbl AND scope = @scope AND pk = @pk)
    WHERE code = @code AND tbl = @tbl AND scope = @scope AND pk = @pk AND first_block IS NULL AND block_num >=
      coalesce((SELECT max(block_num) FROM row_versions WHERE code = @code AND tbl = @tbl AND scope = @scope AND pk = @pk AND block_num <= @lib), 0)`,
}

export const SQLITE_SCHEMA = `
${blocksDdl('INTEGER')}
-- Transactions are stored in block order (their key grows with ingest) and found by id through
-- the integer key of its first 13 hex digits (row-mapping.ts trxIdKey): random inserts go to a
-- small index, not to a tree of 64-character ids.
CREATE TABLE IF NOT EXISTS transactions (
  block_num INTEGER NOT NULL, block_index INTEGER NOT NULL, id TEXT NOT NULL, id_key INTEGER NOT NULL, status INTEGER NOT NULL,
  cpu_usage_us INTEGER NOT NULL, net_usage_words INTEGER NOT NULL, scheduled INTEGER NOT NULL,
  first_seq INTEGER, action_count INTEGER NOT NULL, details TEXT,
  PRIMARY KEY (block_num, block_index)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS transactions_id ON transactions (id_key);

-- Actions carry no secondary index: a transaction's actions are one global_seq range (first_seq,
-- action_count), a block's are the range from its first_seq, and undo cuts at a global_seq.
CREATE TABLE IF NOT EXISTS actions (
  global_seq INTEGER PRIMARY KEY, block_num INTEGER NOT NULL, trx_index INTEGER NOT NULL, ordinal INTEGER NOT NULL,
  creator_ordinal INTEGER NOT NULL, receiver TEXT NOT NULL, account TEXT NOT NULL, name TEXT NOT NULL,
  auth TEXT NOT NULL, data BLOB NOT NULL, return_value BLOB NOT NULL, act_digest TEXT NOT NULL, recv_seq INTEGER NOT NULL, ram TEXT NOT NULL, trace TEXT
);

-- Search postings, chunked per term and write (see store/search/postings.ts).
CREATE TABLE IF NOT EXISTS postings (
  term_key INTEGER NOT NULL, last_seq INTEGER NOT NULL, first_seq INTEGER NOT NULL, entries BLOB NOT NULL,
  PRIMARY KEY (term_key, last_seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS postings_last_seq ON postings (last_seq);

CREATE TABLE IF NOT EXISTS row_versions (
  code TEXT NOT NULL, tbl TEXT NOT NULL, scope TEXT NOT NULL, pk TEXT NOT NULL, block_num INTEGER NOT NULL,
  valid_to INTEGER, payer TEXT NOT NULL, value BLOB, first_block INTEGER,
  PRIMARY KEY (code, tbl, scope, pk, block_num)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS row_versions_head ON row_versions (code, tbl, scope, pk) WHERE valid_to IS NULL;
CREATE INDEX IF NOT EXISTS row_versions_block ON row_versions (block_num);

CREATE TABLE IF NOT EXISTS abi_versions (
  account TEXT NOT NULL, block_num INTEGER NOT NULL, valid_to INTEGER, abi BLOB NOT NULL,
  PRIMARY KEY (account, block_num)
) WITHOUT ROWID;
${versionIndexes('abi_versions')}

CREATE TABLE IF NOT EXISTS permission_versions (
  owner TEXT NOT NULL, name TEXT NOT NULL, block_num INTEGER NOT NULL, valid_to INTEGER,
  parent TEXT NOT NULL, threshold INTEGER NOT NULL, keys TEXT NOT NULL, accounts TEXT NOT NULL, removed INTEGER NOT NULL,
  PRIMARY KEY (owner, name, block_num)
) WITHOUT ROWID;
${versionIndexes('permission_versions')}

CREATE TABLE IF NOT EXISTS key_versions (
  public_key TEXT NOT NULL, owner TEXT NOT NULL, permission TEXT NOT NULL, block_num INTEGER NOT NULL, valid_to INTEGER,
  PRIMARY KEY (public_key, owner, permission, block_num)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS key_versions_owner ON key_versions (owner, permission) WHERE valid_to IS NULL;
${versionIndexes('key_versions')}

CREATE TABLE IF NOT EXISTS link_versions (
  account TEXT NOT NULL, code TEXT NOT NULL, type TEXT NOT NULL, block_num INTEGER NOT NULL, valid_to INTEGER,
  required TEXT,
  PRIMARY KEY (account, code, type, block_num)
) WITHOUT ROWID;
${versionIndexes('link_versions')}

CREATE TABLE IF NOT EXISTS steps (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, type TEXT NOT NULL, block_num INTEGER NOT NULL, block_id TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS steps_block ON steps (block_id);

-- Transactions of undone blocks: history, so a lifecycle can say forked_out.
CREATE TABLE IF NOT EXISTS forked_transactions (
  id TEXT NOT NULL, block_num INTEGER NOT NULL, block_id TEXT NOT NULL, PRIMARY KEY (id, block_id)
) WITHOUT ROWID;

-- What forked-out blocks held (block-content.ts: the block, its transactions, actions and row
-- changes, JSON deflated), written by the undo that removes them, so streams can still send their
-- undo; pruned by block writes once LIB is FORKED_RETENTION_BLOCKS past them (by block_num).
CREATE TABLE IF NOT EXISTS forked_blocks (block_id TEXT PRIMARY KEY, block_num INTEGER NOT NULL, payload BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS forked_blocks_num ON forked_blocks (block_num);

-- API keys (only the SHA-256 of a key string is kept) and server secrets: written by \`antler keys\`, the portal
-- and at schema creation, read by the API. Revoked ids are one read of the partial index. A key's \`limits\` are
-- JSON; an account's keys are found by api_keys_account (API_KEYS_ACCOUNT_INDEX, created once the columns exist).
${keysDdl('INTEGER', 'BLOB')}

-- Webhook subscriptions, their delivery attempts and the delivery lease (webhooks-sql.ts): written by the API and
-- the dispatcher. An attempt's key is its rowid.
${webhookTablesDdl('INTEGER', 'INTEGER PRIMARY KEY')}

-- Portal accounts, sessions, the audit log, hourly key usage and the setup token (portal-sql.ts). An audit entry's
-- key is its rowid.
${portalTablesDdl('INTEGER', 'INTEGER PRIMARY KEY')}`
