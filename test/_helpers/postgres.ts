import type { TestContext } from 'node:test'
import pg from 'pg'
import { onCleanup } from './cleanup.ts'

/** The admin URL tests create their databases with; unset means PostgreSQL tests skip. */
export const TEST_PG_URL = process.env.ANTLER_TEST_PG

export const PG_SKIP_REASON = TEST_PG_URL
  ? false
  : 'ANTLER_TEST_PG is not set (CI sets it; e.g. postgres://postgres@127.0.0.1:5432/postgres)'

/**
 * Creates a throw-away database, dropped after the test once the cleanups registered after it with
 * `onCleanup` (the stores on it) have run; returns its URL.
 */
export async function withPostgresDatabase(t: TestContext): Promise<string> {
  const admin = new pg.Client({ connectionString: TEST_PG_URL })
  await admin.connect()
  const name = `antler_test_${process.pid}_${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6)}`
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  onCleanup(t, async () => {
    const dropper = new pg.Client({ connectionString: TEST_PG_URL })
    await dropper.connect()
    await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await dropper.end()
  })
  const url = new URL(TEST_PG_URL!)
  url.pathname = `/${name}`
  return url.toString()
}
