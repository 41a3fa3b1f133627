import { AntlerError } from '../antelope/index.ts'
import type { SearchExpr, Store } from '../store/index.ts'

/**
 * An account's history as nodeos's history_plugin numbers it (`account_action_seq`): every action trace (one per
 * receipt, notifications not folded) whose receiver is the account or whose authorization names it as actor, in
 * global-sequence order, numbered from 0 — from the first block the store holds, not from genesis. That is the search
 * `receiver:<account> OR auth:<account>`, read through the posting lists only (no action is loaded to count).
 *
 * Numbering an entry needs the count of every entry before it. The irreversible part of the list never changes, so it
 * is walked once per account and remembered as its count and a checkpoint every `checkpointEvery` entries (the global
 * sequence of entries 0, K, 2K…): entry i is then at most K entries' walk from a checkpoint. The reversible tail (above
 * LIB, a few hundred blocks) is walked on each request, so a fork never leaves a wrong number behind.
 *
 * The first walk of a long history is the costly part: the store's search answers about 100,000 to 200,000 matches a
 * second (measured on SQLite), so an account with 10 million entries takes about a minute once. It is bounded: at most
 * `concurrentWalks` accounts are walked at once, a request waits for its account's walk at most `waitMs`, and then
 * answers 503 (retryable) while the walk goes on, so the retry finds it done or further on.
 */

export type AccountHistoryStore = Pick<Store, 'searchActions' | 'position' | 'firstSeqFromBlock'>

/** An entry of an account's history: its number and its action's global sequence. */
export interface AccountHistoryEntry {
  readonly accountActionSeq: number
  readonly globalSequence: number
}

export interface AccountHistoryOptions {
  /** Entries between two remembered checkpoints: the longest walk to locate an entry. */
  readonly checkpointEvery?: number
  /** Accounts remembered at most (least recently asked dropped first). */
  readonly maxAccounts?: number
  /** Matches asked of the store per read while walking (each read holds SQLite's one connection). */
  readonly page?: number
  /** How long a request waits for its account's remembered part to be walked before it answers 503. */
  readonly waitMs?: number
  /** Accounts whose remembered part is walked at once (others wait their turn). */
  readonly concurrentWalks?: number
}

/** The walked irreversible part of one account's list. */
interface Remembered {
  /** Entries counted, all below `nextSeq`. */
  count: number
  /** The first global sequence not walked yet. */
  nextSeq: number
  /** `checkpoints[k]` is the global sequence of entry k × checkpointEvery. */
  readonly checkpoints: number[]
}

/** The query matching an account's history entries. */
export function accountHistoryQuery(account: string): SearchExpr {
  return { or: [{ term: `receiver:${account}` }, { term: `auth:${account}` }] }
}

export class AccountHistoryIndex {
  private readonly checkpointEvery: number
  private readonly maxAccounts: number
  private readonly page: number
  private readonly waitMs: number
  private readonly walkTurns: WalkTurns
  /** By account, in least-recently-asked order; a promise so concurrent requests share one walk. */
  private readonly remembered = new Map<string, Promise<Remembered>>()

  constructor(
    private readonly store: AccountHistoryStore,
    options: AccountHistoryOptions = {},
  ) {
    this.checkpointEvery = options.checkpointEvery ?? 4096
    this.maxAccounts = options.maxAccounts ?? 10_000
    this.page = options.page ?? 4096
    this.waitMs = options.waitMs ?? 10_000
    this.walkTurns = new WalkTurns(options.concurrentWalks ?? 2)
  }

  /** Accounts remembered (tests and figures). */
  get size(): number {
    return this.remembered.size
  }

  /**
   * The account's history as it stands: its length, and a reader of entries `first`..`last` (inclusive, clamped to
   * the list).
   */
  async open(account: string): Promise<{
    count: number
    entries: (first: number, last: number) => Promise<AccountHistoryEntry[]>
  }> {
    const query = accountHistoryQuery(account)
    const known = await this.withinWait(account, this.irreversiblePart(account, query))
    // The reversible tail: every match from where the remembered part ends.
    const tail: number[] = []
    await this.walk(query, known.nextSeq, undefined, (seq) => void tail.push(seq))
    const count = known.count + tail.length
    const entries = async (first: number, last: number): Promise<AccountHistoryEntry[]> => {
      const from = Math.max(0, first)
      const to = Math.min(count - 1, last)
      if (from > to) return []
      const out: AccountHistoryEntry[] = []
      if (from < known.count) {
        const k = Math.floor(from / this.checkpointEvery)
        const skip = from - k * this.checkpointEvery
        const wanted = Math.min(to, known.count - 1) - from + 1
        const matches = await this.store.searchActions({
          query,
          direction: 'forward',
          fromSeq: known.checkpoints[k],
          toSeq: known.nextSeq - 1,
          limit: skip + wanted,
        })
        matches.slice(skip).forEach((m, i) => out.push({ accountActionSeq: from + i, globalSequence: m.seq }))
      }
      for (let i = Math.max(from, known.count); i <= to; i++)
        out.push({ accountActionSeq: i, globalSequence: tail[i - known.count] })
      return out
    }
    return { count, entries }
  }

