/** The part of a logger (pino's) a failure log writes to: fields first, then a lowercase message. */
export interface FailureLogger {
  warn(fields: object, message: string): void
  info(fields: object, message: string): void
}

/** What a background loop tells of its passes: one failed (with its error), or one succeeded after failures. */
export interface FailureReport {
  failed(error: unknown): void
  recovered(): void
}

/** A failure report that writes to a logger; `close()` writes the counts still pending (a loop that stops). */
export interface FailureLog extends FailureReport {
  close(): void
}

/** How long identical failures are counted before the count is logged, unless they stop first. */
export const FAILURE_LOG_WINDOW_MS = 60_000

/** Failures of one message: since when they are counted, and how many came after the one logged in full. */
interface Run {
  windowStartMs: number
  repeats: number
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * Logs a background loop's failures without flooding the log when it retries every second: a failure is logged in
 * full (its error, stack included, as `err`) the first time its message is seen; the same message again (same loop,
 * same message) is only counted, and the count is logged as one line when the window (`windowMs`) has passed, when
 * the loop recovers, or when it closes. `label` names the loop ("webhook dispatcher: a scan"); `fields` go on every
 * line (`webhook_id`).
 */
export function createFailureLog(args: {
  /** Undefined: failures are counted and dropped (a loop built without a logger, as in tests). */
  log: FailureLogger | undefined
  label: string
  windowMs?: number
  fields?: Readonly<Record<string, unknown>>
  now?: () => number
}): FailureLog {
  const { log, label } = args
  const windowMs = args.windowMs ?? FAILURE_LOG_WINDOW_MS
  const now = args.now ?? Date.now
  const fields = args.fields ?? {}
  /** The failures seen since the last recovery, by message. */
  const runs = new Map<string, Run>()

  function writeCount(message: string, run: Run, atMs: number): void {
    if (run.repeats === 0) return
    const seconds = Math.max(1, Math.round((atMs - run.windowStartMs) / 1000))
    log?.warn(
      { ...fields, failures: run.repeats, window_s: seconds, reason: message },
      `${label} failed ${run.repeats} more time${run.repeats === 1 ? '' : 's'} in the last ${seconds} s: ${message}`,
    )
  }

  function writeAll(): void {
    const atMs = now()
    for (const [message, run] of runs) writeCount(message, run, atMs)
  }

  return {
    failed(error) {
      const message = messageOf(error)
      const atMs = now()
      const run = runs.get(message)
      if (run && atMs - run.windowStartMs < windowMs) {
        run.repeats++
        return
      }
      if (run && run.repeats > 0) {
        // Still failing after a whole window: the count so far, then this one counts in the next window.
        run.repeats++
        writeCount(message, run, atMs)
        run.windowStartMs = atMs
        run.repeats = 0
        return
      }
      // New, or seen once long ago: in full.
      runs.set(message, { windowStartMs: atMs, repeats: 0 })
      log?.warn({ ...fields, err: error }, `${label} failed: ${message}`)
    },
    recovered() {
      if (runs.size === 0) return
      writeAll()
      runs.clear()
      log?.info(fields, `${label} recovered`)
    },
    close() {
      writeAll()
      runs.clear()
    },
  }
}
