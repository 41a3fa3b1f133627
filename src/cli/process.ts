/** The one line tooling waits for: `antler ready {…}` with every real bound address. */
export function printReady(fields: Record<string, string>): void {
  process.stdout.write(`antler ready ${JSON.stringify(fields)}\n`)
}

/** SIGINT/SIGTERM: stop cleanly (close sockets with a close frame, flush stores), then exit 0. */
export function onShutdown(close: () => Promise<void>): void {
  let closing = false
  const stop = (signal: string) => {
    if (closing) return
    closing = true
    const timer = setTimeout(() => {
      console.error(`antler: shutdown after ${signal} took too long, exiting`)
      process.exit(1)
    }, 10_000)
    timer.unref()
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(`antler: shutdown failed: ${(error as Error).message}`)
        process.exit(1)
      },
    )
  }
  process.once('SIGINT', () => stop('SIGINT'))
  process.once('SIGTERM', () => stop('SIGTERM'))
}
