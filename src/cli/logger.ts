import { pino, type Logger } from 'pino'

export type { Logger } from 'pino'

/** The levels `--log-level` accepts, most severe first; `silent` logs nothing. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number]

/**
 * The process's one logger: JSON lines (pino) on stderr, so stdout carries only the `antler ready`
 * line and command output. Messages are fixed lowercase strings, fields snake_case. Writes are
 * asynchronous: a synchronous write per line (the API logs every request) was the largest cost of a
 * cheap request. Lines written while one write is pending go out together; what is still buffered
 * when the process exits (`process.exit` included) is flushed synchronously by pino's exit handler,
 * so a line logged just before exiting is not lost.
 */
export function createLogger(options: { level?: string; destination?: NodeJS.WritableStream } = {}): Logger {
  return pino({ level: options.level ?? 'info' }, options.destination ?? pino.destination({ dest: 2, sync: false }))
}
