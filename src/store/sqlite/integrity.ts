import type Database from 'better-sqlite3'

/** Every check `antler verify` runs on a SQLite store; each finding is one sentence. */
export function sqliteIntegrityFindings(db: Database.Database): string[] {
  const findings: string[] = []
  const all = <T>(sql: string) => db.prepare(sql).all() as T[]
  const head = (db.prepare("SELECT value FROM meta WHERE key = 'head'").get() as { value: string } | undefined)?.value
  const bounds = db.prepare('SELECT MIN(num) AS low, MAX(num) AS high, COUNT(*) AS n FROM blocks').get() as { low: number | null; high: number | null; n: number }
  if (bounds.n > 0 && bounds.high! - bounds.low! + 1 !== bounds.n) {
    for (const g of all<{ after: number }>('SELECT b.num AS after FROM blocks b WHERE b.num < (SELECT MAX(num) FROM blocks) AND NOT EXISTS (SELECT 1 FROM blocks c WHERE c.num = b.num + 1) LIMIT 20')) {
      findings.push(`gap in blocks after block ${g.after}`)
    }
  }
  for (const b of all<{ num: number }>('SELECT b.num FROM blocks b JOIN blocks p ON p.num = b.num - 1 WHERE b.previous <> p.id LIMIT 20')) findings.push(`block ${b.num} does not link to block ${b.num - 1}`)
  if (head && bounds.high !== null && head !== `${bounds.high}:${(db.prepare('SELECT id FROM blocks WHERE num = ?').get(bounds.high) as { id: string }).id}`) {
    findings.push(`the recorded head ${head} is not the last stored block ${bounds.high}`)
  }
  const orphanChecks: [string, string][] = [
    ['transactions', 'SELECT DISTINCT block_num AS num FROM transactions WHERE block_num NOT IN (SELECT num FROM blocks) LIMIT 20'],
    ['actions', 'SELECT DISTINCT block_num AS num FROM actions WHERE block_num NOT IN (SELECT num FROM blocks) LIMIT 20'],
    ['row versions', 'SELECT DISTINCT block_num AS num FROM row_versions WHERE block_num NOT IN (SELECT num FROM blocks) LIMIT 20'],
  ]
  for (const [what, sql] of orphanChecks) for (const o of all<{ num: number }>(sql)) findings.push(`${what} of block ${o.num}, which is not in the store`)
  const duplicates: [string, string][] = [
    ['row', "SELECT code || ':' || tbl || ':' || scope || ':' || pk AS k FROM row_versions WHERE valid_to IS NULL GROUP BY code, tbl, scope, pk HAVING COUNT(*) > 1 LIMIT 20"],
    ['ABI', 'SELECT account AS k FROM abi_versions WHERE valid_to IS NULL GROUP BY account HAVING COUNT(*) > 1 LIMIT 20'],
    ['permission', "SELECT owner || '@' || name AS k FROM permission_versions WHERE valid_to IS NULL GROUP BY owner, name HAVING COUNT(*) > 1 LIMIT 20"],
    ['link', "SELECT account || ':' || code || ':' || type AS k FROM link_versions WHERE valid_to IS NULL GROUP BY account, code, type HAVING COUNT(*) > 1 LIMIT 20"],
  ]
  for (const [what, sql] of duplicates) for (const d of all<{ k: string }>(sql)) findings.push(`${what} ${d.k} has more than one current version`)
  for (const v of all<{ k: string }>("SELECT code || ':' || tbl || ':' || scope || ':' || pk AS k FROM row_versions WHERE valid_to IS NOT NULL AND valid_to <= block_num LIMIT 20")) {
    findings.push(`row ${v.k} has a version that ends before it starts`)
  }
  return findings
}
