import type { SearchFlag } from '../store/index.ts'

/** Fields whose value is `true` or `false`: flags on every posting, not terms. */
export const BOOLEAN_FIELDS: Readonly<Record<string, SearchFlag>> = {
  input: 'input',
  notif: 'notif',
  scheduled: 'scheduled',
}

/** Fields indexed as `field:value` terms (docs/API.md, "Search fields"; `data.*` paths are checked apart). */
export const TERM_FIELDS: ReadonlySet<string> = new Set([
  'receiver',
  'account',
  'action',
  'auth',
  'ram.consumed',
  'ram.released',
  'db.table',
  'db.key',
  'creator',
  'parent.receiver',
  'parent.account',
  'parent.action',
  'trx_id',
])

/** `data.<field>[.<nested>…]`: ABI-decoded action data, nested fields with dots. */
export const DATA_PATH = /^data(\.[A-Za-z0-9_]+)+$/

/** Whether `field` can be searched, and how. */
export function fieldKind(field: string): 'term' | 'boolean' | 'status' | undefined {
  if (field === 'status') return 'status'
  if (field in BOOLEAN_FIELDS) return 'boolean'
  if (TERM_FIELDS.has(field) || DATA_PATH.test(field)) return 'term'
  return undefined
}
