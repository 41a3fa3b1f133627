import { StreamConsumerTooSlowError } from './errors.ts'
import { Fifo } from './fifo.ts'
import { liveStep } from './sizes.ts'
import type { LiveStep, StepSource, SubscribeArgs, Subscription, SubscriptionState } from './types.ts'

/** What a subscription needs of its hub. */
export interface HubCore {
  readonly source: StepSource
  readonly batchSize: number
  readonly maxQueuedSteps: number
  readonly maxQueuedBytes: number
  /**
   * Up to `limit` ring steps with seq > `seq`, oldest first; undefined when the ring may not hold
   * every step after `seq` (it starts later), unless `evenIfIncomplete`.
   */
  ringAfter(seq: number, limit: number, evenIfIncomplete?: boolean): LiveStep[] | undefined
  /** Runs `read` holding one of the catch-up read permits. */
  withCatchUpPermit<T>(read: () => Promise<T>): Promise<T>
  ready(): Promise<void>
  remove(subscription: LiveSubscription): void
}

/**
 * One subscriber. It starts `catching_up`: it reads the store (or the hub's ring) by itself, one
 * batch at a time, handing each batch to `onSteps` and waiting for it before reading the next; so
 * it holds at most one batch and sets its own pace. Once the ring holds every step after the last
 * one it handed out and the rest fits in one batch, it joins the live fan-out in the same
 * synchronous turn (the shared reader cannot run between the check and the switch): no gap, no
 * duplicate. Live, it queues what the shared reader offers and drains the queue into `onSteps`,
 * one call at a time; a queue over the bounds drops it with `stream_consumer_too_slow_error`.
 */
export class LiveSubscription implements Subscription {
  private current: SubscriptionState = 'catching_up'
  /** The seq of the last step queued or handed out: the next step it takes has a greater one. */
  private next: number
  private delivered: number
  private readonly queue = new Fifo<LiveStep>()
  /** Steps and estimated bytes not yet delivered: queued, plus the batch `onSteps` holds. */
  private pendingSteps = 0
  private pendingBytes = 0
  private draining = false

  constructor(
    private readonly core: HubCore,
    private readonly args: SubscribeArgs,
  ) {
    this.next = Math.max(0, args.afterSeq)
    this.delivered = this.next
  }

  get state(): SubscriptionState {
    return this.current
  }

  get deliveredSeq(): number {
    return this.delivered
  }

  /** Runs the catch-up until the subscription joins the live fan-out (or ends). */
  async start(): Promise<void> {
    try {
      await this.core.ready()
      let storeDry = false
      while (this.current === 'catching_up') {
        const fromRing = this.core.ringAfter(this.next, this.core.batchSize + 1, storeDry)
        if (fromRing) {
          if (fromRing.length <= this.core.batchSize) return this.joinLive(fromRing)
          await this.deliver(fromRing.slice(0, this.core.batchSize))
          continue
        }
        const batch = await this.core.withCatchUpPermit(() => this.readStore())
        if (this.current !== 'catching_up') return
        // The store holds nothing after `next`: whatever the ring holds after it is all there is.
        storeDry = batch.length === 0
        if (batch.length) await this.deliver(batch)
      }
    } catch (error) {
      this.fail(error)
    }
  }

  /** The shared reader's new steps (seq order); ignored unless live. */
  offer(steps: readonly LiveStep[]): void {
    if (this.current !== 'live') return
    for (const s of steps) {
      if (s.step.seq <= this.next) continue
      this.queue.push(s)
      this.pendingSteps++
      this.pendingBytes += s.bytes
      this.next = s.step.seq
    }
    if (this.pendingSteps > this.core.maxQueuedSteps || this.pendingBytes > this.core.maxQueuedBytes) {
      const error = StreamConsumerTooSlowError({
        queuedSteps: this.pendingSteps,
        queuedBytes: this.pendingBytes,
        maxQueuedSteps: this.core.maxQueuedSteps,
        maxQueuedBytes: this.core.maxQueuedBytes,
        deliveredSeq: this.delivered,
      })
      return this.fail(error)
    }
    void this.drain()
  }

  close(): void {
    if (this.current === 'closed') return
    this.end()
  }

  private joinLive(steps: readonly LiveStep[]): void {
    this.current = 'live'
    this.offer(steps)
  }

  private async readStore(): Promise<LiveStep[]> {
    if (this.current !== 'catching_up') return []
    const after = this.next
    const steps = (await this.core.source.stepsAfter(after, this.core.batchSize)).filter((s) => s.seq > after)
    if (steps.length === 0 || this.current !== 'catching_up') return []
    const payloads = await this.core.source.stepPayloads(steps)
    return steps.map((step, i) => liveStep(step, payloads[i]))
  }

  /** Catch-up delivery: hands the batch over and waits for the consumer. */
  private async deliver(steps: readonly LiveStep[]): Promise<void> {
    this.next = steps[steps.length - 1].step.seq
    await this.args.onSteps(steps)
    this.delivered = this.next
  }

  private async drain(): Promise<void> {
    if (this.draining) return
    this.draining = true
    try {
      while (this.current === 'live' && this.queue.length > 0) {
        const batch = this.queue.take(this.core.batchSize)
        await this.args.onSteps(batch)
        if (this.current !== 'live') return
        this.delivered = batch[batch.length - 1].step.seq
        this.pendingSteps -= batch.length
        for (const s of batch) this.pendingBytes -= s.bytes
      }
    } catch (error) {
      this.fail(error)
    } finally {
      this.draining = false
    }
  }

  private fail(error: unknown): void {
    if (this.current === 'closed') return
    this.end()
    try {
      this.args.onError(error)
    } catch {
      // The subscriber's error handler failing must not reach the shared reader.
    }
  }

  private end(): void {
    this.current = 'closed'
    this.queue.clear()
    this.pendingSteps = 0
    this.pendingBytes = 0
    this.core.remove(this)
  }
}
