import { deferredCreator, type BlockBatch, type TransactionHistory } from '../store/index.ts'

/** Where creations written earlier are found: the store's records of a transaction id. */
export type CreationSource = (trxId: string) => Promise<Pick<TransactionHistory, 'records'>>

/**
 * The creators of the deferred transactions a block runs (the `creator:` search term). A scheduled
 * transaction was created in an earlier block: one written to the store, or one seen by ingest
 * and not written yet (catching up writes blocks in batches), so recent creations are remembered
 * here, bounded, and the store answers for older ones.
 */
export class CreatorTracker {
  private readonly recent = new Map<string, string>()

  constructor(
    private readonly source: CreationSource,
    private readonly capacity = 10_000,
  ) {}

  /** The creator of every scheduled transaction `batch` runs, by id (those whose creation is unknown are absent). */
  async creatorsOf(batch: BlockBatch): Promise<Map<string, string>> {
    this.remember(batch)
    const out = new Map<string, string>()
    for (const t of batch.transactions) {
      if (!t.scheduled || t.blockIndex < 0 || t.status > 2) continue
      let creator = this.recent.get(t.id)
      if (creator === undefined) {
        const created = (await this.source(t.id)).records.find((r) => r.details?.deferred)?.details?.deferred
        if (created) creator = deferredCreator(created)
      }
      if (creator !== undefined) out.set(t.id, creator)
    }
    return out
  }

  /** Blocks were undone: creations remembered may belong to forked-out blocks. */
  reset(): void {
    this.recent.clear()
  }

  private remember(batch: BlockBatch): void {
    for (const t of batch.transactions) {
      const deferred = t.details?.deferred
      if (!deferred) continue
      this.recent.delete(t.id)
      this.recent.set(t.id, deferredCreator(deferred))
      if (this.recent.size > this.capacity) this.recent.delete(this.recent.keys().next().value as string)
    }
  }
}
