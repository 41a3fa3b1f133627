import type { ShipReaderEvent } from '../ship/index.ts'
import type { Logger } from './logger.ts'

/** What the indexer reports per applied block. */
export interface BlockProgress {
  readonly num: number
  readonly head: number
  readonly actions: number
}

/** Receives the indexer's per-block reports. */
export interface ProgressReporter {
  onBlock(block: BlockProgress): void
}

/**
 * Catch-up progress: when `out` is a TTY, a one-line bar (blocks/s, actions/s, blocks left, ETA)
 * redrawn every second while far behind head; otherwise a `catching up` log line every
 * `logEveryMs`. Quiet when at head.
 */
export function createProgressReporter(deps: {
  log: Logger
  out?: NodeJS.WriteStream
  logEveryMs?: number
}): ProgressReporter {
  const out = deps.out ?? process.stderr
  const tty = out.isTTY === true
  const interval = tty ? 1000 : (deps.logEveryMs ?? 10_000)
  let windowStart = Date.now()
  let blocks = 0
  let actions = 0
  let drawn = false
  return {
    onBlock(b: BlockProgress): void {
      blocks++
      actions += b.actions
      const now = Date.now()
      if (now - windowStart < interval) return
      const seconds = (now - windowStart) / 1000
      const blockRate = blocks / seconds
      const left = Math.max(0, b.head - b.num)
      windowStart = now
      blocks = 0
      const actionRate = actions / seconds
      actions = 0
      if (left < 2) {
        if (drawn) out.write('\n')
        drawn = false
        return
      }
      const eta = blockRate > 0 ? Math.round(left / blockRate) : 0
      if (!tty) {
        deps.log.info(
          {
            block_num: b.num,
            head: b.head,
            blocks_per_s: Math.round(blockRate),
            actions_per_s: Math.round(actionRate),
            blocks_left: left,
            eta_s: eta,
          },
          'catching up',
        )
        return
      }
      const etaText = `${Math.floor(eta / 60)}m${String(eta % 60).padStart(2, '0')}s`
      const text = `index: block ${b.num}/${b.head} ${blockRate.toFixed(0)} blocks/s ${actionRate.toFixed(0)} actions/s ${left} left, ETA ${etaText}`
      const width = 24
      const done = Math.round((width * b.num) / Math.max(1, b.head))
      out.write(`\r[${'#'.repeat(done)}${'.'.repeat(width - done)}] ${text}\x1b[K`)
      drawn = true
    },
  }
}

/** The indexer's callbacks wired to the logger: catch-up progress, forks, SHiP connection events. */
export function indexerLogCallbacks(log: Logger, out?: NodeJS.WriteStream) {
  return {
    onBlock: createProgressReporter({ log, out }).onBlock,
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
