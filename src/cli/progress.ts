import type { ShipReaderEvent } from '../ship/index.ts'
import type { Logger } from './logger.ts'
import { createIngestMeter, type RecordingIngestMeter } from './ingest-meter.ts'

/** What the indexer reports per applied block. */
export interface BlockProgress {
  readonly num: number
  readonly head: number
  readonly actions: number
  readonly rowChanges?: number
}

/** Receives the indexer's per-block reports. */
export interface ProgressReporter {
  onBlock(block: BlockProgress): void
}

/**
 * Catch-up progress: when `out` is a TTY, a one-line bar (blocks/s, action traces/s, blocks left, ETA from the node's
 * head) redrawn every second while far behind head; otherwise a `catching up` log line every `logEveryMs`. Quiet when
 * at head. Rates are the meter's (the last seconds), which every block is recorded in.
 */
export function createProgressReporter(deps: {
  log: Logger
  out?: NodeJS.WriteStream
  logEveryMs?: number
  meter?: RecordingIngestMeter
}): ProgressReporter {
  const out = deps.out ?? process.stderr
  const tty = out.isTTY === true
  const interval = tty ? 1000 : (deps.logEveryMs ?? 10_000)
  const meter = deps.meter ?? createIngestMeter()
  let reportedAt = Date.now()
  let drawn = false
  return {
    onBlock(b: BlockProgress): void {
      meter.record(b)
      const now = Date.now()
      if (now - reportedAt < interval) return
      reportedAt = now
      const left = Math.max(0, b.head - b.num)
      if (left < 2) {
        if (drawn) out.write('\n')
        drawn = false
        return
      }
      const pace = meter.snapshot()
      const eta = pace.blocksPerSecond > 0 ? Math.round(left / pace.blocksPerSecond) : 0
      if (!tty) {
        deps.log.info(
          {
            block_num: b.num,
            head: b.head,
            blocks_per_s: Math.round(pace.blocksPerSecond),
            traces_per_s: Math.round(pace.actionTracesPerSecond),
            row_changes_per_s: Math.round(pace.rowChangesPerSecond),
            blocks_left: left,
            eta_s: eta,
          },
          'catching up',
        )
        return
      }
      const etaText = `${Math.floor(eta / 60)}m${String(eta % 60).padStart(2, '0')}s`
      const rates = `${pace.blocksPerSecond.toFixed(0)} blocks/s ${pace.actionTracesPerSecond.toFixed(0)} traces/s`
      const text = `index: block ${b.num}/${b.head} ${rates} ${left} left, ETA ${etaText}`
      const width = 24
      const done = Math.round((width * b.num) / Math.max(1, b.head))
      out.write(`\r[${'#'.repeat(done)}${'.'.repeat(width - done)}] ${text}\x1b[K`)
      drawn = true
    },
  }
}

/**
 * The indexer's callbacks wired to the logger: catch-up progress (its rates recorded in `meter`, which `/metrics`
 * reads where an API shares the process), forks, SHiP connection events.
 */
export function indexerLogCallbacks(log: Logger, meter?: RecordingIngestMeter) {
  return {
    onBlock: createProgressReporter({ log, meter }).onBlock,
    onFork: (f: { blockNum: number; undone: number }): void =>
      log.info({ block_num: f.blockNum, undone: f.undone }, 'fork undone'),
    onReaderEvent: (e: ShipReaderEvent): void => {
      if (e.type === 'connected')
        log.info(
          {
            url: e.url,
            head: e.status.head.blockNum,
            lib: e.status.lastIrreversible.blockNum,
            chain_id: e.status.chainId,
          },
          'ship connected',
        )
      else if (e.type === 'disconnected') log.warn({ reason: e.reason }, 'ship disconnected')
      else if (e.reason) log.warn({ attempt: e.attempt, delay_ms: e.delayMs, reason: e.reason }, 'ship reconnecting')
      else log.info({ attempt: e.attempt, delay_ms: e.delayMs }, 'ship reconnecting')
    },
  }
}
