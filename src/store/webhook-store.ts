import type { WebhookStore } from './port.ts'
import { readAll, readCount, readOne, unlessTaken, type RecordsDialect } from './records-dialect.ts'
import { awaited, changesOf, rowsOf, type SqlRoutine, type SqlRunner } from './sql-routine.ts'
import type { WebhookRecord } from './types.ts'
import {
  DELIVERY_ADVANCE,
  deliveryAdvanceParams,
  LEASE_NAME,
  NO_TIME_BOUND,
  StoreWebhookExistsError,
  WEBHOOK_SQL,
  webhookAttemptFromRow,
  webhookAttemptParams,
  webhookFromRow,
  webhookParams,
  webhookUpdate,
} from './webhooks-sql.ts'

type Row = Record<string, unknown>

/**
 * Inserts `record` unless its owner already has `limit` subscriptions, inside a write transaction: the owner's inserts
 * take turns (the dialect's lock, or SQLite's one writer), so each counts what the ones before it inserted and
 * concurrent creates (two replicas) never pass the limit together. Answers whether it inserted.
 */
function* insertWithinLimit(
  d: RecordsDialect,
  sql: SqlRunner,
  record: WebhookRecord,
  limit: number,
): SqlRoutine<boolean> {
  const { lockOwner } = d.statements
  if (lockOwner) yield* awaited(sql.run(lockOwner, [record.ownerKeyId]))
  const [{ n }] = yield* awaited(sql.rows<{ n: number | string }>(WEBHOOK_SQL.countOfOwner, [record.ownerKeyId]))
  if (Number(n) >= limit) return false
  yield* awaited(sql.run(WEBHOOK_SQL.insert, webhookParams(record)))
  return true
}

/**
 * Webhook subscriptions, attempts and the delivery lease, on either adapter. Subscriptions and the lease are written
 * through the dialect's writes; attempts and cursor advances (thousands a second) through its deliveries.
 */
export function createWebhookStore(d: RecordsDialect): WebhookStore {
  const { reads, writes, deliveries } = d
  return {
    async insertWebhook(record, limit) {
      const insert =
        limit === undefined
          ? writes.run(changesOf(WEBHOOK_SQL.insert, webhookParams(record))).then(() => true)
          : writes.transaction((sql) => insertWithinLimit(d, sql, record, limit))
      return unlessTaken(d, insert, () => StoreWebhookExistsError({ id: record.id }))
    },
    webhook: (id) => readOne(reads, WEBHOOK_SQL.byId, [id], webhookFromRow),
    webhooksOf: (ownerKeyId) => readAll(reads, WEBHOOK_SQL.ofOwner, [ownerKeyId], webhookFromRow),
    webhookCount: (ownerKeyId) => readCount(reads, WEBHOOK_SQL.countOfOwner, [ownerKeyId]),
    activeWebhooks: () => readAll(reads, WEBHOOK_SQL.active, [], webhookFromRow),
    updateWebhook(id, patch, nowMs, expectCursor) {
      const { sql, params } = webhookUpdate(id, patch, nowMs, expectCursor)
      return readOne(writes, sql, params, webhookFromRow)
    },
    deleteWebhook: (id) =>
      writes.transaction(function* (sql) {
        yield* awaited(sql.run(WEBHOOK_SQL.deleteAttemptsOf, [id]))
        return (yield* awaited(sql.run(WEBHOOK_SQL.delete, [id]))) > 0
      }),
    async insertWebhookAttempt(attempt) {
      await deliveries.run(changesOf(WEBHOOK_SQL.insertAttempt, webhookAttemptParams(attempt)))
    },
    async recordWebhookDelivery(attempt, advance) {
      const attemptParams = webhookAttemptParams(attempt)
      const advanceParams = deliveryAdvanceParams(attempt, advance)
      const { recordDelivery } = d.statements
      const [row] = recordDelivery
        ? await deliveries.run(rowsOf(recordDelivery, [...attemptParams, ...advanceParams]))
        : await deliveries.transaction(function* (sql) {
            yield* awaited(sql.run(WEBHOOK_SQL.insertAttempt, attemptParams))
            return yield* awaited(sql.rows<Row>(DELIVERY_ADVANCE, advanceParams))
          })
      return row && webhookFromRow(row)
    },
    webhookAttempts: (webhookId, { limit, beforeMs }) =>
      readAll(reads, WEBHOOK_SQL.attempts, [webhookId, beforeMs ?? NO_TIME_BOUND, limit], webhookAttemptFromRow),
    lastWebhookAttempt: (webhookId, messageId) =>
      readOne(reads, WEBHOOK_SQL.lastAttemptOf, [webhookId, messageId], webhookAttemptFromRow),
    pruneWebhookAttempts: (beforeMs) => writes.run(changesOf(WEBHOOK_SQL.pruneAttempts, [beforeMs])),
    async claimWebhookLease(holder, nowMs, untilMs) {
      return (await writes.run(changesOf(WEBHOOK_SQL.claimLease, [LEASE_NAME, holder, untilMs, nowMs]))) > 0
    },
    async releaseWebhookLease(holder) {
      await writes.run(changesOf(WEBHOOK_SQL.releaseLease, [LEASE_NAME, holder]))
    },
  }
}
