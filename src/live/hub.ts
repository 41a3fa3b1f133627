import { createFailureLog } from '../antelope/index.ts'
import { Fifo } from './fifo.ts'
import { liveStep } from './sizes.ts'
import { LiveSubscription, type HubCore } from './subscription.ts'
import type { LiveHub, LiveHubOptions, LiveStep, SubscribeArgs, Subscription } from './types.ts'

/** The defaults of LiveHubOptions (documented there and in docs/ARCHITECTURE.md). */
export const LIVE_HUB_DEFAULTS = {
  pollIntervalMs: 200,
  batchSize: 64,
  ringSize: 1024,
  ringBytes: 64 * 1024 * 1024,
  maxQueuedSteps: 4096,
  maxQueuedBytes: 32 * 1024 * 1024,
  catchUpConcurrency: 4,
  retryDelayMs: 1000,
} as const

function positiveInteger(name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min)
    throw new RangeError(`live hub: ${name} must be an integer ≥ ${min}, got ${value}`)
  return value
}

/**
 * The live hub: ONE reader of the step log (`stepsAfter`, then `stepPayloads`, in batches) fanning
 * out to every subscription. The reader runs when woken (`notify()`/`wake()`) or every
 * `pollIntervalMs`, never twice at once: a wake-up during a read asks for one more read after it,
 * however many arrive. It keeps the newest steps in a ring bounded by steps and bytes, from which
 * subscriptions starting slightly behind join without a store read. Delivering is each
 * subscription's business (its own queue and pace): the shared loop only queues, never awaits a
 * subscriber.
 */
