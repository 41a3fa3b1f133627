import Database from 'better-sqlite3'

/** Every row of the store's data tables, in key order (the step log and meta are left out: they record history). */
export function dumpSqliteStore(path: string): Record<string, unknown[]> {
  const db = new Database(path, { readonly: true })
  try {
    const tables = ['blocks', 'transactions', 'actions', 'row_versions', 'abi_versions', 'permission_versions', 'key_versions', 'link_versions']
    return Object.fromEntries(tables.map((t) => [t, db.prepare(`SELECT * FROM ${t} ORDER BY 1, 2, 3, 4`).all()]))
  } finally {
    db.close()
  }
}

/** A deterministic generator (LCG) for seeded simulations. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0 || 1
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state / 2 ** 32
  }
}

export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** The same dump as `dumpSqliteStore`, from a PostgreSQL store. */
export async function dumpPostgresStore(url: string): Promise<Record<string, unknown[]>> {
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const tables = ['blocks', 'transactions', 'actions', 'row_versions', 'abi_versions', 'permission_versions', 'key_versions', 'link_versions']
    const out: Record<string, unknown[]> = {}
    for (const t of tables) out[t] = (await client.query(`SELECT * FROM ${t} ORDER BY 1, 2, 3, 4`)).rows
    return out
  } finally {
    await client.end()
  }
}
