import { isValidName } from '../../antelope/index.ts'

/** The comparisons a request's filter may ask (Hyperion's operators; `eq` when none is given). */
export const FILTER_OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'contains', 'starts_with', 'ends_with'] as const
export type FilterOperator = (typeof FILTER_OPERATORS)[number]

/** One `filters[]` entry: a dotted path into the document, a value, how to compare, and `asset` (compare amounts). */
export interface StreamFilter {
  readonly field: string
  readonly value: string | number | boolean
  readonly operator: FilterOperator
  /** A symbol code: the field holds an asset string ("1.0000 EOS"), its amount compared when its symbol is this one. */
  readonly asset?: string
}

/**
 * Where a stream starts or stops, as asked: `0` off, a positive block, a negative offset from head, or an ISO time
 * (resolved against the store when the request is accepted).
 */
export type BlockPosition = { readonly block: number } | { readonly timeMs: number }

interface CommonRequest {
  readonly startFrom: BlockPosition
  readonly readUntil: BlockPosition
  readonly filters: readonly StreamFilter[]
  readonly filterOp: 'and' | 'or'
  /** History only: the request ends after `history_end`. */
  readonly ignoreLive: boolean
  /** Kept with the request so a `reconnect` can replay it. */
  readonly replayOnReconnect: boolean
}

/** `action_stream_request`: the actions of `contract` (any action when `action` is absent) or notifying `account`. */
export interface ActionStreamRequest extends CommonRequest {
  readonly kind: 'action'
  readonly contract: string | undefined
  /** Undefined: every action of the contract (Hyperion refuses `"*"`, documented as allowed; Antler accepts it). */
  readonly action: string | undefined
  readonly account: string | undefined
}

/** `delta_stream_request`: row changes of `code`'s `table` (any table when absent), optionally one scope and payer. */
export interface DeltaStreamRequest extends CommonRequest {
  readonly kind: 'delta'
  readonly code: string
  readonly table: string | undefined
  readonly scope: string | undefined
  readonly payer: string | undefined
}

export type StreamRequest = ActionStreamRequest | DeltaStreamRequest

/** A request refused: the ack is `{status: "ERROR", message}`. */
export class StreamRequestError extends Error {}

/** Longest string accepted anywhere in a request (names are 13, times ~30, filter values a memo's 256). */
const MAX_TEXT = 512
/** Most filters one request may carry. */
export const MAX_FILTERS = 16
/** Longest filter path (dotted segments). */
const MAX_FIELD = 128

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** An optional name field: absent, empty or `"*"` (a wildcard where allowed) is undefined; else it must be a name. */
function nameField(body: Record<string, unknown>, key: string, wildcard: boolean): string | undefined {
  const value = body[key]
  if (value === undefined || value === null || value === '') return undefined
  if (typeof value !== 'string') throw new StreamRequestError(`${key} must be a string`)
  if (wildcard && value === '*') return undefined
  if (value.length > 13 || !isValidName(value)) throw new StreamRequestError(`invalid ${key}: ${value.slice(0, 20)}`)
  return value
}

