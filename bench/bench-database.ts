import pg from 'pg'

/**
 * Runs `work` on a fresh PostgreSQL database made through `adminUrl` (its URL given), then drops it, unless `keep`
 * (the ingest bench's `--keep-postgres`). Every bench that writes PostgreSQL makes its store here.
 */
export async function withBenchDatabase<T>(
  adminUrl: string,
  work: (url: string) => Promise<T>,
  options: { keep?: boolean } = {},
): Promise<T> {
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  const name = `antler_bench_${process.pid}_${Date.now().toString(36)}`
  await admin.query(`CREATE DATABASE ${name}`)
  try {
    const url = new URL(adminUrl)
    url.pathname = `/${name}`
    return await work(url.toString())
  } finally {
    if (!options.keep) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.end()
  }
}
