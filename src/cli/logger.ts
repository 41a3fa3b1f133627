import { pino, type Logger } from 'pino'

export type { Logger } from 'pino'

/** The levels `--log-level` accepts, most severe first; `silent` logs nothing. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number]

/**
 * The process's one logger: JSON lines (pino) on stderr, so stdout carries only the `antler ready`
 * line and command output. Messages are fixed lowercase strings, fields snake_case. Writes are
 * synchronous, so a line logged just before `process.exit` is not lost.
 */
export function createLogger(options: { level?: string; destination?: NodeJS.WritableStream } = {}): Logger {
  return pino({ level: options.level ?? 'info' }, options.destination ?? pino.destination({ dest: 2, sync: true }))
}