function positionField(body: Record<string, unknown>, key: string): BlockPosition {
  const value = body[key]
  if (value === undefined || value === null || value === '' || value === 0) return { block: 0 }
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new StreamRequestError(`${key} must be an integer block number`)
    return { block: value }
  }
  if (typeof value === 'string' && value.length <= 40) {
    if (/^-?\d+$/.test(value)) {
      const block = Number(value)
      if (Number.isSafeInteger(block)) return { block }
    } else {
      // ISO times as Hyperion's `@timestamp` ranges; a time without zone is UTC, as block times are.
      const text = /[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`
      const timeMs = Date.parse(text)
      if (/^\d{4}-\d\d-\d\d/.test(value) && Number.isFinite(timeMs)) return { timeMs }
    }
  }
  throw new StreamRequestError(`${key} must be a block number or an ISO time`)
}

function booleanField(body: Record<string, unknown>, key: string): boolean {
  const value = body[key]
  return value === true || value === 'true' || value === 1
}

function filterOf(entry: unknown, index: number): StreamFilter {
  if (!isRecord(entry)) throw new StreamRequestError(`filters[${index}] must be an object`)
  const { field, value, operator, asset } = entry
  if (typeof field !== 'string' || field === '' || field.length > MAX_FIELD)
    throw new StreamRequestError(`filters[${index}].field must be a non-empty string of at most ${MAX_FIELD} chars`)
  if (!['string', 'number', 'boolean'].includes(typeof value) || (typeof value === 'string' && value.length > MAX_TEXT))
    throw new StreamRequestError(`filters[${index}].value must be a string, number or boolean`)
  const op = operator === undefined || operator === null || operator === '' ? 'eq' : operator
  if (typeof op !== 'string' || !(FILTER_OPERATORS as readonly string[]).includes(op))
    throw new StreamRequestError(`filters[${index}].operator must be one of ${FILTER_OPERATORS.join(', ')}`)
  if (asset !== undefined && (typeof asset !== 'string' || !/^[A-Z]{1,7}$/.test(asset)))
    throw new StreamRequestError(`filters[${index}].asset must be a symbol code`)
  return {
    field,
    value: value as StreamFilter['value'],
    operator: op as FilterOperator,
    ...(asset ? { asset: asset as string } : {}),
  }
}

function commonFields(body: Record<string, unknown>): CommonRequest {
  const startFrom = positionField(body, 'start_from')
  const readUntil = positionField(body, 'read_until')
  // Both plain blocks (or both times) compare now; mixed forms are compared once resolved.
  if ('block' in startFrom && 'block' in readUntil && readUntil.block !== 0) {
    const sameSign = Math.sign(startFrom.block) === Math.sign(readUntil.block)
    if (sameSign && startFrom.block > readUntil.block) throw new StreamRequestError('start_from is after read_until')
  }
  if ('timeMs' in startFrom && 'timeMs' in readUntil && startFrom.timeMs > readUntil.timeMs)
    throw new StreamRequestError('start_from is after read_until')
  const filterOp = body.filter_op === undefined || body.filter_op === null ? 'and' : body.filter_op
  if (filterOp !== 'and' && filterOp !== 'or') throw new StreamRequestError('filter_op must be "and" or "or"')
  const rawFilters = body.filters ?? []
  if (!Array.isArray(rawFilters)) throw new StreamRequestError('filters must be an array')
  if (rawFilters.length > MAX_FILTERS) throw new StreamRequestError(`at most ${MAX_FILTERS} filters`)
  const filters = rawFilters.map(filterOf)
  // Hyperion: the same field twice can only mean "any of" (filter_op "or").
  if (filterOp === 'and' && new Set(filters.map((f) => f.field)).size !== filters.length)
    throw new StreamRequestError('duplicate filter fields need filter_op "or"')
  return {
    startFrom,
    readUntil,
    filters,
    filterOp,
    ignoreLive: booleanField(body, 'ignore_live'),
    replayOnReconnect: booleanField(body, 'replayOnReconnect'),
  }
}

/** Validates an `action_stream_request` payload (throws StreamRequestError with the ack's message). */
export function parseActionRequest(body: unknown): ActionStreamRequest {
  if (!isRecord(body)) throw new StreamRequestError('request must be an object')
  const contract = nameField(body, 'contract', false)
  const action = nameField(body, 'action', true)
  const account = nameField(body, 'account', false)
  if (!account && !contract) throw new StreamRequestError('request must have an account or a contract and action')
  if (action && !contract) throw new StreamRequestError('action needs a contract')
  return { kind: 'action', contract, action, account, ...commonFields(body) }
}

/** Validates a `delta_stream_request` payload. */
export function parseDeltaRequest(body: unknown): DeltaStreamRequest {
  if (!isRecord(body)) throw new StreamRequestError('request must be an object')
  const code = nameField(body, 'code', false)
  if (!code) throw new StreamRequestError('request must have a code')
  return {
    kind: 'delta',
    code,
    table: nameField(body, 'table', true),
    // Hyperion throws on an absent scope and never acks; here absent or "*" means every scope.
    scope: nameField(body, 'scope', true),
    payer: nameField(body, 'payer', true),
    ...commonFields(body),
  }
}
