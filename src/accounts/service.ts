import { randomBytes } from 'node:crypto'
import { AntlerError } from '../antelope/index.ts'
import type { AccountRecord, AuditEntry, PortalStore, SessionRecord } from '../store/index.ts'
import { createPasswordCheck, hashPassword, passwordProblem } from './passwords.ts'
import { createSignInThrottle, SIGN_IN_FAILURES_PER_MINUTE, type SignInThrottle } from './sign-in-throttle.ts'
import { randomToken, tokenHash } from './tokens.ts'

/** How long a portal session lasts from sign-in (absolute: a new sign-in after it). */
export const SESSION_TTL_MS = 12 * 3_600_000

const LOGIN_PATTERN = /^[a-z0-9][a-z0-9._@-]{2,63}$/

/** A sign-in name as stored: trimmed, lower case. */
export const normalizeLogin = (login: string): string => login.trim().toLowerCase()

/** A session just started: the cookie's value (never stored: only its hash is) and the record. */
export interface StartedSession {
  readonly cookie: string
  readonly session: SessionRecord
  readonly account: AccountRecord
}

/** A live session and its account. */
export interface ActiveSession {
  readonly session: SessionRecord
  readonly account: AccountRecord
}

/** What the portal and `antler accounts` do with accounts and sessions. */
export interface AccountsService {
  /** Spends the setup token, creates the first account and signs it in. */
  setUp(args: { token: string; login: string; password: string; ip: string }): Promise<StartedSession>
  /** `antler accounts create` (the operator). */
  create(args: { login: string; password: string }): Promise<AccountRecord>
  list(): Promise<AccountRecord[]>
  /** Disables (or re-enables) an account by id or sign-in name; its sessions end at once. */
  setDisabled(account: string, disabled: boolean): Promise<AccountRecord>
  /** Checks the password (throttled), then starts a session with a fresh id. */
  signIn(args: { login: string; password: string; ip: string }): Promise<StartedSession>
  signOut(cookie: string, ip: string): Promise<void>
  /** The session a cookie names, if it is live and its account enabled. */
  sessionOf(cookie: string | undefined): Promise<ActiveSession | undefined>
  audit(entry: Omit<AuditEntry, 'atMs' | 'seq'>): Promise<void>
}

const invalid = (field: string, reason: string) =>
  new AntlerError('request_validation_error', { errors: { [field]: [reason] } })

function checkedLogin(login: string): string {
  const normalized = normalizeLogin(login)
  if (!LOGIN_PATTERN.test(normalized))
    throw invalid('login', '3 to 64 characters: letters, digits and . _ @ - (starting with a letter or digit)')
  return normalized
}

function checkedPassword(password: string): string {
  const problem = passwordProblem(password)
  if (problem) throw invalid('password', problem)
  return password
}

export function createAccountsService(deps: {
  store: PortalStore
  now?: () => number
  throttle?: SignInThrottle
}): AccountsService {
  const { store } = deps
  const now = deps.now ?? Date.now
  const throttle = deps.throttle ?? createSignInThrottle(now)
  const checkPassword = createPasswordCheck()
  const audit = (entry: Omit<AuditEntry, 'atMs' | 'seq'>) => store.appendAudit({ ...entry, atMs: now() })

  async function newAccount(login: string, password: string): Promise<AccountRecord> {
    const record: AccountRecord = {
      id: `acc_${randomBytes(8).toString('hex')}`,
      login: checkedLogin(login),
      passwordHash: await hashPassword(checkedPassword(password)),
      createdAtMs: now(),
    }
    await store.insertAccount(record)
    return record
  }

  // Expired sessions are deleted at most once a minute, when a new one starts (sign-ins are rare: no timer needed).
  let prunedAtMs = -Infinity
  async function startSession(account: AccountRecord): Promise<StartedSession> {
    if (now() - prunedAtMs >= 60_000) {
      prunedAtMs = now()
      await store.pruneSessions(now())
    }
    const cookie = randomToken()
    const session: SessionRecord = {
      idHash: tokenHash(cookie),
      accountId: account.id,
      csrfToken: randomToken(),
      createdAtMs: now(),
      expiresAtMs: now() + SESSION_TTL_MS,
    }
    await store.insertSession(session)
    return { cookie, session, account }
  }

  async function accountNamed(account: string): Promise<AccountRecord> {
    const found = (await store.accountById(account)) ?? (await store.accountByLogin(normalizeLogin(account)))
    if (!found) throw new AntlerError('portal_account_not_found_error', { account })
    return found
  }

  return {
    async setUp({ token, login, password, ip }) {
      // Validate first: a typo in the password must not spend the token.
      checkedLogin(login)
      checkedPassword(password)
      // The token creates the first account only: once one exists (made by `antler accounts`), it is dead.
      if ((await store.accountCount()) > 0) throw new AntlerError('portal_setup_token_error', {})
      if (!(await store.useSetupToken(tokenHash(token), now()))) throw new AntlerError('portal_setup_token_error', {})
      const account = await newAccount(login, password)
      await audit({ accountId: account.id, action: 'setup', ip, detail: JSON.stringify({ login: account.login }) })
      return startSession(account)
    },
    async create({ login, password }) {
      const account = await newAccount(login, password)
      await audit({ accountId: account.id, action: 'account_create', ip: 'cli', detail: '{}' })
      return account
    },
    list: () => store.accounts(),
    async setDisabled(account, disabled) {
      const found = await accountNamed(account)
      await store.setAccountDisabled(found.id, disabled ? now() : null)
      await audit({
        accountId: found.id,
        action: disabled ? 'account_disable' : 'account_enable',
        ip: 'cli',
        detail: '{}',
      })
      return (await store.accountById(found.id)) as AccountRecord
    },
    async signIn({ login, password, ip }) {
      const name = normalizeLogin(login).slice(0, 64)
      const wait = throttle.retryAfterSeconds(ip, name)
      if (wait > 0)
        throw new AntlerError('rate_limit_exceeded_error', {
          scope: 'portal sign-in failures',
          limit: SIGN_IN_FAILURES_PER_MINUTE,
          retry_after_seconds: wait,
        })
      // Counted as a failure before the slow check, so attempts sent at once cannot all slip under the limit.
      throttle.failed(ip, name)
      const account = await store.accountByLogin(name)
      const ok = await checkPassword(account?.passwordHash, password)
      if (!ok || !account || account.disabledAtMs !== undefined) {
        await audit({ accountId: account?.id, action: 'login_failed', ip, detail: JSON.stringify({ login: name }) })
        throw new AntlerError('portal_sign_in_failed_error', {})
      }
      throttle.forgive(ip, name)
      await audit({ accountId: account.id, action: 'login', ip, detail: '{}' })
      return startSession(account)
    },
    async signOut(cookie, ip) {
      const active = await this.sessionOf(cookie)
      await store.deleteSession(tokenHash(cookie))
      if (active) await audit({ accountId: active.account.id, action: 'logout', ip, detail: '{}' })
    },
    async sessionOf(cookie) {
      if (!cookie) return undefined
      const session = await store.session(tokenHash(cookie), now())
      if (!session) return undefined
      const account = await store.accountById(session.accountId)
      if (!account || account.disabledAtMs !== undefined) return undefined
      return { session, account }
    },
    audit,
  }
}
