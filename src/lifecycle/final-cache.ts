import type { TransactionHistory } from '../store/index.ts'
import { BoundedCache } from './bounded-cache.ts'
import type { TransactionLifecycle } from './types.ts'

/** A lifecycle that can no longer change, with its JSON (what an answer is built from) and its execution block. */
export interface FinalLifecycle {
  readonly lifecycle: TransactionLifecycle
  readonly json: string
  readonly blockNum: number
}

/** How much the cache holds at most: entries, and characters of their JSON together. */
export interface FinalCacheLimits {
  readonly entries: number
  readonly jsonChars: number
}

/**
 * The defaults: 10,000 lifecycles or 32 Mi characters of JSON (a token transfer's lifecycle is about 5,000), whichever
 * comes first; the objects behind the JSON take about as much again.
 */
export const FINAL_CACHE_LIMITS: FinalCacheLimits = { entries: 10_000, jsonChars: 32 * 2 ** 20 }

/**
 * Whether a lifecycle assembled from `history` at `lib` is final: executed (or failed) in an irreversible block, every
 * record of the transaction in an irreversible block, and neither delayed nor canceled. Nothing can then change it: its
 * blocks, their row changes and receivers, and the ABIs in force at them are irreversible, and a transaction executed
 * irreversibly is never executed, canceled or forked out again. Anything else (a reversible block anywhere, a delayed
 * transaction still to run, a cancelation) is assembled again on every read.
 */
export function isFinal(lifecycle: TransactionLifecycle, history: TransactionHistory, lib: number): boolean {
  const status = lifecycle.transaction_status
  if (status !== 'executed' && status !== 'soft_fail' && status !== 'hard_fail') return false
  if (!lifecycle.execution_irreversible || lifecycle.execution_trace === null || lifecycle.canceled_by !== null)
    return false
  if (lifecycle.created_by !== null && !lifecycle.creation_irreversible) return false
  return history.records.every((r) => r.blockNum <= lib) && history.forkedOut.every((r) => r.blockNum <= lib)
}

/**
 * A bounded cache of final lifecycles by transaction id, least recently used first out, bounded by entries and by the
 * characters of their JSON (bounded-cache.ts). Nothing is ever invalidated: only final lifecycles (isFinal) are put in,
 * and they never change.
 */
export class FinalLifecycleCache {
  private readonly cache: BoundedCache<string, FinalLifecycle>

  constructor(readonly limits: FinalCacheLimits = FINAL_CACHE_LIMITS) {
    this.cache = new BoundedCache(limits.entries, limits.jsonChars, (entry) => entry.json.length)
  }

  get(id: string): FinalLifecycle | undefined {
    return this.cache.get(id)
  }

  /** Keeps a final lifecycle (the caller checked isFinal) and returns the entry (not kept if larger than the bound). */
  put(lifecycle: TransactionLifecycle): FinalLifecycle {
    const entry: FinalLifecycle = {
      lifecycle,
      json: JSON.stringify(lifecycle),
      blockNum: lifecycle.execution_trace!.block_num,
    }
    this.cache.set(lifecycle.id, entry)
    return entry
  }

  get size(): number {
    return this.cache.size
  }

  /** Characters of JSON held. */
  get jsonChars(): number {
    return this.cache.weight
  }

  get hits(): number {
    return this.cache.hits
  }

  get misses(): number {
    return this.cache.misses
  }
}
