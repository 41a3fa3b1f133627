/**
 * The checks `antler verify` runs, as SQL both adapters speak, each turning a result row into one
 * finding. Every query is bounded (LIMIT) so a badly broken store still answers quickly.
 */
export interface IntegrityCheck {
  readonly sql: string
  readonly finding: (row: Record<string, unknown>) => string
}

export const INTEGRITY_CHECKS: readonly IntegrityCheck[] = [
  {
    sql: 'SELECT b.num AS after FROM blocks b WHERE b.num < (SELECT MAX(num) FROM blocks) AND NOT EXISTS (SELECT 1 FROM blocks c WHERE c.num = b.num + 1) ORDER BY b.num LIMIT 20',
    finding: (r) => `gap in blocks after block ${r.after}`,
  },
  {
    sql: 'SELECT b.num AS num FROM blocks b JOIN blocks p ON p.num = b.num - 1 WHERE b.previous <> p.id ORDER BY b.num LIMIT 20',
    finding: (r) => `block ${r.num} does not link to block ${Number(r.num) - 1}`,
  },
  {
    sql: "SELECT m.value AS head FROM meta m WHERE m.key = 'head' AND m.value <> (SELECT CAST(num AS TEXT) || ':' || id FROM blocks ORDER BY num DESC LIMIT 1)",
    finding: (r) => `the recorded head ${r.head} is not the last stored block`,
  },
  ...(['transactions', 'actions', 'row_versions'] as const).map((table) => ({
    sql: `SELECT DISTINCT block_num AS num FROM ${table} WHERE block_num NOT IN (SELECT num FROM blocks) ORDER BY block_num LIMIT 20`,
    finding: (r: Record<string, unknown>) => `${table.replace('_', ' ')} of block ${r.num}, which is not in the store`,
  })),
  {
    sql: "SELECT code || ':' || tbl || ':' || scope || ':' || pk AS k FROM row_versions WHERE valid_to IS NULL GROUP BY code, tbl, scope, pk HAVING COUNT(*) > 1 LIMIT 20",
    finding: (r) => `row ${r.k} has more than one current version`,
  },
  {
    sql: 'SELECT account AS k FROM abi_versions WHERE valid_to IS NULL GROUP BY account HAVING COUNT(*) > 1 LIMIT 20',
    finding: (r) => `ABI ${r.k} has more than one current version`,
  },
  {
    sql: "SELECT owner || '@' || name AS k FROM permission_versions WHERE valid_to IS NULL GROUP BY owner, name HAVING COUNT(*) > 1 LIMIT 20",
    finding: (r) => `permission ${r.k} has more than one current version`,
  },
  {
    sql: "SELECT account || ':' || code || ':' || type AS k FROM link_versions WHERE valid_to IS NULL GROUP BY account, code, type HAVING COUNT(*) > 1 LIMIT 20",
    finding: (r) => `link ${r.k} has more than one current version`,
  },
  {
    sql: "SELECT code || ':' || tbl || ':' || scope || ':' || pk AS k FROM row_versions WHERE valid_to IS NOT NULL AND valid_to <= block_num LIMIT 20",
    finding: (r) => `row ${r.k} has a version that ends before it starts`,
  },
]
