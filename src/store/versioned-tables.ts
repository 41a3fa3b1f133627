/**
 * Versioned tables (valid from `block_num` until `valid_to`) undone by the same two statements in
 * both adapters: delete versions written at or after n, reopen versions closed at or after n.
 * `row_versions` is undone by key instead (see the SQLite schema's comment).
 */
export const VERSIONED_TABLES = ['abi_versions', 'permission_versions', 'key_versions', 'link_versions'] as const

/**
 * Each scope's current row versions by first block: a past height's keys (both adapters create it once the column
 * is filled).
 */
export const ROW_VERSIONS_BORN =
  'CREATE INDEX IF NOT EXISTS row_versions_born ON row_versions (code, tbl, scope, first_block, pk) WHERE valid_to IS NULL'
