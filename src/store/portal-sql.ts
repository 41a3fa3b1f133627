import { AntlerError } from '../antelope/index.ts'
import type { AccountRecord, AuditEntry, KeyUsageRecord, SessionRecord } from './types.ts'

/** A parameter of the portal statements. */
export type PortalSqlValue = string | number | null

/**
 * The portal tables (schema 8), declared alike in both schemas but for the 64-bit integer type and the audit log's
 * own key (an increasing number, like webhook_attempts'). Sessions are kept under the SHA-256 of their id, found by
 * account (a disabled account's are deleted) and by expiry (pruning). The audit log is read newest first, per account
 * or whole. Usage is one row per key and hour, whose counts are only ever added to. The setup token is one row
 * (`id` 1): its hash, and when it was used.
 */
export const portalTablesDdl = (integer: 'BIGINT' | 'INTEGER', auditKey: string) => `
CREATE TABLE IF NOT EXISTS accounts (
  id TEXT PRIMARY KEY, login TEXT NOT NULL UNIQUE, password_hash TEXT NOT NULL, created_at_ms ${integer} NOT NULL,
  disabled_at_ms ${integer}
);
CREATE TABLE IF NOT EXISTS portal_sessions (
  id_hash TEXT PRIMARY KEY, account_id TEXT NOT NULL, csrf_token TEXT NOT NULL, created_at_ms ${integer} NOT NULL,
  expires_at_ms ${integer} NOT NULL
);
CREATE INDEX IF NOT EXISTS portal_sessions_account ON portal_sessions (account_id);
CREATE INDEX IF NOT EXISTS portal_sessions_expiry ON portal_sessions (expires_at_ms);
CREATE TABLE IF NOT EXISTS audit_log (
  seq ${auditKey}, at_ms ${integer} NOT NULL, account_id TEXT, action TEXT NOT NULL, ip TEXT NOT NULL, key_id TEXT,
  detail TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_log_account ON audit_log (account_id, seq);
CREATE TABLE IF NOT EXISTS key_usage (
  key_id TEXT NOT NULL, hour_ms ${integer} NOT NULL, ok ${integer} NOT NULL, client_errors ${integer} NOT NULL,
  auth_failures ${integer} NOT NULL, rate_limited ${integer} NOT NULL, documents ${integer} NOT NULL,
  PRIMARY KEY (key_id, hour_ms)
);
CREATE TABLE IF NOT EXISTS portal_setup (
  id INTEGER PRIMARY KEY CHECK (id = 1), token_hash TEXT NOT NULL, created_at_ms ${integer} NOT NULL,
  used_at_ms ${integer}
);
`

const ACCOUNT_COLUMNS = 'id, login, password_hash, created_at_ms, disabled_at_ms'
const SESSION_COLUMNS = 'id_hash, account_id, csrf_token, created_at_ms, expires_at_ms'
const AUDIT_COLUMNS = 'at_ms, account_id, action, ip, key_id, detail'
export const USAGE_COLUMNS = 'key_id, hour_ms, ok, client_errors, auth_failures, rate_limited, documents'

/** A sequence above any real one: `auditEntries` without `beforeSeq`. */
export const NO_SEQ_BOUND = Number.MAX_SAFE_INTEGER

/**
 * What an insert of usage rows does with a row already stored for the key and hour: it adds the counts (the usage
 * of an hour arrives in many batches, from many replicas).
 */
export const USAGE_ADDED = `ON CONFLICT (key_id, hour_ms) DO UPDATE SET ok = key_usage.ok + excluded.ok,
  client_errors = key_usage.client_errors + excluded.client_errors,
  auth_failures = key_usage.auth_failures + excluded.auth_failures,
  rate_limited = key_usage.rate_limited + excluded.rate_limited, documents = key_usage.documents + excluded.documents`

/**
 * The portal statements both adapters run (placeholders `?`; the PostgreSQL adapter numbers them). A setup token is
 * spent by one UPDATE that matches only while it is unused: of two concurrent spends, exactly one changes the row.
 */
