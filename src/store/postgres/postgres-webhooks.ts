import type pg from 'pg'
import { numbered } from '../common-sql.ts'
import type { WebhookStore } from '../port.ts'
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
  type WebhookSqlValue,
} from '../webhooks-sql.ts'
import { inTransaction } from './in-transaction.ts'

/** PostgreSQL's unique_violation: the id is taken. */
const UNIQUE_VIOLATION = '23505'

/** The compare-and-set and the delete run in a transaction begun READ WRITE (see the writes pool below). */
const READ_WRITE = 'BEGIN READ WRITE'

/** recordWebhookDelivery in one statement and one round trip: the attempt's insert runs as a CTE beside the CAS. */
const RECORD_DELIVERY = numbered(`WITH attempt AS (${WEBHOOK_SQL.insertAttempt}) ${DELIVERY_ADVANCE}`)

const SQL = Object.fromEntries(Object.entries(WEBHOOK_SQL).map(([name, sql]) => [name, numbered(sql)])) as Record<
  keyof typeof WEBHOOK_SQL,
  string
>

/**
 * Webhook subscriptions, attempts and the delivery lease of a PostgreSQL store, writable on a read-only one too:
 * writes go through `writes`, a pool of their own whose connections allow writes (a read-only store's default to
 * read-only transactions, for chain data), so each is one statement and one round trip, and thousands of deliveries
 * a second do not queue behind the store's reads.
 */
export function createPostgresWebhooks(
  pool: pg.Pool,
  writes: pg.Pool = pool,
  deliveries: pg.Pool = writes,
): WebhookStore {
  const write = (sql: string, params: WebhookSqlValue[]) => writes.query(sql, params)
  // Attempts and cursor advances: many a second, safe to lose on a database crash (open-pool.ts).
  const deliveryWrite = (sql: string, params: WebhookSqlValue[]) => deliveries.query(sql, params)
  return {
    async insertWebhook(record) {
      try {
        await write(SQL.insert, webhookParams(record))
      } catch (error) {
        if ((error as { code?: string }).code === UNIQUE_VIOLATION) throw StoreWebhookExistsError({ id: record.id })
        throw error
      }
    },
    async webhook(id) {
      const row = (await pool.query(SQL.byId, [id])).rows[0]
      return row && webhookFromRow(row)
    },
    async webhooksOf(ownerKeyId) {
      return (await pool.query(SQL.ofOwner, [ownerKeyId])).rows.map(webhookFromRow)
    },
    async webhookCount(ownerKeyId) {
      return Number((await pool.query<{ n: string }>(SQL.countOfOwner, [ownerKeyId])).rows[0].n)
    },
    async activeWebhooks() {
      return (await pool.query(SQL.active)).rows.map(webhookFromRow)
    },
    async updateWebhook(id, patch, nowMs, expectCursor) {
      const { sql, params } = webhookUpdate(id, patch, nowMs, expectCursor)
      const row = (await write(numbered(sql), params)).rows[0]
      return row && webhookFromRow(row)
    },
    async deleteWebhook(id) {
      return inTransaction(
        writes,
        async (client) => {
          await client.query(SQL.deleteAttemptsOf, [id])
          return ((await client.query(SQL.delete, [id])).rowCount ?? 0) > 0
        },
        READ_WRITE,
      )
    },
    async insertWebhookAttempt(attempt) {
      await deliveryWrite(SQL.insertAttempt, webhookAttemptParams(attempt))
    },
    async recordWebhookDelivery(attempt, advance) {
      const params = [...webhookAttemptParams(attempt), ...deliveryAdvanceParams(attempt, advance)]
      const row = (await deliveryWrite(RECORD_DELIVERY, params)).rows[0]
      return row && webhookFromRow(row)
    },
    async webhookAttempts(webhookId, { limit, beforeMs }) {
      const rows = await pool.query(SQL.attempts, [webhookId, beforeMs ?? NO_TIME_BOUND, limit])
      return rows.rows.map(webhookAttemptFromRow)
    },
    async lastWebhookAttempt(webhookId, messageId) {
      const row = (await pool.query(SQL.lastAttemptOf, [webhookId, messageId])).rows[0]
      return row && webhookAttemptFromRow(row)
    },
    async pruneWebhookAttempts(beforeMs) {
      return (await write(SQL.pruneAttempts, [beforeMs])).rowCount ?? 0
    },
    async claimWebhookLease(holder, nowMs, untilMs) {
      return ((await write(SQL.claimLease, [LEASE_NAME, holder, untilMs, nowMs])).rowCount ?? 0) > 0
    },
    async releaseWebhookLease(holder) {
      await write(SQL.releaseLease, [LEASE_NAME, holder])
    },
  }
}
