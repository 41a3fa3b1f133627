import type Database from 'better-sqlite3'
import type { WebhookStore } from '../port.ts'
import type { DeliveryAdvance, WebhookAttemptRecord } from '../types.ts'
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
} from '../webhooks-sql.ts'

type Row = Record<string, unknown>

/**
 * Webhook subscriptions, attempts and the delivery lease of a SQLite store. A read-only store's connection cannot
 * write: its writes fail with the driver's SQLITE_READONLY error.
 */
export function createSqliteWebhooks(db: Database.Database): WebhookStore {
  const s = Object.fromEntries(Object.entries(WEBHOOK_SQL).map(([name, sql]) => [name, db.prepare(sql)])) as Record<
    keyof typeof WEBHOOK_SQL,
    Database.Statement
  >
  // One UPDATE per set of patched fields, prepared once each (a few of them in practice).
  const updates = new Map<string, Database.Statement>()
  const prepared = (sql: string) => updates.get(sql) ?? updates.set(sql, db.prepare(sql)).get(sql)!
  const deleteWithAttempts = db.transaction((id: string) => {
    s.deleteAttemptsOf.run(id)
    return s.delete.run(id).changes > 0
  })
  const advance = db.prepare(DELIVERY_ADVANCE)
  const recordDelivery = db.transaction((attempt: WebhookAttemptRecord, to: DeliveryAdvance) => {
    s.insertAttempt.run(...webhookAttemptParams(attempt))
    return advance.get(...deliveryAdvanceParams(attempt, to)) as Row | undefined
  })
  return {
    async insertWebhook(record) {
      try {
        s.insert.run(...webhookParams(record))
      } catch (error) {
        const code = (error as { code?: string }).code
        if (code === 'SQLITE_CONSTRAINT_PRIMARYKEY') throw StoreWebhookExistsError({ id: record.id })
        throw error
      }
    },
    async webhook(id) {
      const row = s.byId.get(id) as Row | undefined
      return row && webhookFromRow(row)
    },
    async webhooksOf(ownerKeyId) {
      return (s.ofOwner.all(ownerKeyId) as Row[]).map(webhookFromRow)
    },
    async webhookCount(ownerKeyId) {
      return Number((s.countOfOwner.get(ownerKeyId) as { n: number }).n)
    },
    async activeWebhooks() {
      return (s.active.all() as Row[]).map(webhookFromRow)
    },
    async updateWebhook(id, patch, nowMs, expectCursor) {
      const { sql, params } = webhookUpdate(id, patch, nowMs, expectCursor)
      const row = prepared(sql).get(...params) as Row | undefined
      return row && webhookFromRow(row)
    },
    async deleteWebhook(id) {
      return deleteWithAttempts(id)
    },
    async insertWebhookAttempt(attempt) {
      s.insertAttempt.run(...webhookAttemptParams(attempt))
    },
    async recordWebhookDelivery(attempt, to) {
      const row = recordDelivery(attempt, to)
      return row && webhookFromRow(row)
    },
    async webhookAttempts(webhookId, { limit, beforeMs }) {
      return (s.attempts.all(webhookId, beforeMs ?? NO_TIME_BOUND, limit) as Row[]).map(webhookAttemptFromRow)
    },
    async lastWebhookAttempt(webhookId, messageId) {
      const row = s.lastAttemptOf.get(webhookId, messageId) as Row | undefined
      return row && webhookAttemptFromRow(row)
    },
    async pruneWebhookAttempts(beforeMs) {
      return s.pruneAttempts.run(beforeMs).changes
    },
    async claimWebhookLease(holder, nowMs, untilMs) {
      return s.claimLease.run(LEASE_NAME, holder, untilMs, nowMs).changes > 0
    },
    async releaseWebhookLease(holder) {
      s.releaseLease.run(LEASE_NAME, holder)
    },
  }
}
