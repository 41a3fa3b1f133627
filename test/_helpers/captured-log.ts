import type { FailureLogger } from '../../src/antelope/index.ts'

/** One line a {@link CapturedLog} received. */
export interface CapturedLine {
  readonly level: 'warn' | 'info'
  readonly fields: Record<string, unknown>
  readonly message: string
}

/** A logger keeping what it is given, in order, for a test to read (`lines`), in the form pino takes. */
export interface CapturedLog extends FailureLogger {
  readonly lines: CapturedLine[]
  /** The messages, with the seconds of a count (`in the last 2 s`, which depends on timing) as `N`. */
  messages(): string[]
}

export function capturedLog(): CapturedLog {
  const lines: CapturedLine[] = []
  const add = (level: CapturedLine['level']) => (fields: object, message: string) =>
    void lines.push({ level, fields: { ...fields }, message })
  const messages = () => lines.map((l) => l.message.replace(/in the last \d+ s/, 'in the last N s'))
  return { lines, messages, warn: add('warn'), info: add('info') }
}
