import type { SnapshotReader } from '../store/index.ts'
import { HyperionBadRequestError } from './errors.ts'

/**
 * Hyperion's `after` / `before` (get_deltas, get_blocks): a value holding a `T` or a space is a time (UTC when it has
 * no zone), compared inclusively with block times; anything else is read as a block number (parseInt, so
 * `2024-01-01` is block 2024 — Hyperion's reading, kept).
 */
export interface AfterBefore {
  readonly afterMs?: number
  readonly beforeMs?: number
  readonly afterBlock?: number
  readonly beforeBlock?: number
}

/** An ISO time (`T` or a space between date and time; UTC unless it says otherwise) in milliseconds. */
export function isoTime(value: string, key: string): number {
  const iso = value.replace(' ', 'T')
  const ms = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(iso) ? iso : `${iso}Z`)
  if (!Number.isFinite(ms)) throw HyperionBadRequestError(`invalid ${key} date: ${value}`)
  return ms
}

export function parseAfterBefore(query: { after?: string; before?: string }): AfterBefore {
  const out: { afterMs?: number; beforeMs?: number; afterBlock?: number; beforeBlock?: number } = {}
  for (const key of ['after', 'before'] as const) {
    const text = query[key]
    if (text === undefined || text === '') continue
    if (text.includes('T') || text.includes(' ')) {
      const ms = isoTime(text, key)
      if (key === 'after') out.afterMs = ms
      else out.beforeMs = ms
    } else {
      const num = Number.parseInt(text, 10)
      if (!Number.isSafeInteger(num) || num < 0) throw HyperionBadRequestError(`invalid ${key}: ${text}`)
      if (key === 'after') out.afterBlock = num
      else out.beforeBlock = num
    }
  }
  return out
}

/** Inclusive block bounds; `from > to` is an empty range. */
export interface BlockBounds {
  readonly from: number
  readonly to: number
}

/**
 * The blocks `bounds` select, up to `head`: times become the first block at or after `afterMs` and the last block at
 * or before `beforeMs`, read from the store's blocks.
 */
export async function resolveBlockBounds(
  reader: Pick<SnapshotReader, 'blockByTime'>,
  bounds: AfterBefore,
  head: number,
): Promise<BlockBounds> {
  let from = Math.max(1, bounds.afterBlock ?? 1)
  let to = Math.min(head, bounds.beforeBlock ?? head)
  if (bounds.afterMs !== undefined) {
    const block = await reader.blockByTime({ timeMs: bounds.afterMs, comparator: 'gte' })
    from = block ? Math.max(from, block.num) : head + 1
  }
  if (bounds.beforeMs !== undefined) {
    const block = await reader.blockByTime({ timeMs: bounds.beforeMs, comparator: 'lte' })
    to = block ? Math.min(to, block.num) : 0
  }
  return { from, to }
}

/** Hyperion's `sort`: `asc`/`1` ascending, `desc`/`-1` (the default) descending. */
export type HyperionSort = 'asc' | 'desc' | '1' | '-1'

export const isDescending = (sort: HyperionSort | undefined): boolean => sort !== 'asc' && sort !== '1'

/** A comma list's values, each trimmed, empty ones dropped (Hyperion's `a,b` → any of). */
export function commaList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined
  const values = value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '')
  return values.length === 0 ? undefined : values
}

/** `commaList` of a filter the store matches as "any of": more than the store's bound is a 400. */
export function filterValues(key: string, value: string | undefined, max: number): string[] | undefined {
  const values = commaList(value)
  if (values && values.length > max) throw HyperionBadRequestError(`too many values for ${key} (at most ${max})`)
  return values
}
