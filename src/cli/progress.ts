/** What the indexer reports per applied block. */
export interface BlockProgress {
  readonly num: number
  readonly head: number
  readonly actions: number
}

/**
 * Catch-up progress: on a TTY a one-line bar (blocks/s, actions/s, blocks left, ETA) redrawn every
 * second while far behind head; otherwise a log line every `logEveryMs`. Quiet when at head.
 */
export function createProgressReporter(out: NodeJS.WriteStream = process.stderr, logEveryMs = 10_000) {
  const tty = out.isTTY === true
  const interval = tty ? 1000 : logEveryMs
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
      const text = `index: block ${b.num}/${b.head} ${blockRate.toFixed(0)} blocks/s ${actionRate.toFixed(0)} actions/s ${left} left, ETA ${Math.floor(eta / 60)}m${String(eta % 60).padStart(2, '0')}s`
      if (tty) {
        const width = 24
        const done = Math.round((width * b.num) / Math.max(1, b.head))
        out.write(`\r[${'#'.repeat(done)}${'.'.repeat(width - done)}] ${text}\x1b[K`)
        drawn = true
      } else out.write(`${text}\n`)
    },
  }
}