  /** The walk's answer if it comes within `waitMs`; else a 503 (the walk goes on for the next request). */
  private async withinWait<T>(account: string, walk: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new AntlerError('service_unavailable_error', {
              reason: `the history of ${account} is still being counted; retry in a few seconds`,
            }),
          ),
        this.waitMs,
      )
    })
    try {
      return await Promise.race([walk, late])
    } finally {
      clearTimeout(timer)
    }
  }

  /** The remembered irreversible part, walked on from where it ended up to the current LIB. */
  private irreversiblePart(account: string, query: SearchExpr): Promise<Remembered> {
    const previous = this.remembered.get(account)
    this.remembered.delete(account)
    const next = (async () => {
      const known = previous ? await previous.catch(() => undefined) : undefined
      const state: Remembered = known ?? { count: 0, nextSeq: 0, checkpoints: [] }
      const bound = await this.irreversibleBound()
      // The store went back below what was walked (a store replaced under a running API): start over.
      if (bound < state.nextSeq) return this.extend({ count: 0, nextSeq: 0, checkpoints: [] }, query, bound)
      return this.extend(state, query, bound)
    })()
    this.remembered.set(account, next)
    if (this.remembered.size > this.maxAccounts) this.remembered.delete(this.remembered.keys().next().value as string)
    // A failed walk is not remembered.
    next.catch(() => {
      if (this.remembered.get(account) === next) this.remembered.delete(account)
    })
    return next
  }

  /** Walks from `state.nextSeq` to below `bound`, counting and taking checkpoints. */
  private async extend(state: Remembered, query: SearchExpr, bound: number): Promise<Remembered> {
    if (bound <= state.nextSeq) return state
    return this.walkTurns.run(async () => {
      // Counted into a copy: a walk that fails midway leaves the remembered state as it was.
      const next = { count: state.count, nextSeq: state.nextSeq, checkpoints: [...state.checkpoints] }
      await this.walk(query, state.nextSeq, bound - 1, (seq) => {
        if (next.count % this.checkpointEvery === 0) next.checkpoints.push(seq)
        next.count++
      })
      next.nextSeq = bound
      return next
    })
  }

  /**
   * The first global sequence that may still be forked out: that of the first action above LIB (every block has an
   * `onblock` action), else of the LIB block's own, else 0 (nothing is remembered).
   */
  private async irreversibleBound(): Promise<number> {
    const position = await this.store.position()
    if (!position) return 0
    return (
      (await this.store.firstSeqFromBlock(position.lib + 1)) ?? (await this.store.firstSeqFromBlock(position.lib)) ?? 0
    )
  }

  /** Calls `visit` with each match from `fromSeq` to `toSeq` (inclusive; open when undefined), ascending, in pages. */
  private async walk(
    query: SearchExpr,
    fromSeq: number,
    toSeq: number | undefined,
    visit: (seq: number) => void,
  ): Promise<void> {
    for (let at = fromSeq; ;) {
      const matches = await this.store.searchActions({
        query,
        direction: 'forward',
        fromSeq: at,
        toSeq,
        limit: this.page,
      })
      for (const m of matches) visit(m.seq)
      if (matches.length < this.page) return
      at = matches[matches.length - 1].seq + 1
    }
  }
}

/** At most `limit` walks at once; the others wait in arrival order. */
class WalkTurns {
  private running = 0
  private readonly waiting: (() => void)[] = []

  constructor(private readonly limit: number) {}

  async run<T>(walk: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve))
    else this.running++
    try {
      return await walk()
    } finally {
      const next = this.waiting.shift()
      if (next) next()
      else this.running--
    }
  }
}
