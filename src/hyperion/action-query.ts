import { SEARCH_DATA_FIELDS, type SearchExpr } from '../store/index.ts'
import { HyperionBadRequestError } from './errors.ts'
import { isoTime } from './block-range.ts'

/**
 * get_actions' parameters → what the store's search index answers: a SearchExpr over the posting lists, plus the
 * global-sequence, block and time bounds of the page (docs/HYPERION.md, get_actions).
 *
 * Hyperion ANDs every filter. Its value forms, checked in this order: `a-b` (any `-`) a range, `a,b,!c` an OR of terms
 * with NOT terms, `a b` an AND, `!a` a NOT, else one term. Its free filters are dotted keys: `act.*`, `receipts.*`,
 * and the action-module prefixes (`transfer.to` = `@transfer.to`). Antler answers each filter the index holds and
 * refuses, with a 400 naming it, what the index cannot answer (no silent empty answer, no unbounded scan).
 */

/** Every action: an AND of nothing. */
export const ALL_ACTIONS: SearchExpr = { and: [] }

/** The parameters get_actions reads itself; any other key is a free filter (dotted) or ignored (undotted). */
export const GET_ACTIONS_PARAMETERS: ReadonlySet<string> = new Set([
  'account',
  'filter',
  'skip',
  'limit',
  'sort',
  'after',
  'before',
  'track',
  'simple',
  'noBinary',
  'checkLib',
  'hot_only',
  'sortedBy',
  'match_fuzziness',
  'match_operator',
  'ignoreCache',
  'token',
])

/** Inclusive bounds; an absent side is open. */
export interface Bounds {
  readonly low?: number
  readonly high?: number
}

export interface ActionQueryPlan {
  readonly expr: SearchExpr
  /** From `global_sequence` filters. */
  readonly seq: Bounds
  /** From `block_num` filters and numeric `after`/`before`. */
  readonly blocks: Bounds
  /** From ISO `after`/`before` (milliseconds, inclusive). */
  readonly time: { readonly afterMs?: number; readonly beforeMs?: number }
}

/**
 * Hyperion's action modules (`transfer.x` is `@transfer.x`): which contract's action each projects (undefined = any
 * contract's), and the fields whose projected value differs from the data's (a float where the data holds an asset
 * string, a renamed field): Antler's index holds the data's values, so those are renamed or refused.
 */
const MODULES: Readonly<
  Record<string, { account: string | undefined; renamed?: Record<string, string>; projected?: readonly string[] }>
> = {
  transfer: { account: undefined, projected: ['amount', 'symbol', 'memo'] },
  newaccount: { account: 'eosio', renamed: { newact: 'name' } },
  updateauth: { account: 'eosio' },
  buyram: { account: 'eosio', projected: ['quant'] },
  buyrambytes: { account: 'eosio' },
  delegatebw: { account: 'eosio', projected: ['amount', 'stake_cpu_quantity', 'stake_net_quantity'] },
  undelegatebw: { account: 'eosio', projected: ['amount', 'unstake_cpu_quantity', 'unstake_net_quantity'] },
  voteproducer: { account: 'eosio' },
  buyrex: { account: 'eosio', projected: ['amount'] },
  unstaketorex: { account: 'eosio', projected: ['amount'] },
}

/** Free filters on the action itself → the index's term fields. */
const TERM_KEYS: Readonly<Record<string, string>> = {
  'act.name': 'action',
  'act.account': 'account',
  'act.authorization.actor': 'auth',
  'receipts.receiver': 'receiver',
  notified: 'receiver',
  trx_id: 'trx_id',
}

/** Free filters on numbers, answered as bounds. */
const NUMERIC_KEYS: ReadonlySet<string> = new Set(['block_num', 'global_sequence'])

/** A value of a term is at most this long (the index keeps no longer term). */
const MAX_VALUE_LENGTH = 128

const unsupported = (key: string, why: string) =>
  HyperionBadRequestError(`filter ${key} is not supported by this server: ${why}`)

