import type Database from 'better-sqlite3'
import { INTEGRITY_CHECKS } from '../integrity-checks.ts'

/** Runs every integrity check on a SQLite store; each finding is one sentence. */
export function sqliteIntegrityFindings(db: Database.Database): string[] {
  return INTEGRITY_CHECKS.flatMap((check) =>
    (db.prepare(check.sql).all() as Record<string, unknown>[]).map(check.finding),
  )
}
