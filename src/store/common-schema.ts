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
 * The indexes undo needs on a versioned table, the same in both schemas: by the block that wrote a version and by the
 * one that closed it.
 */
export const versionIndexes = (table: (typeof VERSIONED_TABLES)[number]) =>
  `CREATE INDEX IF NOT EXISTS ${table}_block ON ${table} (block_num);
CREATE INDEX IF NOT EXISTS ${table}_valid_to ON ${table} (valid_to);`
