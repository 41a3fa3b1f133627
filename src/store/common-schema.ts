import type { VERSIONED_TABLES } from './versioned-tables.ts'

/**
 * The meta and blocks tables, declared alike in both schemas but for the name of the 64-bit integer type
 * (`integer`: BIGINT on PostgreSQL, INTEGER on SQLite, where `num INTEGER PRIMARY KEY` is the rowid).
 */
export const blocksDdl = (
  integer: 'BIGINT' | 'INTEGER',
) => `CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE IF NOT EXISTS blocks (
  num ${integer} PRIMARY KEY, id TEXT NOT NULL UNIQUE, previous TEXT NOT NULL, ts ${integer} NOT NULL,
  producer TEXT NOT NULL, trx_count INTEGER NOT NULL, action_count INTEGER NOT NULL, first_seq ${integer}, header TEXT
);
CREATE INDEX IF NOT EXISTS blocks_ts ON blocks (ts);
`

/**
 * API keys (only the SHA-256 of a key string is kept) and server secrets, declared alike in both schemas but for the
 * names of the 64-bit integer and byte string types.
 */
export const keysDdl = (
  integer: 'BIGINT' | 'INTEGER',
  bytes: 'BYTEA' | 'BLOB',
) => `CREATE TABLE IF NOT EXISTS api_keys (
  id TEXT PRIMARY KEY, key_hash TEXT NOT NULL UNIQUE, name TEXT NOT NULL, type TEXT NOT NULL, origins TEXT NOT NULL,
  created_at_ms ${integer} NOT NULL, revoked_at_ms ${integer}, account_id TEXT, key_prefix TEXT,
  last_used_at_ms ${integer}, limits TEXT
);
CREATE INDEX IF NOT EXISTS api_keys_revoked ON api_keys (id) WHERE revoked_at_ms IS NOT NULL;
CREATE TABLE IF NOT EXISTS secrets (name TEXT PRIMARY KEY, value ${bytes} NOT NULL);`

/**
 * The indexes undo needs on a versioned table, the same in both schemas: by the block that wrote a version and by the
 * one that closed it.
 */
export const versionIndexes = (table: (typeof VERSIONED_TABLES)[number]) =>
  `CREATE INDEX IF NOT EXISTS ${table}_block ON ${table} (block_num);
CREATE INDEX IF NOT EXISTS ${table}_valid_to ON ${table} (valid_to);`
