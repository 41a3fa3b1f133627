import type { PortalStore } from './port.ts'
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
  usageFromRow,
  usageParams,
} from './portal-sql.ts'
import { readAll, readCount, readOne, unlessTaken, type RecordsDialect } from './records-dialect.ts'
import { awaited, changesOf } from './sql-routine.ts'

/**
 * Portal accounts, sessions, the audit log, key usage and the setup token, on either adapter: written through the
 * dialect's writes (on PostgreSQL the pool webhook records are written through, so a read-only store writes them too),
 * read through its reads.
 */
export function createPortalStore(d: RecordsDialect): PortalStore {
  const { reads, writes } = d
  const changed = async (text: string, params: readonly unknown[]) => (await writes.run(changesOf(text, params))) > 0
  return {
    async insertAccount(record) {
      const insert = writes.run(changesOf(PORTAL_SQL.insertAccount, accountParams(record)))
      await unlessTaken(d, insert, () => StoreAccountExistsError({ id: record.id, login: record.login }))
    },
    accountById: (id) => readOne(reads, PORTAL_SQL.accountById, [id], accountFromRow),
    accountByLogin: (login) => readOne(reads, PORTAL_SQL.accountByLogin, [login], accountFromRow),
    accounts: () => readAll(reads, PORTAL_SQL.accounts, [], accountFromRow),
    accountCount: () => readCount(reads, PORTAL_SQL.accountCount),
    setAccountDisabled: (id, atMs) =>
      writes.transaction(function* (sql) {
        const found = (yield* awaited(sql.run(PORTAL_SQL.setAccountDisabled, [atMs, id]))) > 0
        if (found && atMs !== null) yield* awaited(sql.run(PORTAL_SQL.deleteSessionsOf, [id]))
        return found
      }),
    setAccountPassword: (id, passwordHash) => changed(PORTAL_SQL.setAccountPassword, [passwordHash, id]),
    async insertSession(record) {
      await changed(PORTAL_SQL.insertSession, sessionParams(record))
    },
    session: (idHash, nowMs) => readOne(reads, PORTAL_SQL.session, [idHash, nowMs], sessionFromRow),
    async deleteSession(idHash) {
      await changed(PORTAL_SQL.deleteSession, [idHash])
    },
    pruneSessions: (nowMs) => writes.run(changesOf(PORTAL_SQL.pruneSessions, [nowMs])),
    async appendAudit(entry) {
      await changed(PORTAL_SQL.appendAudit, auditParams(entry))
    },
    auditEntries({ accountId, limit, beforeSeq }) {
      const before = beforeSeq ?? NO_SEQ_BOUND
      return accountId === undefined
        ? readAll(reads, PORTAL_SQL.auditAll, [before, limit], auditFromRow)
        : readAll(reads, PORTAL_SQL.auditOfAccount, [accountId, before, limit], auditFromRow)
    },
    async addKeyUsage(rows) {
      if (rows.length === 0) return
      // In key then hour order: concurrent batches of two replicas take the rows' locks in one order.
      const sums = summedUsage(rows).map(usageParams)
      const { addUsage } = d.statements
      if (addUsage) {
        const columns = sums[0].map((_, column) => d.list(sums.map((row) => row[column])))
        await writes.run(changesOf(addUsage, columns))
        return
      }
      await writes.transaction(function* (sql) {
        for (const row of sums) yield* awaited(sql.run(PORTAL_SQL.addUsage, row))
      })
    },
    async keyUsage(keyIds, sinceMs) {
      if (keyIds.length === 0) return []
      return readAll(reads, d.statements.usageOfKeys, [d.list(keyIds), sinceMs], usageFromRow)
    },
    async putSetupToken(tokenHash, nowMs) {
      await changed(PORTAL_SQL.putSetupToken, [tokenHash, nowMs])
    },
    useSetupToken: (tokenHash, nowMs) => changed(PORTAL_SQL.useSetupToken, [nowMs, tokenHash]),
    hasSetupToken: async () => (await readCount(reads, PORTAL_SQL.hasSetupToken)) > 0,
  }
}
