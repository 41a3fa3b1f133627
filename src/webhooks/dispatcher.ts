import { randomBytes } from 'node:crypto'
import { createFailureLog, type FailureLog } from '../antelope/index.ts'
import type { WebhookRecord } from '../store/index.ts'
import { runWebhookWorker, type WorkerDeps, type WorkerProgress } from './worker.ts'

/** How long a dispatcher's lease lasts; it renews it at a third of that. */
const LEASE_MS = 15_000
/** How long a notification waits for others before the scan they share. */
const NOTIFY_COALESCE_MS = 50
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
  /** What the worker was started with besides its cursor: a change (a PATCH, a rotation) restarts it. */
  readonly stamp: string
  readonly progress: WorkerProgress
}

/** The fields a worker's deliveries depend on, besides the cursor. */
const stampOf = (w: WebhookRecord) => JSON.stringify([w.url, w.query, w.finality, w.startBlock, w.secret])

/**
 * Runs one worker per active subscription while this process holds the store's delivery lease (one dispatcher
 * delivers at a time, whichever of the processes on the store took the lease; another takes over within
 * LEASE_MS if it dies). Routes call `notify()` after a change so it is picked up at once.
 */
export class WebhookDispatcher {
  private readonly holder = `dispatcher_${randomBytes(8).toString('hex')}`
  private readonly workers = new Map<string, Running>()
  /** Subscriptions changed in this process: their workers start again at the next scan. */
  private readonly restarts = new Set<string>()
  private readonly stopping = new AbortController()
  private wake: (() => void) | undefined
  private loop: Promise<void> | undefined
  private leaseRenewedAt = 0
  private prunedAt = 0
  /** Failed scans, and workers that stopped on an error (the next scan starts them again). */
  private readonly failures: FailureLog

  constructor(private readonly deps: WorkerDeps) {
    this.failures = createFailureLog({ log: deps.log, label: 'webhook dispatcher' })
  }

  start(): void {
    this.loop ??= this.run()
  }

  /** A subscription was created, changed or deleted: look now rather than at the next scan (and restart `restart`). */
  notify(restart?: string): void {
    if (restart !== undefined) this.restarts.add(restart)
    this.wake?.()
  }

  /** Stops every worker (an attempt in flight is aborted: its message is tried again by the next holder). */
  async close(): Promise<void> {
    this.stopping.abort()
    this.wake?.()
    await this.loop
    await this.stopAll()
    await this.deps.store.releaseWebhookLease(this.holder).catch(() => undefined)
    this.failures.close()
  }

  private async run(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      try {
        await this.scan()
        this.failures.recovered()
      } catch (error) {
        this.failures.failed(error)
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, SCAN_INTERVAL_MS)
        // Notifications within NOTIFY_COALESCE_MS share one scan: creating a thousand subscriptions is not a
        // thousand reads of every subscription.
        this.wake = () => {
          clearTimeout(timer)
          this.wake = undefined
          setTimeout(resolve, this.stopping.signal.aborted ? 0 : NOTIFY_COALESCE_MS)
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
    // A revoked key's subscriptions stop delivering (they stay stored, as the key does).
    const revoked = new Set(await store.revokedApiKeyIds(now))
    const active = (await store.activeWebhooks()).filter((w) => !revoked.has(w.ownerKeyId))
    const byId = new Map(active.map((w) => [w.id, w]))
    this.deps.ownerRate.keepOnly(new Set(active.map((w) => w.ownerKeyId)))
    for (const [id, running] of this.workers) {
      const record = byId.get(id)
      // Gone, or changed under the worker (a replay moved its cursor; a PATCH its URL or query) while it waits out a
      // retry delay: it stops, and starts again from what is stored.
      const changed = this.restarts.delete(id)
      if (!record || changed || record.cursor !== running.progress.cursor || stampOf(record) !== running.stamp)
        this.restart(running, record !== undefined)
    }
    this.restarts.clear()
    for (const record of active) if (!this.workers.has(record.id)) this.startWorker(record)
  }

  private restart(running: Running, again: boolean): void {
    running.abort.abort()
    if (again) void running.done.then(() => this.notify())
  }

  private startWorker(record: WebhookRecord): void {
    const { id } = record
    const abort = new AbortController()
    const progress: WorkerProgress = { cursor: record.cursor }
    const done = runWebhookWorker(id, this.deps, abort.signal, progress)
      .catch((error: unknown) => this.failures.failed(error))
      .finally(() => {
        if (this.workers.get(id)?.abort === abort) this.workers.delete(id)
      })
    this.workers.set(id, { abort, done, stamp: stampOf(record), progress })
  }

  private async stopAll(): Promise<void> {
    const running = [...this.workers.values()]
    for (const r of running) r.abort.abort()
    await Promise.all(running.map((r) => r.done))
  }
}
