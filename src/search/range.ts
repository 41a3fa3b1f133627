import type { StorePosition } from '../store/index.ts'
import { SearchParamError } from './request-errors.ts'

/** Limits of `/v0/search/transactions` (docs/API.md). */
export const SEARCH_LIMITS = {
  /** Transactions per page when `limit` is absent. */
  defaultLimit: 25,
  /** The largest `limit` (dfuse's). */
  maxLimit: 100,
  /** `start_block` and `block_count` are uint32 (a negative `start_block` counts back from the head). */
  maxBlock: 0xffff_ffff,
} as const

export type SearchSort = 'asc' | 'desc'

/** The search parameters that bound a page, as numbers (the REST route parses the strings). */
export interface RangeParams {
  /**
   * 0: the start of the chain (asc) or the searchable head (desc); negative: that many blocks below the searchable
   * head.
   */
  readonly startBlock: number
  readonly blockCount: number
  readonly sort: SearchSort
  readonly withReversible: boolean
}

/** Blocks a page may return, both ends included; empty when `low > high`. */
export interface BlockRange {
  readonly low: number
  readonly high: number
  readonly sort: SearchSort
  /** The searchable head: the head with `with_reversible`, else LIB. */
  readonly virtualHead: number
}

const isInt = (n: number, min: number, max: number) => Number.isInteger(n) && n >= min && n <= max

/** Checks the numeric parameters against their rules (what any caller, REST or GraphQL, must respect). */
export function checkRangeParams(p: RangeParams & { limit: number }, maxLimit: number = SEARCH_LIMITS.maxLimit): void {
  if (!isInt(p.startBlock, -SEARCH_LIMITS.maxBlock, SEARCH_LIMITS.maxBlock))
    throw SearchParamError({
      param: 'start_block',
      sentence: `The start_block field must be an integer from -${SEARCH_LIMITS.maxBlock} to ${SEARCH_LIMITS.maxBlock}`,
    })
  if (!isInt(p.blockCount, 1, SEARCH_LIMITS.maxBlock))
    throw SearchParamError({
      param: 'block_count',
      sentence: `The block_count field must be an integer from 1 to ${SEARCH_LIMITS.maxBlock}`,
    })
  if (!isInt(p.limit, 1, maxLimit))
    throw SearchParamError({ param: 'limit', sentence: `The limit field must be an integer from 1 to ${maxLimit}` })
}

/**
 * The blocks of a search (dfuse's legacy boundaries, docs/API.md). The searchable
 * head is the head with `with_reversible`, else LIB. Ascending: `start_block` 0 is block 1, and the
 * range is [start, start + block_count]; descending: `start_block` 0 is the searchable head, and
 * the range is [start − block_count, start], clamped at 1. A negative `start_block` is that many
 * blocks below the searchable head (clamped at 1). A start above the searchable head is refused.
 */
export function blockRange(p: RangeParams, position: StorePosition | undefined): BlockRange {
  const virtualHead = position ? (p.withReversible ? position.head.blockNum : position.lib) : 0
  if (p.startBlock > virtualHead) {
    const sentence = p.withReversible
      ? `The start_block field is above the head block ${virtualHead}; use 0 to follow the head`
      : `The start_block field is above the last irreversible block ${virtualHead}; use 0 to follow it, or with_reversible=true`
    throw SearchParamError({ param: 'start_block', sentence })
  }
  const relative = p.startBlock < 0 ? Math.max(1, virtualHead + p.startBlock) : undefined
  if (p.sort === 'asc') {
    const start = relative ?? Math.max(1, p.startBlock)
    return { low: start, high: Math.min(virtualHead, start + p.blockCount), sort: 'asc', virtualHead }
  }
  const start = relative ?? (p.startBlock === 0 ? virtualHead : p.startBlock)
  return { low: Math.max(1, start - p.blockCount), high: Math.min(start, virtualHead), sort: 'desc', virtualHead }
}

/** GraphQL's bounds (dfuse's block-range rules, docs/API.md "GraphQL"): both ends optional, negatives from the head. */
export interface BoundsParams {
  readonly lowBlockNum?: number
  readonly highBlockNum?: number
  readonly sort: SearchSort
  readonly withReversible: boolean
}

/**
 * The blocks of a GraphQL search. The searchable head is the head, or LIB for irreversible-only searches; a negative
 * bound n is `head + n + 1` (−1 = the head). An absent low bound is block 1, an absent high bound the searchable head;
 * a high bound past it is cut to it ascending and refused descending (a descending search cannot start in the future).
 */
export function boundedRange(p: BoundsParams, position: StorePosition | undefined): BlockRange {
  const virtualHead = position ? (p.withReversible ? position.head.blockNum : position.lib) : 0
  const resolve = (n: number) => (n < 0 ? virtualHead + n + 1 : n)
  const low = Math.max(1, p.lowBlockNum === undefined ? 1 : resolve(p.lowBlockNum))
  const high = p.highBlockNum === undefined ? virtualHead : resolve(p.highBlockNum)
  if (p.sort === 'desc' && high > virtualHead)
    throw SearchParamError({
      param: 'highBlockNum',
      sentence: `highBlockNum ${high} is above the ${p.withReversible ? 'head' : 'last irreversible'} block ${virtualHead}; use -1 to follow the HEAD`,
    })
  return { low, high: Math.min(high, virtualHead), sort: p.sort, virtualHead }
}
