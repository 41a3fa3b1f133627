import type { Logger } from './logger.ts'

/** The one line tooling waits for: `antler ready {…}` with every real bound address. */
export function printReady(fields: Record<string, string>): void {
  process.stdout.write(`antler ready ${JSON.stringify(fields)}\n`)
}

/** SIGINT/SIGTERM: stop cleanly (close sockets with a close frame, flush stores), then exit 0. */
export function onShutdown(log: Logger, close: () => Promise<void>): void {
  let closing = false
  const stop = (signal: string) => {
    if (closing) return
    closing = true
    log.info({ signal }, 'shutting down')
    const timer = setTimeout(() => {
      log.fatal({ signal, timeout_ms: 10_000 }, 'shutdown took too long, exiting')
      process.exit(1)
    }, 10_000)
    timer.unref()
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        log.fatal({ err: error }, 'shutdown failed')
        process.exit(1)
      },
    )
  }
  process.once('SIGINT', () => stop('SIGINT'))
  process.once('SIGTERM', () => stop('SIGTERM'))
}
