import type pg from 'pg'
import { numbered } from '../common-sql.ts'
import type { PortalStore } from '../port.ts'
import {
  accountFromRow,
  accountParams,
  auditFromRow,
  auditParams,
  NO_SEQ_BOUND,
  PORTAL_SQL,
  type PortalSqlValue,
  sessionFromRow,
  sessionParams,
  StoreAccountExistsError,
  summedUsage,
  USAGE_ADDED,
  USAGE_COLUMNS,
  usageFromRow,
} from '../portal-sql.ts'
import { inTransaction } from './in-transaction.ts'

/** PostgreSQL's unique_violation: the id or the login is taken. */
const UNIQUE_VIOLATION = '23505'

/** Disabling an account runs in a transaction begun READ WRITE (see the writes pool below). */
const READ_WRITE = 'BEGIN READ WRITE'

const SQL = Object.fromEntries(Object.entries(PORTAL_SQL).map(([name, sql]) => [name, numbered(sql)])) as Record<
  keyof typeof PORTAL_SQL,
  string
>

/**
 * addKeyUsage in one statement for any number of rows (one array per column), in key then hour order (summedUsage):
 * concurrent batches of two replicas take the rows' locks in one order.
 */
const ADD_USAGE = `INSERT INTO key_usage (${USAGE_COLUMNS})
  SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[])
  ${USAGE_ADDED}`

/** keyUsage's one read of every key asked, by key in byte order (as SQLite sorts), then hour. */
const USAGE_OF_KEYS = `SELECT ${USAGE_COLUMNS} FROM key_usage WHERE key_id = ANY($1::text[]) AND hour_ms >= $2
  ORDER BY key_id COLLATE "C", hour_ms`

/**
 * Portal accounts, sessions, the audit log, key usage and the setup token of a PostgreSQL store, writable on a
 * read-only one too: writes go through `writes`, the pool webhook records are written through (open-pool.ts), whose
 * connections allow writes; reads use the store's pool.
 */
export function createPostgresPortal(pool: pg.Pool, writes: pg.Pool = pool): PortalStore {
  const write = (sql: string, params: PortalSqlValue[]) => writes.query(sql, params)
  const changed = (result: pg.QueryResult) => (result.rowCount ?? 0) > 0
  return {
    async insertAccount(record) {
      try {
        await write(SQL.insertAccount, accountParams(record))
      } catch (error) {
        if ((error as { code?: string }).code === UNIQUE_VIOLATION)
          throw StoreAccountExistsError({ id: record.id, login: record.login })
        throw error
      }
    },
    async accountById(id) {
      const row = (await pool.query(SQL.accountById, [id])).rows[0]
      return row && accountFromRow(row)
    },
    async accountByLogin(login) {
      const row = (await pool.query(SQL.accountByLogin, [login])).rows[0]
      return row && accountFromRow(row)
    },
    async accounts() {
      return (await pool.query(SQL.accounts)).rows.map(accountFromRow)
    },
    async accountCount() {
      return Number((await pool.query<{ n: string }>(SQL.accountCount)).rows[0].n)
    },
    async setAccountDisabled(id, atMs) {
      return inTransaction(
        writes,
        async (client) => {
          const found = changed(await client.query(SQL.setAccountDisabled, [atMs, id]))
          if (found && atMs !== null) await client.query(SQL.deleteSessionsOf, [id])
          return found
        },
        READ_WRITE,
      )
    },
    async setAccountPassword(id, passwordHash) {
      return changed(await write(SQL.setAccountPassword, [passwordHash, id]))
    },
    async insertSession(record) {
      await write(SQL.insertSession, sessionParams(record))
    },
    async session(idHash, nowMs) {
      const row = (await pool.query(SQL.session, [idHash, nowMs])).rows[0]
      return row && sessionFromRow(row)
    },
    async deleteSession(idHash) {
      await write(SQL.deleteSession, [idHash])
    },
    async pruneSessions(nowMs) {
      return (await write(SQL.pruneSessions, [nowMs])).rowCount ?? 0
    },
    async appendAudit(entry) {
      await write(SQL.appendAudit, auditParams(entry))
    },
    async auditEntries({ accountId, limit, beforeSeq }) {
      const before = beforeSeq ?? NO_SEQ_BOUND
      const result =
        accountId === undefined
          ? await pool.query(SQL.auditAll, [before, limit])
          : await pool.query(SQL.auditOfAccount, [accountId, before, limit])
      return result.rows.map(auditFromRow)
    },
    async addKeyUsage(rows) {
      if (rows.length === 0) return
      const sums = summedUsage(rows)
      await writes.query(ADD_USAGE, [
        sums.map((u) => u.keyId),
        sums.map((u) => u.hourMs),
        sums.map((u) => u.ok),
        sums.map((u) => u.clientErrors),
        sums.map((u) => u.authFailures),
        sums.map((u) => u.rateLimited),
        sums.map((u) => u.documents),
      ])
    },
    async keyUsage(keyIds, sinceMs) {
      if (keyIds.length === 0) return []
      return (await pool.query(USAGE_OF_KEYS, [keyIds, sinceMs])).rows.map(usageFromRow)
    },
    async putSetupToken(tokenHash, nowMs) {
      await write(SQL.putSetupToken, [tokenHash, nowMs])
    },
    async useSetupToken(tokenHash, nowMs) {
      return changed(await write(SQL.useSetupToken, [nowMs, tokenHash]))
    },
    async hasSetupToken() {
      return Number((await pool.query<{ n: string }>(SQL.hasSetupToken)).rows[0].n) > 0
    },
  }
}
