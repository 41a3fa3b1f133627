import { formatRfc3339 } from '../antelope/index.ts'
import type { GraphqlRuntime, PayloadEncoding, PreparedOperation } from '../graphql/index.ts'
import type { Step, StepReader, WebhookFinality } from '../store/index.ts'
import { DELIVERY_DOCUMENT, forkedOutAfter, messageBody, messageId, undoneBefore } from './messages.ts'

/** What turns a subscription's position into its messages. */
export interface MessageSource {
  readonly store: Pick<StepReader, 'stepsOfBlock'>
  readonly graphql: GraphqlRuntime
  /** DELIVERY_DOCUMENT, prepared once by the runtime (each subscription gives its variables). */
  readonly operation: PreparedOperation
  /** A delivery's payload: the subscription field's result as JSON text (shared per event and shape). */
  readonly encoding: PayloadEncoding<string>
  /** The step of an event and the steps of its block, shared by the subscriptions that meet the same event. */
  readonly eventSteps: EventSteps
}

/** An event's step (from its cursor) and its block's steps (fork checks, message ids), shared between subscriptions. */
export interface EventSteps {
  /** The step in the event's cursor (decoded once per event object). */
  stepOf(event: DeliveryEvent, decode: () => StepRef): StepRef
  /** The steps of a block (read once per block while the live hub's last step stays). */
  stepsOf(blockId: string, read: () => Promise<Step[]>): Promise<readonly Step[]>
}

type StepRef = { readonly seq: number; readonly undo: boolean } | undefined

/** Blocks whose steps are kept at once (a burst of catching-up subscriptions touches a few hundred). */
const KEPT_BLOCKS = 4096

/**
 * One read of a block's steps for all the subscriptions that meet it, kept while `stamp` (the live hub's last step)
 * stays: a later step may undo the block, and a subscription meeting the block after it must see that. Subscriptions
 * catching up from different places get different event objects for one block (their LIB differs), so steps are kept
 * by block, the cursor's step by event.
 */
export function createEventSteps(stamp: (() => number) | undefined): EventSteps {
  const steps = new WeakMap<object, StepRef>()
  const blocks = new Map<string, Promise<readonly Step[]>>()
  let keptAt: number | undefined
  return {
    stepOf(event, decode) {
      if (steps.has(event)) return steps.get(event)
      const step = decode()
      steps.set(event, step)
      return step
    },
    stepsOf(blockId, read) {
      if (!stamp) return read()
      const now = stamp()
      if (now !== keptAt || blocks.size >= KEPT_BLOCKS) {
        blocks.clear()
        keptAt = now
      }
      let kept = blocks.get(blockId)
      if (!kept) {
        blocks.set(blockId, (kept = read()))
        kept.catch(() => blocks.delete(blockId))
      }
      return kept
    },
  }
}

/** Where a subscription's messages start: after a cursor, or from a block when it has none. */
export interface MessagesFrom {
  readonly webhookId: string
  readonly query: string
  readonly finality: WebhookFinality
  readonly cursor: string
  readonly startBlock: number
}

/** One message, ready to sign and send. */
export interface DeliveryMessage {
  readonly id: string
  readonly body: string
  /** The cursor the subscription holds once this message is acknowledged. */
  readonly cursor: string
  readonly blockNum: number
}

/** An event of the delivery subscription: a `SearchTransactionForwardResponse` before execution. */
interface DeliveryEvent {
  readonly undo: boolean
  readonly cursor: string
  readonly block: { readonly id: string; readonly num: number; readonly timestamp: number }
  readonly trace: { readonly id: string } | null
}

/** Where a message follows: the cursor it comes after, or `block:<n>` when it follows no cursor (the attempt log). */
export const positionOf = (from: Pick<MessagesFrom, 'cursor' | 'startBlock'>) =>
  from.cursor || `block:${from.startBlock}`

/** The inverse of positionOf. */
export const fromPosition = (position: string): Pick<MessagesFrom, 'cursor' | 'startBlock'> =>
  position.startsWith('block:')
    ? { cursor: '', startBlock: Number(position.slice(6)) }
    : { cursor: position, startBlock: 1 }

/**
 * A subscription's messages from a position, in order, as the GraphQL forward subscription yields its events (the
 * same execution and serialization, shared per event): a match forked out before it was delivered is dropped, and so
 * is its undo; ids follow messageId. Answers the reason when the subscription cannot start (a cursor of another
 * store, a query that no longer parses). `close()` ends it, also while it waits for the chain.
 */
export async function openDeliveryMessages(
  source: MessageSource,
  from: MessagesFrom,
): Promise<{ messages: AsyncGenerator<DeliveryMessage>; close(): void } | { refused: string }> {
  const variables = from.cursor
    ? { query: from.query, cursor: from.cursor, irreversibleOnly: from.finality === 'irreversible' }
    : { query: from.query, low: from.startBlock, irreversibleOnly: from.finality === 'irreversible' }
  const operation = { ...source.operation, request: { query: DELIVERY_DOCUMENT, variables } }
  const started = await source.graphql.subscribe(operation, source.graphql.context(), source.encoding)
  if (!('events' in started))
    return { refused: started.errors?.map((e) => e.message).join('; ') || 'the subscription could not start' }
  const { events, payload } = started
  async function* messages(): AsyncGenerator<DeliveryMessage> {
    const forkedOut = new Set<string>()
    for (;;) {
      const next = await events.next()
      if (next.done) return
      const event = next.value as DeliveryEvent
      if (!event.trace) continue
      const match = `${event.block.id}:${event.trace.id}`
      const step = source.eventSteps.stepOf(event, () => source.graphql.services.cursors.decode(event.cursor).step)
      const steps = await source.eventSteps.stepsOf(event.block.id, () => source.store.stepsOfBlock(event.block.id))
      if (event.undo && forkedOut.delete(match)) continue
      if (!event.undo && step && forkedOutAfter(steps, step.seq)) {
        forkedOut.add(match)
        continue
      }
      const id = messageId(from.webhookId, event.block.id, event.trace.id, event.undo, undoneBefore(steps, step?.seq))
      const type = event.undo ? 'antelope.transaction.undo' : 'antelope.transaction'
      const body = messageBody(type, formatRfc3339(event.block.timestamp), await payload(event))
      yield { id, body, cursor: event.cursor, blockNum: event.block.num }
    }
  }
  return { messages: messages(), close: () => void events.return?.() }
}
