import { blocksDdl, keysDdl, versionIndexes } from '../common-schema.ts'
import { API_KEY_ADDED_COLUMNS } from '../api-keys-sql.ts'
import { portalTablesDdl } from '../portal-sql.ts'
import { webhookTablesDdl } from '../webhooks-sql.ts'

/**
 * PostgreSQL schema: the same version model as SQLite (see sqlite/schema.ts), with the history
 * tables that grow with the chain (transactions, actions, row_versions) partitioned by block range,
 * one partition per `PARTITION_BLOCKS` blocks, created as blocks arrive.
 */
export const POSTGRES_SCHEMA_VERSION = 8
/**
 * Versions a writer upgrades in place: 4 added `api_keys` and `secrets`, 5 the lifecycle columns
 * (POSTGRES_MIGRATION_5), 6 `row_versions.first_block` (POSTGRES_MIGRATION_6, then
 * ROW_VERSIONS_BORN), 7 the webhook tables, 8 the portal tables and the portal's columns of `api_keys`
 * (POSTGRES_MIGRATION_8, then API_KEYS_ACCOUNT_INDEX); the IF NOT EXISTS below creates what is missing.
 */
export const POSTGRES_UPGRADABLE_VERSIONS: readonly number[] = [3, 4, 5, 6, 7]

/**
 * Version 5's columns (NULL on rows written before): the full block header, a trace's details, an action's trace
 * details (JSON). Metadata-only on PostgreSQL 11+.
 */
export const POSTGRES_MIGRATION_5 = `
ALTER TABLE blocks ADD COLUMN IF NOT EXISTS header TEXT;
ALTER TABLE transactions ADD COLUMN IF NOT EXISTS details TEXT;
ALTER TABLE actions ADD COLUMN IF NOT EXISTS trace TEXT;
`
/**
 * Version 6's column: a row version's `first_block`, the block where its key got its first version
 * (kept by a key erased and written again; sqlite/schema.ts ADDED_COLUMNS), filled (`$1`: LIB) on
 * the versions that are or may become current: the current ones, and, for each key written above
 * LIB, its versions from the last one at or below LIB, which undo may reopen (undo never cuts at or
 * below LIB). Older closed versions keep NULL: no read or write uses them. The partitions follow
 * the ALTER. The UPDATEs rewrite those tuples: open-pool.ts vacuums the table after the commit.
 */
export const POSTGRES_MIGRATION_6 = [
  'ALTER TABLE row_versions ADD COLUMN IF NOT EXISTS first_block BIGINT',
  `UPDATE row_versions v SET first_block = (SELECT min(p.block_num) FROM row_versions p WHERE p.code = v.code AND p.tbl = v.tbl AND p.scope = v.scope AND p.pk = v.pk)
    WHERE v.valid_to IS NULL`,
  `UPDATE row_versions v SET first_block = (SELECT min(p.block_num) FROM row_versions p WHERE p.code = k.code AND p.tbl = k.tbl AND p.scope = k.scope AND p.pk = k.pk)
    FROM (SELECT DISTINCT code, tbl, scope, pk FROM row_versions WHERE block_num > $1) k
    WHERE v.code = k.code AND v.tbl = k.tbl AND v.scope = k.scope AND v.pk = k.pk AND v.first_block IS NULL AND v.block_num >=
      coalesce((SELECT max(c.block_num) FROM row_versions c WHERE c.code = k.code AND c.tbl = k.tbl AND c.scope = k.scope AND c.pk = k.pk AND c.block_num <= $1), 0)`,
] as const
/** Version 8's columns of `api_keys`: a key's account, prefix, last use and limits (NULL on keys stored before). */
export const POSTGRES_MIGRATION_8 = API_KEY_ADDED_COLUMNS.map(
  ({ column, integer }) => `ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS ${column} ${integer ? 'BIGINT' : 'TEXT'};`,
).join('\n')
export const PARTITION_BLOCKS = 1_000_000
export const PARTITIONED_TABLES = ['transactions', 'actions', 'row_versions'] as const

