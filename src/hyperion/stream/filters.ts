import type { StreamFilter } from './request.ts'

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The values at a dotted path (arrays along the way fan out: a filter matches when any element does). */
function valuesAt(root: unknown, path: readonly string[]): unknown[] {
  let current: unknown[] = [root]
  for (const segment of path) {
    const next: unknown[] = []
    for (const value of current) {
      const items = Array.isArray(value) ? value : [value]
      for (const item of items) if (isRecord(item) && segment in item) next.push(item[segment])
    }
    if (next.length === 0) return []
    current = next
  }
  return current.flatMap((v) => (Array.isArray(v) ? v : [v]))
}

/**
 * Where a filter's field points in a document. Hyperion's `@<action>.<field>` projections (`@transfer.to`) are the
 * action's data here (the document folds them into `act.data`); a path not found from the root is tried under the
 * document's data (`act.data` for actions, `data` for deltas), as Hyperion falls back to it.
 */
export function filterValues(doc: unknown, field: string): unknown[] {
  const segments = field.split('.')
  const dataPath = isRecord(doc) && isRecord(doc.act) ? ['act', 'data'] : ['data']
  if (segments[0].startsWith('@')) return valuesAt(doc, [...dataPath, ...segments.slice(1)])
  const direct = valuesAt(doc, segments)
  return direct.length > 0 ? direct : valuesAt(doc, [...dataPath, ...segments])
}

const asNumber = (value: unknown): number | undefined => {
  if (typeof value === 'number') return value
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value)
  return undefined
}

/** The amount of an asset string ("1.5000 EOS") when its symbol is `symbol`. */
function assetAmount(value: unknown, symbol: string): number | undefined {
  if (typeof value !== 'string') return undefined
  const [amount, code] = value.trim().split(/\s+/)
  return code === symbol ? asNumber(amount) : undefined
}

function compare(actual: unknown, filter: StreamFilter): boolean {
  const left = filter.asset ? assetAmount(actual, filter.asset) : actual
  if (left === undefined || left === null || typeof left === 'object') return false
  const want = filter.value
  const [a, b] = [asNumber(left), asNumber(want)]
  const numeric = a !== undefined && b !== undefined
  const text = String(left)
  const wanted = String(want)
  switch (filter.operator) {
    case 'eq':
      return numeric ? a === b : text === wanted
    case 'ne':
      return numeric ? a !== b : text !== wanted
    case 'gt':
      return numeric ? a > b : text > wanted
    case 'gte':
      return numeric ? a >= b : text >= wanted
    case 'lt':
      return numeric ? a < b : text < wanted
    case 'lte':
      return numeric ? a <= b : text <= wanted
    case 'contains':
      return text.includes(wanted)
    case 'starts_with':
      return text.startsWith(wanted)
    case 'ends_with':
      return text.endsWith(wanted)
  }
}

/** One filter against a document: any value at its path compares true (`ne`: none equals). */
export function matchesFilter(doc: unknown, filter: StreamFilter): boolean {
  const values = filterValues(doc, filter.field)
  if (filter.operator === 'ne') return values.every((v) => compare(v, filter))
  return values.some((v) => compare(v, filter))
}

/** A request's filters against a document: all of them (`and`) or any (`or`); no filter passes everything. */
export function matchesFilters(doc: unknown, filters: readonly StreamFilter[], op: 'and' | 'or'): boolean {
  if (filters.length === 0) return true
  return op === 'and' ? filters.every((f) => matchesFilter(doc, f)) : filters.some((f) => matchesFilter(doc, f))
}
