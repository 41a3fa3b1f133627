import { InvalidChainValueError } from './errors.ts'

/** Milliseconds of the block timestamp epoch (2000-01-01T00:00:00Z). */
export const BLOCK_TIMESTAMP_EPOCH_MS = 946_684_800_000
/** Length of one block slot. */
export const BLOCK_INTERVAL_MS = 500

/** `block_timestamp_type` slot → JS milliseconds. */
export function blockSlotToMs(slot: number): number {
  return BLOCK_TIMESTAMP_EPOCH_MS + slot * BLOCK_INTERVAL_MS
}

/** JS milliseconds → the `block_timestamp_type` slot that contains them. */
export function msToBlockSlot(ms: number): number {
  return Math.floor((ms - BLOCK_TIMESTAMP_EPOCH_MS) / BLOCK_INTERVAL_MS)
}

/** nodeos's JSON time form: `2018-11-08T13:23:39.500` (UTC, milliseconds, no zone). */
export function formatNodeosTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, -1)
}

/** nodeos's `time_point_sec` form: `2018-11-08T13:23:39`. */
export function formatNodeosTimeSec(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 19)
}

/** Go RFC3339Nano as dfuse printed times: trailing fraction zeros dropped, `Z`. */
export function formatRfc3339(ms: number): string {
  const iso = new Date(ms).toISOString()
  const [whole, fraction] = iso.slice(0, -1).split('.')
  const trimmed = fraction.replace(/0+$/, '')
  return trimmed ? `${whole}.${trimmed}Z` : `${whole}Z`
}

const daysInMonth = (year: number, month: number): number =>
  month === 2
    ? year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
      ? 29
      : 28
    : [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]

/**
 * Parses a time as the API accepts it: RFC3339 with a zone, or nodeos's zone-less form (read as
 * UTC). Throws `invalid_chain_value_error` for anything else.
 */
export function parseTime(text: string): number {
  const match = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})?$/.exec(
    text,
  )
  if (!match)
    throw InvalidChainValueError({ kind: 'time', value: text, reason: 'expected RFC3339, e.g. 2019-03-04T10:36:14.5Z' })
  // Date.parse rolls 2019-02-30 over to March 2: the day must exist in its month.
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month))
    throw InvalidChainValueError({ kind: 'time', value: text, reason: 'not a calendar time' })
  const fraction = match[7] ? match[7].slice(1, 4).padEnd(3, '0') : '000'
  const zone = match[8] ?? 'Z'
  const ms = Date.parse(`${match[1]}-${match[2]}-${match[3]}T${match[4]}:${match[5]}:${match[6]}.${fraction}${zone}`)
  if (Number.isNaN(ms)) throw InvalidChainValueError({ kind: 'time', value: text, reason: 'not a calendar time' })
  return ms
}
