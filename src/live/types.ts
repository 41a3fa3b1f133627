import type { FailureLogger } from '../antelope/index.ts'
import type { Step, StepPayload, Store } from '../store/index.ts'

/**
 * What the hub reads: the step log, one payload per step, and where the store stands (to find the
 * newest step when the hub starts). A `Store` satisfies it.
 */
export type StepSource = Pick<Store, 'stepsAfter' | 'stepsOfBlock' | 'position'> & {
  /** One payload per step, in the order asked; undefined for a step whose content is past the store's retention. */
  stepPayloads(steps: readonly Step[]): Promise<(StepPayload | undefined)[]>
}

/** One step as the hub delivers it. */
export interface LiveStep {
  readonly step: Step
  /** What the step's block held; undefined when `pastRetention`. */
  readonly payload: StepPayload | undefined
  /**
   * True when the store no longer holds the step's content (an old undo read by a late catch-up): the step is real, its
   * content is gone.
   */
  readonly pastRetention: boolean
  /** Estimated memory held by the payload, in bytes: what the byte bounds count. */
  readonly bytes: number
}

export interface LiveHubOptions {
  readonly source: StepSource
  /**
   * How often the hub reads the store without being woken, in ms (`antler api`, which shares no
   * process with the indexer). 0 turns polling off: the process calls `notify()` after each commit
   * (the indexer shares the process) or `wake()` on a database notification. Default 200.
   */
  readonly pollIntervalMs?: number
  /**
   * Steps per store read, for the shared reader and for each catch-up; also the most steps one `onSteps` call receives.
   * Default 64.
   */
  readonly batchSize?: number
  /** The most recent steps (with payloads) the hub keeps for subscriptions starting slightly behind. Default 1024. */
  readonly ringSize?: number
  /** The ring's byte bound (estimated payload bytes); the oldest steps go first. Default 64 MiB. */
  readonly ringBytes?: number
  /**
   * A live subscription holding more undelivered steps than this is dropped (`stream_consumer_too_slow_error`). Default
   * 4096.
   */
  readonly maxQueuedSteps?: number
  /** A live subscription holding more undelivered bytes (estimated) than this is dropped. Default 32 MiB. */
  readonly maxQueuedBytes?: number
  /** Store reads catching-up subscriptions may run at once (the rest wait their turn). Default 4. */
  readonly catchUpConcurrency?: number
  /** After a failed shared read, the delay before the hub tries again on its own, in ms. Default 1000. */
  readonly retryDelayMs?: number
  /**
   * Where failed shared reads are logged (the hub retries; subscriptions are not told): the first of a kind in full,
   * repeats as a count (createFailureLog).
   */
  readonly log?: FailureLogger
}

export interface SubscribeArgs {
  /** Deliver every step with a greater seq (0: the whole log the store still holds). */
  readonly afterSeq: number
  /**
   * Receives steps in seq order, each exactly once, in batches; the next call waits for the
   * returned promise. A throw or rejection ends the subscription with that error (`onError`).
   */
  readonly onSteps: (steps: readonly LiveStep[]) => void | Promise<void>
  /**
   * Called once when the hub drops the subscription: too slow (`stream_consumer_too_slow_error`), a failed catch-up
   * read, or `onSteps` failing. Never after `close()`.
   */
  readonly onError: (error: unknown) => void
}

export type SubscriptionState = 'catching_up' | 'live' | 'closed'

export interface Subscription {
  /**
   * `catching_up` while reading the store or the ring at its own pace, `live` once fed by the shared reader, `closed`
   * after close() or a drop.
   */
  readonly state: SubscriptionState
  /** The seq of the last step handed to `onSteps` (afterSeq before any). */
  readonly deliveredSeq: number
  /** Stops deliveries; an `onSteps` call in flight is not interrupted. */
  close(): void
}

export interface LiveHub {
  /** The newest step the shared reader has read (0 until `ready()`). */
  readonly lastSeq: number
  /** Resolves once the hub knows where the step log ends (its first read of the store). */
  ready(): Promise<void>
  /** New steps may exist (called in-process after each indexer commit): one more read, coalesced with any in flight. */
  notify(): void
  /** The same as `notify()`, for an external wake-up (PostgreSQL LISTEN/NOTIFY). */
  wake(): void
  subscribe(args: SubscribeArgs): Subscription
  /** Live subscriptions (catching up or live). */
  readonly subscriptionCount: number
  /** Stops the reader and every subscription (without `onError`); resolves once a read in flight has settled. */
  close(): Promise<void>
}
