import type Database from 'better-sqlite3'
import type { PortalStore } from '../port.ts'
import {
  accountFromRow,
  accountParams,
  auditFromRow,
  auditParams,
  NO_SEQ_BOUND,
  PORTAL_SQL,
  sessionFromRow,
  sessionParams,
  StoreAccountExistsError,
  summedUsage,
  USAGE_COLUMNS,
  usageFromRow,
  usageParams,
} from '../portal-sql.ts'
import type { KeyUsageRecord } from '../types.ts'

type Row = Record<string, unknown>

/** The driver's codes for a taken id (primary key) or login (unique). */
const TAKEN = new Set(['SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_CONSTRAINT_UNIQUE'])

/** keyUsage's read: the keys arrive as one JSON array parameter, so one prepared statement serves any number. */
const USAGE_OF_KEYS = `SELECT ${USAGE_COLUMNS} FROM key_usage WHERE key_id IN (SELECT value FROM json_each(?)) AND hour_ms >= ?
  ORDER BY key_id, hour_ms`

/**
 * Portal accounts, sessions, the audit log, key usage and the setup token of a SQLite store. A read-only store's
 * connection reads them and cannot write: its writes fail with the driver's SQLITE_READONLY error.
 */
export function createSqlitePortal(db: Database.Database): PortalStore {
  const s = Object.fromEntries(Object.entries(PORTAL_SQL).map(([name, sql]) => [name, db.prepare(sql)])) as Record<
    keyof typeof PORTAL_SQL,
    Database.Statement
  >
  const usageOfKeys = db.prepare(USAGE_OF_KEYS)
  const setDisabled = db.transaction((id: string, atMs: number | null) => {
    const changed = s.setAccountDisabled.run(atMs, id).changes > 0
    if (changed && atMs !== null) s.deleteSessionsOf.run(id)
    return changed
  })
  const addUsage = db.transaction((rows: KeyUsageRecord[]) => {
    for (const row of rows) s.addUsage.run(...usageParams(row))
  })
  return {
    async insertAccount(record) {
      try {
        s.insertAccount.run(...accountParams(record))
      } catch (error) {
        if (TAKEN.has((error as { code?: string }).code ?? ''))
          throw StoreAccountExistsError({ id: record.id, login: record.login })
        throw error
      }
    },
    async accountById(id) {
      const row = s.accountById.get(id) as Row | undefined
      return row && accountFromRow(row)
    },
    async accountByLogin(login) {
      const row = s.accountByLogin.get(login) as Row | undefined
      return row && accountFromRow(row)
    },
    async accounts() {
      return (s.accounts.all() as Row[]).map(accountFromRow)
    },
    async accountCount() {
      return Number((s.accountCount.get() as { n: number }).n)
    },
    async setAccountDisabled(id, atMs) {
      return setDisabled(id, atMs)
    },
    async setAccountPassword(id, passwordHash) {
      return s.setAccountPassword.run(passwordHash, id).changes > 0
    },
    async insertSession(record) {
      s.insertSession.run(...sessionParams(record))
    },
    async session(idHash, nowMs) {
      const row = s.session.get(idHash, nowMs) as Row | undefined
      return row && sessionFromRow(row)
    },
    async deleteSession(idHash) {
      s.deleteSession.run(idHash)
    },
    async pruneSessions(nowMs) {
      return s.pruneSessions.run(nowMs).changes
    },
    async appendAudit(entry) {
      s.appendAudit.run(...auditParams(entry))
    },
    async auditEntries({ accountId, limit, beforeSeq }) {
      const before = beforeSeq ?? NO_SEQ_BOUND
      const rows =
        accountId === undefined ? s.auditAll.all(before, limit) : s.auditOfAccount.all(accountId, before, limit)
      return (rows as Row[]).map(auditFromRow)
    },
    async addKeyUsage(rows) {
      if (rows.length > 0) addUsage(summedUsage(rows))
    },
    async keyUsage(keyIds, sinceMs) {
      if (keyIds.length === 0) return []
      return (usageOfKeys.all(JSON.stringify(keyIds), sinceMs) as Row[]).map(usageFromRow)
    },
    async putSetupToken(tokenHash, nowMs) {
      s.putSetupToken.run(tokenHash, nowMs)
    },
    async useSetupToken(tokenHash, nowMs) {
      return s.useSetupToken.run(nowMs, tokenHash).changes > 0
    },
    async hasSetupToken() {
      return Number((s.hasSetupToken.get() as { n: number }).n) > 0
    },
  }
}