/** One term value as the index spells it (transaction ids in lower case). */
function termValue(field: string, value: string, key: string): SearchExpr {
  if (value === '' || value.length > MAX_VALUE_LENGTH) throw HyperionBadRequestError(`invalid value for ${key}`)
  return { term: `${field}:${field === 'trx_id' ? value.toLowerCase() : value}` }
}

/** A filter value in Hyperion's forms, for a term field (ranges refused: the index holds terms, not orders). */
export function valueExpr(field: string, value: string, key: string): SearchExpr {
  if (value.includes('-')) throw unsupported(key, 'ranges (a-b) are answered only on block_num and global_sequence')
  if (value.includes(',')) {
    const parts = value.split(',').filter((p) => p !== '')
    const positives = parts.filter((p) => !p.startsWith('!')).map((p) => termValue(field, p, key))
    const negatives = parts.filter((p) => p.startsWith('!')).map((p) => ({ not: termValue(field, p.slice(1), key) }))
    if (parts.length === 0) throw HyperionBadRequestError(`invalid value for ${key}`)
    const or: SearchExpr[] = positives.length ? [{ or: positives }] : []
    return { and: [...or, ...negatives] }
  }
  if (value.includes(' ')) {
    // The index matches one trace at a time: two receivers of one action are on two traces.
    if (field === 'receiver') throw unsupported(key, "one action's receivers cannot be ANDed here; use a,b")
    const parts = value.split(' ').filter((p) => p !== '')
    return {
      and: parts.map((p) =>
        p.startsWith('!') ? { not: termValue(field, p.slice(1), key) } : termValue(field, p, key),
      ),
    }
  }
  if (value.startsWith('!')) return { not: termValue(field, value.slice(1), key) }
  return termValue(field, value, key)
}

const UINT = /^\d{1,16}$/

/** A numeric filter: `n` or `a-b`. */
export function numericBounds(value: string, key: string): Bounds {
  const range = /^(\d{1,16})-(\d{1,16})$/.exec(value)
  if (range) return { low: Number(range[1]), high: Number(range[2]) }
  if (UINT.test(value)) return { low: Number(value), high: Number(value) }
  throw unsupported(key, 'only a number or a range a-b is answered here')
}

/** `account=X`: actions X received (notified included) or authorized. */
export function accountExpr(account: string): SearchExpr {
  return { or: [{ term: `receiver:${account}` }, { term: `auth:${account}` }] }
}

/** `filter=contract:action,…` with `*` either side, OR-ed; `*:*` matches everything. */
export function contractActionFilterExpr(filter: string): SearchExpr | undefined {
  const alternatives: SearchExpr[] = []
  for (const entry of filter.split(',')) {
    if (entry === '') continue
    const [contract, action, extra] = entry.split(':')
    if (action === undefined || extra !== undefined || contract === '' || action === '')
      throw HyperionBadRequestError(`invalid filter ${entry}: expected contract:action (* for any)`)
    const parts: SearchExpr[] = []
    if (contract !== '*') parts.push(termValue('account', contract, 'filter'))
    if (action !== '*') parts.push(termValue('action', action, 'filter'))
    if (parts.length === 0) return undefined
    alternatives.push(parts.length === 1 ? parts[0] : { and: parts })
  }
  if (alternatives.length === 0) return undefined
  return alternatives.length === 1 ? alternatives[0] : { or: alternatives }
}

/** A data field path (`to`, `auth.keys.key`) → the index's `data.` term field, when the index holds it. */
function dataField(path: string, key: string): string {
  if (!/^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$/.test(path)) throw unsupported(key, 'not a data field path')
  const top = path.split('.')[0]
  if (!SEARCH_DATA_FIELDS.has(top)) throw unsupported(key, `the data field ${top} is not indexed`)
  return `data.${path}`
}