export const POSTGRES_SCHEMA = `
${blocksDdl('BIGINT')}
CREATE TABLE IF NOT EXISTS transactions (
  block_num BIGINT NOT NULL, block_index INTEGER NOT NULL, id TEXT NOT NULL, id_key BIGINT NOT NULL, status SMALLINT NOT NULL,
  cpu_usage_us BIGINT NOT NULL, net_usage_words BIGINT NOT NULL, scheduled BOOLEAN NOT NULL,
  first_seq BIGINT, action_count INTEGER NOT NULL, details TEXT,
  PRIMARY KEY (block_num, block_index)
) PARTITION BY RANGE (block_num);
CREATE INDEX IF NOT EXISTS transactions_id ON transactions (id_key);

CREATE TABLE IF NOT EXISTS actions (
  global_seq BIGINT NOT NULL, block_num BIGINT NOT NULL, trx_index INTEGER NOT NULL, ordinal INTEGER NOT NULL,
  creator_ordinal INTEGER NOT NULL, receiver TEXT NOT NULL, account TEXT NOT NULL, name TEXT NOT NULL,
  auth TEXT NOT NULL, data BYTEA NOT NULL, return_value BYTEA NOT NULL, act_digest TEXT NOT NULL, recv_seq NUMERIC(20) NOT NULL, ram TEXT NOT NULL, trace TEXT,
  PRIMARY KEY (global_seq, block_num)
) PARTITION BY RANGE (block_num);

CREATE TABLE IF NOT EXISTS postings (
  term_key BIGINT NOT NULL, last_seq BIGINT NOT NULL, first_seq BIGINT NOT NULL, entries BYTEA NOT NULL,
  PRIMARY KEY (term_key, last_seq)
);
CREATE INDEX IF NOT EXISTS postings_last_seq ON postings (last_seq);

CREATE TABLE IF NOT EXISTS row_versions (
  code TEXT NOT NULL, tbl TEXT NOT NULL, scope TEXT NOT NULL, pk TEXT NOT NULL, block_num BIGINT NOT NULL,
  valid_to BIGINT, payer TEXT NOT NULL, value BYTEA, first_block BIGINT,
  PRIMARY KEY (code, tbl, scope, pk, block_num)
) PARTITION BY RANGE (block_num);
CREATE INDEX IF NOT EXISTS row_versions_head ON row_versions (code, tbl, scope, pk) WHERE valid_to IS NULL;
CREATE INDEX IF NOT EXISTS row_versions_block ON row_versions (block_num);

CREATE TABLE IF NOT EXISTS abi_versions (
  account TEXT NOT NULL, block_num BIGINT NOT NULL, valid_to BIGINT, abi BYTEA NOT NULL, PRIMARY KEY (account, block_num)
);
${versionIndexes('abi_versions')}

CREATE TABLE IF NOT EXISTS permission_versions (
  owner TEXT NOT NULL, name TEXT NOT NULL, block_num BIGINT NOT NULL, valid_to BIGINT,
  parent TEXT NOT NULL, threshold BIGINT NOT NULL, keys TEXT NOT NULL, accounts TEXT NOT NULL, removed BOOLEAN NOT NULL,
  PRIMARY KEY (owner, name, block_num)
);
${versionIndexes('permission_versions')}

CREATE TABLE IF NOT EXISTS key_versions (
  public_key TEXT NOT NULL, owner TEXT NOT NULL, permission TEXT NOT NULL, block_num BIGINT NOT NULL, valid_to BIGINT,
  PRIMARY KEY (public_key, owner, permission, block_num)
);
CREATE INDEX IF NOT EXISTS key_versions_owner ON key_versions (owner, permission) WHERE valid_to IS NULL;
${versionIndexes('key_versions')}

CREATE TABLE IF NOT EXISTS link_versions (
  account TEXT NOT NULL, code TEXT NOT NULL, type TEXT NOT NULL, block_num BIGINT NOT NULL, valid_to BIGINT, required TEXT,
  PRIMARY KEY (account, code, type, block_num)
);
${versionIndexes('link_versions')}

CREATE TABLE IF NOT EXISTS steps (seq BIGSERIAL PRIMARY KEY, type TEXT NOT NULL, block_num BIGINT NOT NULL, block_id TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS steps_block ON steps (block_id);

CREATE TABLE IF NOT EXISTS forked_transactions (id TEXT NOT NULL, block_num BIGINT NOT NULL, block_id TEXT NOT NULL, PRIMARY KEY (id, block_id));

-- What forked-out blocks held, kept for streams until LIB passes them by the retention (sqlite/schema.ts).
CREATE TABLE IF NOT EXISTS forked_blocks (block_id TEXT PRIMARY KEY, block_num BIGINT NOT NULL, payload BYTEA NOT NULL);
CREATE INDEX IF NOT EXISTS forked_blocks_num ON forked_blocks (block_num);

-- API keys (only the SHA-256 of a key string is kept) and server secrets (common-schema.ts, sqlite/schema.ts).
${keysDdl('BIGINT', 'BYTEA')}

-- Webhook subscriptions, their delivery attempts and the delivery lease (webhooks-sql.ts).
${webhookTablesDdl('BIGINT', 'BIGSERIAL PRIMARY KEY')}

-- Portal accounts, sessions, the audit log, hourly key usage and the setup token (portal-sql.ts).
${portalTablesDdl('BIGINT', 'BIGSERIAL PRIMARY KEY')}`

/** The partition of `table` holding block `blockNum`, created if missing. */
export function partitionDdl(
  table: (typeof PARTITIONED_TABLES)[number],
  blockNum: number,
): { name: string; ddl: string } {
  const low = Math.floor(blockNum / PARTITION_BLOCKS) * PARTITION_BLOCKS
  const name = `${table}_p${low / PARTITION_BLOCKS}`
  return {
    name,
    ddl: `CREATE TABLE IF NOT EXISTS ${name} PARTITION OF ${table} FOR VALUES FROM (${low}) TO (${low + PARTITION_BLOCKS})`,
  }
}
