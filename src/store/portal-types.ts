// The records of the management portal: accounts, sessions, the audit log, key usage and per-key limits.

/** Per-key overrides of the per-type limits (src/auth/limits.ts): calls per minute per IP, tokens issued per hour. */
export interface ApiKeyLimits {
  readonly callsPerMinute?: number
  readonly tokensPerHour?: number
}

/** The fields of an API key the portal changes (absent: unchanged). */
export interface ApiKeyPatch {
  readonly name?: string
  readonly origins?: readonly string[]
  /** null clears every override. */
  readonly limits?: ApiKeyLimits | null
}

/** A portal account: it owns API keys (and, through them, webhooks). */
export interface AccountRecord {
  /** `acc_…`, unique. */
  readonly id: string
  /** The sign-in name, lower case, unique. */
  readonly login: string
  /** The password's hash in PHC string form (argon2id); never the password. */
  readonly passwordHash: string
  readonly createdAtMs: number
  /** Set while the account is disabled (`antler accounts disable`): it cannot sign in, its sessions end. */
  readonly disabledAtMs?: number
}

/** A portal session, stored under the SHA-256 of its id (the cookie holds the id). */
export interface SessionRecord {
  readonly idHash: string
  readonly accountId: string
  /** The token every state-changing request of this session must carry. */
  readonly csrfToken: string
  readonly createdAtMs: number
  readonly expiresAtMs: number
}

/** One line of the audit log: who did what, when, from where, to which key. Never a secret. */
export interface AuditEntry {
  /** Increasing; absent when appending. */
  readonly seq?: number
  readonly atMs: number
  /** The account that acted; absent for the operator (CLI) or an unknown sign-in name. */
  readonly accountId?: string
  /** `login`, `login_failed`, `logout`, `setup`, `key_create`, `key_edit`, `key_rotate`, `key_revoke`, `webhook_*`… */
  readonly action: string
  readonly ip: string
  readonly keyId?: string
  /** A few facts as JSON text (names, types, origins, grace): never a key string, password or secret. */
  readonly detail: string
}

/** Requests of one key in one hour, by outcome, and the documents they served. */
export interface KeyUsageRecord {
  readonly keyId: string
  /** The hour's start (ms, UTC, a multiple of 3,600,000). */
  readonly hourMs: number
  readonly ok: number
  /** 4xx other than auth failures and 429. */
  readonly clientErrors: number
  readonly authFailures: number
  readonly rateLimited: number
  readonly documents: number
}
