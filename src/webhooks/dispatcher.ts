import { randomBytes } from 'node:crypto'
import { runWebhookWorker, type WorkerDeps } from './worker.ts'

/** How long a dispatcher's lease lasts; it renews it at a third of that. */
const LEASE_MS = 15_000
/** How often the dispatcher looks for new, changed and removed subscriptions without being told. */
const SCAN_INTERVAL_MS = 2_000
/** How long delivery attempts are kept. */
const ATTEMPT_RETENTION_MS = 7 * 86_400_000
/** How often old attempts are pruned. */
const PRUNE_INTERVAL_MS = 3_600_000

/** The dispatcher's view of a running worker. */
interface Running {
  readonly abort: AbortController
  readonly done: Promise<void>
}

/**
 * Runs one worker per active subscription while this process holds the store's delivery lease (one dispatcher
 * delivers at a time, whichever of the processes on the store took the lease; another takes over within
 * LEASE_MS if it dies). Routes call `notify()` after a change so it is picked up at once.
 */
export class WebhookDispatcher {
  private readonly holder = `dispatcher_${randomBytes(8).toString('hex')}`
  private readonly workers = new Map<string, Running>()
  private readonly stopping = new AbortController()
  private wake: (() => void) | undefined
  private loop: Promise<void> | undefined
  private leaseRenewedAt = 0
  private prunedAt = 0

  constructor(private readonly deps: WorkerDeps & { readonly onError?: (error: unknown) => void }) {}

  start(): void {
    this.loop ??= this.run()
  }

  /** A subscription was created, changed or deleted: look now rather than at the next scan. */
  notify(): void {
    this.wake?.()
  }

  /** Stops every worker (an attempt in flight is aborted: its message is tried again by the next holder). */
  async close(): Promise<void> {
    this.stopping.abort()
    this.wake?.()
    await this.loop
    await this.stopAll()
    await this.deps.store.releaseWebhookLease(this.holder).catch(() => undefined)
  }

  private async run(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      try {
        await this.scan()
      } catch (error) {
        this.deps.onError?.(error)
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, SCAN_INTERVAL_MS)
        this.wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
      this.wake = undefined
    }
  }

  private async scan(): Promise<void> {
    const { store } = this.deps
    const now = this.deps.now()
    if (now - this.leaseRenewedAt >= LEASE_MS / 3 || this.workers.size === 0) {
      const held = await store.claimWebhookLease(this.holder, now, now + LEASE_MS)
      if (!held) return this.stopAll()
      this.leaseRenewedAt = now
    }
    if (now - this.prunedAt >= PRUNE_INTERVAL_MS) {
      this.prunedAt = now
      await store.pruneWebhookAttempts(now - ATTEMPT_RETENTION_MS)
    }
    const active = await store.activeWebhooks()
    const ids = new Set(active.map((w) => w.id))
    this.deps.ownerRate.keepOnly(new Set(active.map((w) => w.ownerKeyId)))
    for (const [id, running] of this.workers) if (!ids.has(id)) running.abort.abort()
    for (const id of ids) if (!this.workers.has(id)) this.startWorker(id)
  }

  private startWorker(id: string): void {
    const abort = new AbortController()
    const done = runWebhookWorker(id, this.deps, abort.signal)
      .catch((error: unknown) => this.deps.onError?.(error))
      .finally(() => {
        if (this.workers.get(id)?.abort === abort) this.workers.delete(id)
      })
    this.workers.set(id, { abort, done })
  }

  private async stopAll(): Promise<void> {
    const running = [...this.workers.values()]
    for (const r of running) r.abort.abort()
    await Promise.all(running.map((r) => r.done))
  }
}