export const PORTAL_SQL = {
  insertAccount: `INSERT INTO accounts (${ACCOUNT_COLUMNS}) VALUES (?, ?, ?, ?, ?)`,
  accountById: `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ?`,
  accountByLogin: `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE login = ?`,
  accounts: `SELECT ${ACCOUNT_COLUMNS} FROM accounts ORDER BY created_at_ms, id`,
  accountCount: 'SELECT count(*) AS n FROM accounts',
  setAccountDisabled: 'UPDATE accounts SET disabled_at_ms = ? WHERE id = ?',
  deleteSessionsOf: 'DELETE FROM portal_sessions WHERE account_id = ?',
  setAccountPassword: 'UPDATE accounts SET password_hash = ? WHERE id = ?',
  insertSession: `INSERT INTO portal_sessions (${SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?)`,
  session: `SELECT ${SESSION_COLUMNS} FROM portal_sessions WHERE id_hash = ? AND expires_at_ms > ?`,
  deleteSession: 'DELETE FROM portal_sessions WHERE id_hash = ?',
  pruneSessions: 'DELETE FROM portal_sessions WHERE expires_at_ms <= ?',
  appendAudit: `INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`,
  auditOfAccount: `SELECT seq, ${AUDIT_COLUMNS} FROM audit_log WHERE account_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
  auditAll: `SELECT seq, ${AUDIT_COLUMNS} FROM audit_log WHERE seq < ? ORDER BY seq DESC LIMIT ?`,
  addUsage: `INSERT INTO key_usage (${USAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) ${USAGE_ADDED}`,
  // A new token replaces the kept one, used or not (parameters: hash, now).
  putSetupToken: `INSERT INTO portal_setup (id, token_hash, created_at_ms, used_at_ms) VALUES (1, ?, ?, NULL)
    ON CONFLICT (id) DO UPDATE SET token_hash = excluded.token_hash, created_at_ms = excluded.created_at_ms,
    used_at_ms = NULL`,
  // Parameters: now, hash.
  useSetupToken: 'UPDATE portal_setup SET used_at_ms = ? WHERE id = 1 AND token_hash = ? AND used_at_ms IS NULL',
  hasSetupToken: 'SELECT count(*) AS n FROM portal_setup WHERE used_at_ms IS NULL',
} as const

/** The parameters of `PORTAL_SQL.insertAccount`. */
export const accountParams = (r: AccountRecord): PortalSqlValue[] => [
  r.id,
  r.login,
  r.passwordHash,
  r.createdAtMs,
  r.disabledAtMs ?? null,
]

/** The parameters of `PORTAL_SQL.insertSession`. */
export const sessionParams = (r: SessionRecord): PortalSqlValue[] => [
  r.idHash,
  r.accountId,
  r.csrfToken,
  r.createdAtMs,
  r.expiresAtMs,
]

/** The parameters of `PORTAL_SQL.appendAudit` (the store numbers the entry: a given `seq` is ignored). */
export const auditParams = (e: AuditEntry): PortalSqlValue[] => [
  e.atMs,
  e.accountId ?? null,
  e.action,
  e.ip,
  e.keyId ?? null,
  e.detail,
]

/** The usage row's counts in USAGE_COLUMNS order. */
export const usageParams = (u: KeyUsageRecord): PortalSqlValue[] => [
  u.keyId,
  u.hourMs,
  u.ok,
  u.clientErrors,
  u.authFailures,
  u.rateLimited,
  u.documents,
]

/**
 * Usage rows summed per key and hour, by key then hour: one row per conflict target (PostgreSQL refuses to update a
 * row twice in one statement), written in one order by every writer (concurrent batches do not deadlock).
 */
export function summedUsage(rows: readonly KeyUsageRecord[]): KeyUsageRecord[] {
  const sums = new Map<string, KeyUsageRecord>()
  for (const u of rows) {
    const id = JSON.stringify([u.keyId, u.hourMs])
    const s = sums.get(id)
    sums.set(
      id,
      s === undefined
        ? { ...u }
        : {
            ...s,
            ok: s.ok + u.ok,
            clientErrors: s.clientErrors + u.clientErrors,
            authFailures: s.authFailures + u.authFailures,
            rateLimited: s.rateLimited + u.rateLimited,
            documents: s.documents + u.documents,
          },
    )
  }
  return [...sums.values()].sort((a, b) => (a.keyId < b.keyId ? -1 : a.keyId > b.keyId ? 1 : a.hourMs - b.hourMs))
}

const present = (v: unknown) => v !== null && v !== undefined

/** An `accounts` row of either adapter as a record (64-bit integers may come back as strings); absent stays absent. */
export function accountFromRow(r: Record<string, unknown>): AccountRecord {
  return {
    id: r.id as string,
    login: r.login as string,
    passwordHash: r.password_hash as string,
    createdAtMs: Number(r.created_at_ms),
    ...(present(r.disabled_at_ms) ? { disabledAtMs: Number(r.disabled_at_ms) } : {}),
  }
}

/** A `portal_sessions` row of either adapter as a record. */
export function sessionFromRow(r: Record<string, unknown>): SessionRecord {
  return {
    idHash: r.id_hash as string,
    accountId: r.account_id as string,
    csrfToken: r.csrf_token as string,
    createdAtMs: Number(r.created_at_ms),
    expiresAtMs: Number(r.expires_at_ms),
  }
}

/** An `audit_log` row of either adapter as an entry, with its `seq`; absent stays absent. */
export function auditFromRow(r: Record<string, unknown>): AuditEntry {
  return {
    seq: Number(r.seq),
    atMs: Number(r.at_ms),
    ...(present(r.account_id) ? { accountId: r.account_id as string } : {}),
    action: r.action as string,
    ip: r.ip as string,
    ...(present(r.key_id) ? { keyId: r.key_id as string } : {}),
    detail: r.detail as string,
  }
}

/** A `key_usage` row of either adapter as a record. */
export function usageFromRow(r: Record<string, unknown>): KeyUsageRecord {
  return {
    keyId: r.key_id as string,
    hourMs: Number(r.hour_ms),
    ok: Number(r.ok),
    clientErrors: Number(r.client_errors),
    authFailures: Number(r.auth_failures),
    rateLimited: Number(r.rate_limited),
    documents: Number(r.documents),
  }
}

/** The account id or the sign-in name is already stored. */
export function StoreAccountExistsError(args: { id: string; login: string }): AntlerError {
  return new AntlerError('store_account_exists_error', args)
}