export function createLiveHub(options: LiveHubOptions): LiveHub {
  const source = options.source
  const pollIntervalMs = positiveInteger(
    'pollIntervalMs',
    options.pollIntervalMs ?? LIVE_HUB_DEFAULTS.pollIntervalMs,
    0,
  )
  const batchSize = positiveInteger('batchSize', options.batchSize ?? LIVE_HUB_DEFAULTS.batchSize, 1)
  const ringSize = positiveInteger('ringSize', options.ringSize ?? LIVE_HUB_DEFAULTS.ringSize, 0)
  const ringBytesMax = positiveInteger('ringBytes', options.ringBytes ?? LIVE_HUB_DEFAULTS.ringBytes, 0)
  const maxQueuedSteps = positiveInteger(
    'maxQueuedSteps',
    options.maxQueuedSteps ?? LIVE_HUB_DEFAULTS.maxQueuedSteps,
    batchSize,
  )
  const maxQueuedBytes = positiveInteger(
    'maxQueuedBytes',
    options.maxQueuedBytes ?? LIVE_HUB_DEFAULTS.maxQueuedBytes,
    0,
  )
  const catchUpConcurrency = positiveInteger(
    'catchUpConcurrency',
    options.catchUpConcurrency ?? LIVE_HUB_DEFAULTS.catchUpConcurrency,
    1,
  )
  const retryDelayMs = positiveInteger('retryDelayMs', options.retryDelayMs ?? LIVE_HUB_DEFAULTS.retryDelayMs, 1)

  const readFailures = createFailureLog({ log: options.log, label: 'live hub: reading the step log' })
  const ring = new Fifo<LiveStep>()
  let ringBytes = 0
  /** The ring holds every step with ringBase < seq <= tail. */
  let ringBase = 0
  let tail = 0
  let initialized = false
  let closed = false
  let reading: Promise<void> | undefined
  let again = false
  let timer: NodeJS.Timeout | undefined
  const subscriptions = new Set<LiveSubscription>()
  let markReady: () => void = () => undefined
  const readyPromise = new Promise<void>((resolve) => (markReady = resolve))
  let permitsInUse = 0
  const permitWaiters: (() => void)[] = []

  /** Where the log ends: the last step of the head block, and whatever follows it (irreversible steps) is read next. */
  async function init(): Promise<void> {
    const position = await source.position()
    const steps = position ? await source.stepsOfBlock(position.head.blockId) : []
    tail = ringBase = steps.length ? steps[steps.length - 1].seq : 0
    initialized = true
    markReady()
  }

  function append(steps: readonly LiveStep[]): void {
    for (const s of steps) {
      ring.push(s)
      ringBytes += s.bytes
    }
    tail = steps[steps.length - 1].step.seq
    while (ring.length > 0 && (ring.length > ringSize || ringBytes > ringBytesMax)) {
      const evicted = ring.shift() as LiveStep
      ringBytes -= evicted.bytes
      ringBase = evicted.step.seq
    }
    // A snapshot: a subscriber's callback may subscribe or close during the fan-out.
    for (const subscription of [...subscriptions]) subscription.offer(steps)
  }

  const hasLiveSubscription = (): boolean => [...subscriptions].some((s) => s.state === 'live')

  /**
   * Far behind the log (a full batch, more to come) with no live subscription, payloads would only
   * fill the ring to be evicted: the hub moves on without them and empties the ring (a catching-up
   * subscription reads the store itself). This keeps an indexer's catch-up from costing the API
   * process a second read of every block.
   */
  function skip(steps: readonly { seq: number }[]): void {
    ring.clear()
    ringBytes = 0
    tail = ringBase = steps[steps.length - 1].seq
  }

  async function readToEnd(): Promise<void> {
    if (!initialized) await init()
    while (!closed) {
      const after = tail
      const steps = (await source.stepsAfter(after, batchSize)).filter((s) => s.seq > after)
      if (closed || steps.length === 0) return
      if (steps.length === batchSize && !hasLiveSubscription()) {
        skip(steps)
        continue
      }
      const payloads = await source.stepPayloads(steps)
      if (closed) return
      append(steps.map((step, i) => liveStep(step, payloads[i])))
      if (steps.length < batchSize) return
    }
  }

  function schedule(delayMs: number): void {
    if (closed || delayMs <= 0) return
    timer = setTimeout(pump, delayMs)
    timer.unref()
  }

  /** Starts a read, or asks the one in flight for one more. */
  function pump(): void {
    if (closed) return
    if (reading) {
      again = true
      return
    }
    clearTimeout(timer)
    timer = undefined
    reading = (async () => {
      let failed = false
      do {
        again = false
        try {
          await readToEnd()
          readFailures.recovered()
        } catch (error) {
          failed = true
          try {
            readFailures.failed(error)
          } catch {
            // A failing logger must not stop the reader.
          }
        }
      } while (again && !failed && !closed)
      reading = undefined
      schedule(failed ? retryDelayMs : pollIntervalMs)
    })()
  }

  const core: HubCore = {
    source,
    batchSize,
    maxQueuedSteps,
    maxQueuedBytes,
    ringAfter(seq, limit, evenIfIncomplete = false) {
      if (!initialized || (seq < ringBase && !evenIfIncomplete)) return undefined
      let lo = 0
      let hi = ring.length
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        if (ring.at(mid).step.seq <= seq) lo = mid + 1
        else hi = mid
      }
      const out: LiveStep[] = []
      for (let i = lo; i < ring.length && out.length < limit; i++) out.push(ring.at(i))
      return out
    },
    async withCatchUpPermit(read) {
      while (permitsInUse >= catchUpConcurrency) await new Promise<void>((resolve) => permitWaiters.push(resolve))
      permitsInUse++
      try {
        return await read()
      } finally {
        permitsInUse--
        permitWaiters.shift()?.()
      }
    },
    ready: () => readyPromise,
    remove: (subscription) => void subscriptions.delete(subscription),
  }

  pump()

  return {
    get lastSeq() {
      return tail
    },
    get subscriptionCount() {
      return subscriptions.size
    },
    ready: () => readyPromise,
    notify: pump,
    wake: pump,
    subscribe(args: SubscribeArgs): Subscription {
      const subscription = new LiveSubscription(core, args)
      if (closed) {
        subscription.close()
        return subscription
      }
      subscriptions.add(subscription)
      void subscription.start()
      return subscription
    },
    async close() {
      closed = true
      clearTimeout(timer)
      for (const subscription of [...subscriptions]) subscription.close()
      for (const wake of permitWaiters.splice(0)) wake()
      await reading
      readFailures.close()
    },
  }
}
