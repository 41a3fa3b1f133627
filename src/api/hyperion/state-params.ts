import { Type } from '@fastify/type-provider-typebox'
import type { SnapshotReader, SnapshotSource } from '../../store/index.ts'

/** Parameters and helpers the state routes share (state.ts, state-system.ts). */

/** The deepest page a state route serves: `skip` beyond it is refused by the schema (Hyperion's get_actions bound). */
export const MAX_SKIP = 10_000
export const Skip = Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SKIP }))
export const Limit = Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 }))
/** An account name's text (validated as such where it matters: a wrong one finds nothing). */
export const Name = (options: { minLength?: number } = {}) =>
  Type.String({ minLength: options.minLength ?? 1, maxLength: 13 })
export const Flag = Type.Optional(Type.Boolean())

/** A page size: Hyperion's default when absent, capped at its largest (as Hyperion caps a larger one). */
export const pageSize = (limit: number | undefined, fallback: number, max: number) => Math.min(limit ?? fallback, max)

/**
 * `read` at the head of one snapshot of the store (an answer never mixes two states), or `empty` on an empty store.
 */
export async function readAtHead<T>(
  store: SnapshotSource,
  empty: NoInfer<T>,
  read: (reader: SnapshotReader, head: number) => Promise<T>,
): Promise<T> {
  return store.snapshot(async (reader) => {
    const head = (await reader.position())?.head.blockNum
    return head === undefined ? empty : read(reader, head)
  })
}

/** A comma list as names (empty parts dropped); undefined when absent or empty. */
export const commaList = (value: string | undefined): string[] | undefined => {
  const list = value
    ?.split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
  return list && list.length > 0 ? list : undefined
}

/** `'true'`/`'false'` as Hyperion reads its unschematised flags; undefined otherwise. */
export const textFlag = (value: string | undefined): boolean | undefined =>
  value === 'true' ? true : value === 'false' ? false : undefined
