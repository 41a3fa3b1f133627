/**
 * A block time as Hyperion writes it (`@timestamp`, `timestamp`, `block_time`): ISO 8601 in UTC with milliseconds
 * and without the `Z`, e.g. `2024-05-16T19:25:44.500`.
 */
export function hyperionTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, -1)
}
