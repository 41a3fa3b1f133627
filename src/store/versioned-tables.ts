/**
 * Tables holding versions (valid from `block_num` until `valid_to`); undoing blocks >= n is the
 * same two statements on each, in both adapters.
 */
export const VERSIONED_TABLES = ['row_versions', 'abi_versions', 'permission_versions', 'key_versions', 'link_versions'] as const
