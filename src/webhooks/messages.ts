import { createHash } from 'node:crypto'
import type { Step } from '../store/index.ts'

/**
 * What a webhook delivers: the data of one GraphQL `searchTransactionsForward` event, executed by the GraphQL engine
 * with this selection (the fields of a `SearchTransactionForwardResponse` a receiver needs), so one receiver codebase
 * serves GraphQL subscriptions and webhooks.
 */
export const DELIVERY_DOCUMENT = `subscription ($query: String!, $cursor: String, $low: Int64, $irreversibleOnly: Boolean) {
  searchTransactionsForward(query: $query, cursor: $cursor, lowBlockNum: $low, irreversibleOnly: $irreversibleOnly) {
    undo
    cursor
    isIrreversible
    irreversibleBlockNum
    block { num id timestamp }
    trace { id block { num id timestamp } status matchingActions { seq receiver account name json } }
  }
}`

export type WebhookMessageType = 'antelope.transaction' | 'antelope.transaction.undo' | 'webhook.test'

/** The most a message body may weigh; a bigger one drops its actions' `json` (then actions) and says so. */
export const MAX_BODY_BYTES = 20_000

/**
 * A message's `webhook-id`: the same for every try and replay of one message, different for an apply and its undo and
 * for each time a block is applied again after a fork (`undone`: how many times the block was undone before).
 */
export function messageId(webhookId: string, blockId: string, trxId: string, undo: boolean, undone: number): string {
  const digest = createHash('sha256').update(`${webhookId}\0${blockId}\0${trxId}\0${+undo}\0${undone}`).digest()
  return `msg_${digest.subarray(0, 18).toString('base64url')}`
}

/** How many times the block was undone before step `beforeSeq` (all of them when the message came from history). */
export const undoneBefore = (steps: readonly Step[], beforeSeq = Infinity): number =>
  steps.filter((s) => s.type === 'undo' && s.seq < beforeSeq).length

/** Whether the block was undone after the step that applied it: its matches were forked out. */
export const forkedOutAfter = (steps: readonly Step[], appliedSeq: number): boolean =>
  steps.some((s) => s.type === 'undo' && s.seq > appliedSeq)

interface DeliveryData {
  trace?: { matchingActions?: { json?: unknown }[] } | null
}

/**
 * A message body: `{type, timestamp, data}` with `data` the event's JSON as the GraphQL engine serialized it (spliced
 * in, not parsed again). Over MAX_BODY_BYTES the actions' `json` is left out, then trailing actions, with
 * `truncated: true`; the receiver reads the full trace from the API by its id.
 */
export function messageBody(type: WebhookMessageType, timestamp: string, dataJson: string): string {
  const body = `{"type":${JSON.stringify(type)},"timestamp":${JSON.stringify(timestamp)},"data":${dataJson}}`
  if (Buffer.byteLength(body) <= MAX_BODY_BYTES) return body
  const data = JSON.parse(dataJson) as DeliveryData
  const actions = data.trace?.matchingActions ?? []
  for (const action of actions) action.json = null
  const cut = () => JSON.stringify({ type, timestamp, data, truncated: true })
  let text = cut()
  while (Buffer.byteLength(text) > MAX_BODY_BYTES && actions.length > 1) {
    actions.splice(Math.ceil(actions.length / 2))
    text = cut()
  }
  return text
}
