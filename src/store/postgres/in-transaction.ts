import type pg from 'pg'

/** The BEGIN of a snapshot: one consistent state for every read, no write. */
export const READ_SNAPSHOT = 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY'

/** Runs `fn` in one transaction on one client of `pool` (`begin` names its kind), rolled back if it throws. */
export async function inTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
  begin = 'BEGIN',
): Promise<T> {
  const client = await pool.connect()
  try {
    await client.query(begin)
    const result = await fn(client)
    await client.query('COMMIT')
    return result
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw error
  } finally {
    client.release()
  }
}

/** The channel steps are announced on (postgres-listen.ts listens to it). */
export const STEPS_CHANNEL = 'antler_steps'

/** Tells the step listeners (NOTIFY `antler_steps`, sent at COMMIT) that the log grew from a block on. */
export const announceSteps = (c: pg.PoolClient, blockNum: number) =>
  c.query('SELECT pg_notify($1, $2)', [STEPS_CHANNEL, String(blockNum)])
