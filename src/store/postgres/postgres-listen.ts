import type pg from 'pg'
import { STEPS_CHANNEL } from './in-transaction.ts'

/**
 * LISTEN on the steps channel on a connection of its own (taken from the pool for as long as it listens): each
 * notification calls `onSteps`. A failure of that connection is reported once and the connection dropped; the caller
 * falls back to polling.
 */
export async function listenForSteps(
  pool: pg.Pool,
  onSteps: () => void,
  onError: (error: unknown) => void,
): Promise<() => Promise<void>> {
  const client = await pool.connect()
  let stopped = false
  const fail = (error: unknown) => {
    if (stopped) return
    stopped = true
    client.release(error instanceof Error ? error : new Error(String(error)))
    onError(error)
  }
  client.on('notification', (message) => {
    if (message.channel === STEPS_CHANNEL && !stopped) onSteps()
  })
  client.on('error', fail)
  try {
    await client.query(`LISTEN ${STEPS_CHANNEL}`)
  } catch (error) {
    fail(error)
    throw error
  }
  return async () => {
    if (stopped) return
    stopped = true
    try {
      await client.query(`UNLISTEN ${STEPS_CHANNEL}`)
      client.release()
    } catch (error) {
      client.release(error instanceof Error ? error : new Error(String(error)))
    }
  }
}
