import type pg from 'pg'

/** A table is first analyzed once this many rows were written to it. */
const FIRST_ANALYZE_ROWS = 1_000

export interface PlannerStatistics {
  /** Counts rows a write added to `table`. */
  wrote(table: string, rows: number): void
  /** Analyzes each table that has doubled since its last ANALYZE (run after a write commits). */
  refresh(): Promise<void>
}

/**
 * Keeps the planner's statistics of the tables ingest grows, as autovacuum would, because it may
 * be off (it is on some servers, and then nothing ever analyzes them). Without statistics the
 * planner takes the current versions of contract rows for about a hundred and joins a write's
 * keys to them by sorting or hashing all of them, or by rescanning them per key: at 300,000
 * actions the statement that closes row versions went from 3 ms to over a second a batch.
 * Doubling keeps the number of ANALYZEs logarithmic in the chain (each samples a bounded number
 * of rows).
 */
export function createPlannerStatistics(pool: pg.Pool): PlannerStatistics {
  const written = new Map<string, number>()
  /** Rows each table held when last analyzed (by this process, or as the server last recorded). */
  const analyzedRows = new Map<string, number>()

  async function recordedRows(table: string): Promise<number> {
    const row = (
      await pool.query<{ reltuples: number }>('SELECT reltuples FROM pg_class WHERE oid = to_regclass($1)', [table])
    ).rows[0]
    return Math.max(0, row?.reltuples ?? 0)
  }

  return {
    wrote(table, rows) {
      written.set(table, (written.get(table) ?? 0) + rows)
    },
    async refresh() {
      for (const [table, rows] of written) {
        if (rows < FIRST_ANALYZE_ROWS) continue
        let base = analyzedRows.get(table)
        if (base === undefined) analyzedRows.set(table, (base = await recordedRows(table)))
        if (rows < base) continue
        await pool.query(`ANALYZE ${table}`)
        analyzedRows.set(table, base + rows)
        written.set(table, 0)
      }
    },
  }
}
