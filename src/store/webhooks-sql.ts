import { AntlerError } from '../antelope/index.ts'
import type { DeliveryAdvance, WebhookAttemptRecord, WebhookFinality, WebhookPatch, WebhookRecord } from './types.ts'

/** A parameter of the webhook statements. */
export type WebhookSqlValue = string | number | null

/**
 * The webhook tables, declared alike in both schemas but for the 64-bit integer type and the attempts' own key (an
 * increasing number that orders attempts of the same millisecond and try). Booleans are 0/1 integers and optional
 * objects are nullable columns, so every statement below runs unchanged on both adapters. The lease is one row
 * (`name` 'delivery') that a dispatcher takes for a while and renews.
 */
export const webhookTablesDdl = (integer: 'BIGINT' | 'INTEGER', attemptKey: string) => `
CREATE TABLE IF NOT EXISTS webhooks (
  id TEXT PRIMARY KEY, owner_key_id TEXT NOT NULL, url TEXT NOT NULL, query TEXT NOT NULL, finality TEXT NOT NULL,
  secret TEXT NOT NULL, previous_secret TEXT, previous_secret_until_ms ${integer}, paused INTEGER NOT NULL,
  disabled_reason TEXT, disabled_at_ms ${integer}, cursor TEXT NOT NULL, start_block ${integer} NOT NULL,
  failing_since_ms ${integer}, created_at_ms ${integer} NOT NULL, updated_at_ms ${integer} NOT NULL
);
CREATE INDEX IF NOT EXISTS webhooks_owner ON webhooks (owner_key_id, created_at_ms, id);
CREATE TABLE IF NOT EXISTS webhook_attempts (
  seq ${attemptKey}, webhook_id TEXT NOT NULL, message_id TEXT NOT NULL, attempt INTEGER NOT NULL,
  at_ms ${integer} NOT NULL, status INTEGER, duration_ms ${integer} NOT NULL, error TEXT, response_body TEXT,
  after_position TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS webhook_attempts_of ON webhook_attempts (webhook_id, at_ms);
CREATE INDEX IF NOT EXISTS webhook_attempts_at ON webhook_attempts (at_ms);
CREATE INDEX IF NOT EXISTS webhook_attempts_message ON webhook_attempts (webhook_id, message_id);
CREATE TABLE IF NOT EXISTS webhook_lease (name TEXT PRIMARY KEY, holder TEXT NOT NULL, until_ms ${integer} NOT NULL);
`

const COLUMNS =
  'id, owner_key_id, url, query, finality, secret, previous_secret, previous_secret_until_ms, paused, ' +
  'disabled_reason, disabled_at_ms, cursor, start_block, failing_since_ms, created_at_ms, updated_at_ms'
const ATTEMPT_COLUMNS =
  'webhook_id, message_id, attempt, at_ms, status, duration_ms, error, response_body, after_position'
const ACTIVE = 'paused = 0 AND disabled_at_ms IS NULL'

/** The one lease's row name (a parameter, so that no statement quotes a string). */
export const LEASE_NAME = 'delivery'

/** An attempt time above any real one: `webhookAttempts` without `beforeMs`. */
export const NO_TIME_BOUND = Number.MAX_SAFE_INTEGER

/**
 * The webhook statements both adapters run (placeholders `?`; the PostgreSQL adapter numbers them). The lease is
 * taken by one upsert whose update applies only when the row is the holder's own or expired (parameters: name,
 * holder, until, now): no other holder can slip in between a read and a write.
 */