/** A dotted free filter → its SearchExpr (or bounds); throws for what the index cannot answer. */
function freeFilter(key: string, value: string): SearchExpr {
  const field = TERM_KEYS[key]
  if (field) return valueExpr(field, value, key)
  if (key.startsWith('act.data.')) return valueExpr(dataField(key.slice('act.data.'.length), key), value, key)
  const dot = key.indexOf('.')
  const prefix = key.slice(key.startsWith('@') ? 1 : 0, dot)
  const module = dot > 0 ? MODULES[prefix] : undefined
  if (module && Object.hasOwn(MODULES, prefix)) {
    const path = key.slice(dot + 1)
    const top = path.split('.')[0]
    if (module.projected?.includes(top))
      throw unsupported(key, `@${prefix}.${top} is a projection the index does not hold`)
    const renamed = module.renamed?.[top]
    const dataPath = renamed ? [renamed, ...path.split('.').slice(1)].join('.') : path
    const action: SearchExpr[] = [{ term: `action:${prefix}` }]
    if (module.account) action.push({ term: `account:${module.account}` })
    return { and: [...action, valueExpr(dataField(dataPath, key), value, key)] }
  }
  throw unsupported(key, 'the index holds no such field')
}

const intersect = (a: Bounds, b: Bounds): Bounds => ({
  low: a.low === undefined ? b.low : b.low === undefined ? a.low : Math.max(a.low, b.low),
  high: a.high === undefined ? b.high : b.high === undefined ? a.high : Math.min(a.high, b.high),
})

/**
 * The plan of a get_actions query. `query` is the whole query string as Fastify parsed it (coerced where the route's
 * schema says so): the free filters are its keys besides GET_ACTIONS_PARAMETERS.
 */
export function planActionQuery(query: Readonly<Record<string, unknown>>): ActionQueryPlan {
  const parts: SearchExpr[] = []
  let seq: Bounds = {}
  let blocks: Bounds = {}
  const time: { afterMs?: number; beforeMs?: number } = {}
  if (typeof query.account === 'string' && query.account !== '') parts.push(accountExpr(query.account))
  if (typeof query.filter === 'string') {
    const expr = contractActionFilterExpr(query.filter)
    if (expr) parts.push(expr)
  }
  for (const key of ['after', 'before'] as const) {
    const value = query[key]
    if (value === undefined || value === '') continue
    const text = String(value)
    if (text.includes('T') || text.includes(' ')) {
      const ms = isoTime(text, key)
      if (key === 'after') time.afterMs = ms
      else time.beforeMs = ms
    } else {
      // Hyperion reads anything else as a block number (so `2024-01-01` is block 2024: its quirk, kept).
      const num = Number.parseInt(text, 10)
      if (!Number.isSafeInteger(num) || num < 0) throw HyperionBadRequestError(`invalid ${key}: ${text}`)
      blocks = intersect(blocks, key === 'after' ? { low: num } : { high: num })
    }
  }
  for (const [key, raw] of Object.entries(query)) {
    if (GET_ACTIONS_PARAMETERS.has(key)) continue
    if (typeof raw !== 'string' && typeof raw !== 'number') {
      if (raw === undefined) continue
      throw HyperionBadRequestError(`invalid value for ${key}`)
    }
    const value = String(raw)
    if (NUMERIC_KEYS.has(key)) {
      const bounds = numericBounds(value, key)
      if (key === 'block_num') blocks = intersect(blocks, bounds)
      else seq = intersect(seq, bounds)
    } else if (key in TERM_KEYS || key.includes('.')) parts.push(freeFilter(key, value))
    else if (
      [
        'block_id',
        'producer',
        '@timestamp',
        'action_ordinal',
        'creator_action_ordinal',
        'cpu_usage_us',
        'net_usage_words',
      ].includes(key)
    )
      throw unsupported(key, 'the index holds no such field')
    // Any other undotted key is not a filter for Hyperion either: ignored.
  }
  const expr = parts.length === 0 ? ALL_ACTIONS : parts.length === 1 ? parts[0] : { and: parts }
  return { expr, seq, blocks, time }
}
