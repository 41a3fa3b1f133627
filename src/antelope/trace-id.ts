import { randomBytes } from 'node:crypto'

/** A trace id: 32 hex characters, unique per request or error (dfuse's form). */
export const newTraceId = (): string => randomBytes(16).toString('hex')

/** Trace ids drawn per call to the system's random source (one call per request cost more than the id's use). */
const TRACE_IDS_PER_DRAW = 256

/** Makes trace ids as {@link newTraceId} does, cut from random bytes drawn {@link TRACE_IDS_PER_DRAW} ids at a time. */
export function traceIdSource(): () => string {
  let pool = ''
  let next = 0
  return () => {
    if (next === pool.length) {
      pool = randomBytes(16 * TRACE_IDS_PER_DRAW).toString('hex')
      next = 0
    }
    next += 32
    return pool.slice(next - 32, next)
  }
}