export const WEBHOOK_SQL = {
  insert: `INSERT INTO webhooks (${COLUMNS}) VALUES (${Array(16).fill('?').join(', ')})`,
  byId: `SELECT ${COLUMNS} FROM webhooks WHERE id = ?`,
  ofOwner: `SELECT ${COLUMNS} FROM webhooks WHERE owner_key_id = ? ORDER BY created_at_ms, id`,
  countOfOwner: 'SELECT count(*) AS n FROM webhooks WHERE owner_key_id = ?',
  active: `SELECT ${COLUMNS} FROM webhooks WHERE ${ACTIVE} ORDER BY created_at_ms, id`,
  deleteAttemptsOf: 'DELETE FROM webhook_attempts WHERE webhook_id = ?',
  delete: 'DELETE FROM webhooks WHERE id = ?',
  insertAttempt: `INSERT INTO webhook_attempts (${ATTEMPT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  lastAttemptOf: `SELECT ${ATTEMPT_COLUMNS} FROM webhook_attempts WHERE webhook_id = ? AND message_id = ?
    ORDER BY at_ms DESC, attempt DESC, seq DESC LIMIT 1`,
  attempts: `SELECT ${ATTEMPT_COLUMNS} FROM webhook_attempts WHERE webhook_id = ? AND at_ms < ?
    ORDER BY at_ms DESC, attempt DESC, seq DESC LIMIT ?`,
  pruneAttempts: 'DELETE FROM webhook_attempts WHERE at_ms < ?',
  claimLease: `INSERT INTO webhook_lease (name, holder, until_ms) VALUES (?, ?, ?)
    ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until_ms = excluded.until_ms
    WHERE webhook_lease.holder = excluded.holder OR webhook_lease.until_ms <= ?`,
  releaseLease: 'DELETE FROM webhook_lease WHERE name = ? AND holder = ?',
} as const

/** The parameters of `WEBHOOK_SQL.insert`. */
export function webhookParams(r: WebhookRecord): WebhookSqlValue[] {
  return [
    r.id,
    r.ownerKeyId,
    r.url,
    r.query,
    r.finality,
    r.secret,
    r.previousSecret?.secret ?? null,
    r.previousSecret?.untilMs ?? null,
    r.paused ? 1 : 0,
    r.disabled?.reason ?? null,
    r.disabled?.atMs ?? null,
    r.cursor,
    r.startBlock,
    r.failingSinceMs ?? null,
    r.createdAtMs,
    r.updatedAtMs,
  ]
}

/** The columns each patch field sets (given a defined value; `null` clears). */
const PATCH_COLUMNS: {
  readonly [K in keyof WebhookPatch]-?: (value: Exclude<WebhookPatch[K], undefined>) => [string, WebhookSqlValue][]
} = {
  url: (v) => [['url', v]],
  query: (v) => [['query', v]],
  finality: (v) => [['finality', v]],
  secret: (v) => [['secret', v]],
  previousSecret: (v) => [
    ['previous_secret', v?.secret ?? null],
    ['previous_secret_until_ms', v?.untilMs ?? null],
  ],
  paused: (v) => [['paused', v ? 1 : 0]],
  disabled: (v) => [
    ['disabled_reason', v?.reason ?? null],
    ['disabled_at_ms', v?.atMs ?? null],
  ],
  cursor: (v) => [['cursor', v]],
  startBlock: (v) => [['start_block', v]],
  failingSinceMs: (v) => [['failing_since_ms', v]],
}

/**
 * The UPDATE of `updateWebhook`: the patch's fields and `updated_at_ms`, answering the new row (RETURNING, in both
 * adapters); with `expectCursor`, only a row whose cursor is still that one (one statement: a compare-and-set).
 * Column names come from PATCH_COLUMNS only, never from the patch.
 */
export function webhookUpdate(
  id: string,
  patch: WebhookPatch,
  nowMs: number,
  expectCursor?: string,
): { sql: string; params: WebhookSqlValue[] } {
  const sets: [string, WebhookSqlValue][] = []
  for (const field of Object.keys(PATCH_COLUMNS) as (keyof WebhookPatch)[]) {
    const value = patch[field]
    if (value === undefined) continue
    const columns = PATCH_COLUMNS[field] as (v: unknown) => [string, WebhookSqlValue][]
    sets.push(...columns(value))
  }
  sets.push(['updated_at_ms', nowMs])
  const where = expectCursor === undefined ? 'id = ?' : 'id = ? AND cursor = ?'
  return {
    sql: `UPDATE webhooks SET ${sets.map(([c]) => `${c} = ?`).join(', ')} WHERE ${where} RETURNING ${COLUMNS}`,
    params: [...sets.map(([, v]) => v), id, ...(expectCursor === undefined ? [] : [expectCursor])],
  }
}

/**
 * The delivery write of recordWebhookDelivery (PostgreSQL: one statement, the attempt's insert in a data-modifying
 * CTE, which runs whether or not the compare-and-set matches). Parameters: the attempt's, then deliveryAdvanceParams.
 */
export const DELIVERY_ADVANCE = `UPDATE webhooks SET cursor = ?, failing_since_ms = NULL, updated_at_ms = ?
  WHERE id = ? AND cursor = ? RETURNING ${COLUMNS}`

/** The parameters of DELIVERY_ADVANCE. */
export function deliveryAdvanceParams(attempt: WebhookAttemptRecord, advance: DeliveryAdvance): WebhookSqlValue[] {
  return [advance.cursor, advance.nowMs, attempt.webhookId, advance.expectCursor]
}

/** The parameters of `WEBHOOK_SQL.insertAttempt`. */
export function webhookAttemptParams(a: WebhookAttemptRecord): WebhookSqlValue[] {
  return [a.webhookId, a.messageId, a.attempt, a.atMs, a.status, a.durationMs, a.error, a.responseBody, a.afterPosition]
}

const nullableNumber = (v: unknown) => (v === null || v === undefined ? undefined : Number(v))

/** A `webhooks` row of either adapter as a record (64-bit integers may come back as strings); absent stays absent. */
export function webhookFromRow(r: Record<string, unknown>): WebhookRecord {
  const previousUntil = nullableNumber(r.previous_secret_until_ms)
  const disabledAt = nullableNumber(r.disabled_at_ms)
  const failingSinceMs = nullableNumber(r.failing_since_ms)
  return {
    id: r.id as string,
    ownerKeyId: r.owner_key_id as string,
    url: r.url as string,
    query: r.query as string,
    finality: r.finality as WebhookFinality,
    secret: r.secret as string,
    ...(r.previous_secret === null || previousUntil === undefined
      ? {}
      : { previousSecret: { secret: r.previous_secret as string, untilMs: previousUntil } }),
    paused: Number(r.paused) === 1,
    ...(disabledAt === undefined ? {} : { disabled: { reason: r.disabled_reason as string, atMs: disabledAt } }),
    cursor: r.cursor as string,
    startBlock: Number(r.start_block),
    ...(failingSinceMs === undefined ? {} : { failingSinceMs }),
    createdAtMs: Number(r.created_at_ms),
    updatedAtMs: Number(r.updated_at_ms),
  }
}

/** A `webhook_attempts` row of either adapter as a record. */
export function webhookAttemptFromRow(r: Record<string, unknown>): WebhookAttemptRecord {
  return {
    webhookId: r.webhook_id as string,
    messageId: r.message_id as string,
    attempt: Number(r.attempt),
    atMs: Number(r.at_ms),
    status: r.status === null ? null : Number(r.status),
    durationMs: Number(r.duration_ms),
    error: r.error as string | null,
    responseBody: r.response_body as string | null,
    afterPosition: r.after_position as string,
  }
}

/** The subscription id is already stored (ids are random: a caller's mistake if ever seen). */
export function StoreWebhookExistsError(args: { id: string }): AntlerError {
  return new AntlerError('store_webhook_exists_error', args)
}
