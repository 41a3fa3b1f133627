import type { IngestMeter, IngestSnapshot } from '../api/index.ts'

/** One applied block as the indexer reports it. */
export interface MeteredBlock {
  readonly head: number
  readonly actions: number
  readonly rowChanges?: number
}

/** An IngestMeter that the indexer's per-block reports feed. */
export interface RecordingIngestMeter extends IngestMeter {
  record(block: MeteredBlock): void
}

interface SecondBucket {
  readonly second: number
  blocks: number
  actionTraces: number
  rowChanges: number
}

/**
 * Totals since start and rates over the last `windowSeconds` (per-second buckets, so memory stays bounded however fast
 * blocks come): what `/metrics` and the catch-up progress read.
 */
export function createIngestMeter(windowSeconds = 10, now: () => number = Date.now): RecordingIngestMeter {
  const startedAt = now()
  const buckets: SecondBucket[] = []
  const totals = { blocks: 0, actionTraces: 0, rowChanges: 0 }
  let nodeHead: number | undefined
  return {
    record(block) {
      const second = Math.floor(now() / 1000)
      let bucket = buckets.at(-1)
      if (bucket?.second !== second) {
        buckets.push((bucket = { second, blocks: 0, actionTraces: 0, rowChanges: 0 }))
        if (buckets.length > windowSeconds) buckets.shift()
      }
      const rows = block.rowChanges ?? 0
      bucket.blocks++
      bucket.actionTraces += block.actions
      bucket.rowChanges += rows
      totals.blocks++
      totals.actionTraces += block.actions
      totals.rowChanges += rows
      nodeHead = block.head
    },
    snapshot(): IngestSnapshot {
      const at = now()
      const from = Math.floor(at / 1000) - windowSeconds + 1
      // The window: the buckets' whole seconds and the current part of one, or less just after start.
      const seconds = Math.max(0.001, (at - Math.max(from * 1000, startedAt)) / 1000)
      const recent = buckets.filter((b) => b.second >= from)
      const sum = (pick: (b: SecondBucket) => number) => recent.reduce((n, b) => n + pick(b), 0) / seconds
      return {
        ...totals,
        nodeHead,
        blocksPerSecond: sum((b) => b.blocks),
        actionTracesPerSecond: sum((b) => b.actionTraces),
        rowChangesPerSecond: sum((b) => b.rowChanges),
      }
    },
  }
}
