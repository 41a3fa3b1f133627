/**
 * Versioned tables (valid from `block_num` until `valid_to`) undone by the same two statements in
 * both adapters: delete versions written at or after n, reopen versions closed at or after n.
 * `row_versions` is undone by key instead (see the SQLite schema's comment).
 */
export const VERSIONED_TABLES = ['abi_versions', 'permission_versions', 'key_versions', 'link_versions'] as const
