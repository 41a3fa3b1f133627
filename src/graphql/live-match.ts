import type { DecoderSource } from '../lifecycle/index.ts'
import { createPayloadMemo } from '../live/index.ts'
import {
  blockSearchTerms,
  dataSearchTerms,
  deferredCreator,
  type ActionRecord,
  type SearchExpr,
  type StepPayload,
  type Store,
  type TransactionRecord,
} from '../store/index.ts'

/** What matching a live block reads: ABIs (the decoders) and the creations of the deferred transactions it runs. */
export interface LiveMatchDeps {
  readonly decoders: DecoderSource
  readonly store: Pick<Store, 'transactionHistories'>
}

/** One executed action of a block with what the query language sees of it. */
interface IndexedAction {
  readonly action: ActionRecord
  readonly terms: ReadonlySet<string>
  readonly input: boolean
  readonly notif: boolean
  readonly scheduled: boolean
}

/** A transaction of a live block with at least one matching action. */
export interface LiveRow {
  readonly transaction: TransactionRecord
  /** Every executed action of the transaction in this block, in execution order. */
  readonly execution: readonly ActionRecord[]
  /** Execution indexes of the matching actions. */
  readonly matching: ReadonlySet<number>
  /** The global sequence of the transaction's first action: what a cursor is compared with. */
  readonly firstSeq: number
  /** The last matching action's global sequence (the result's cursor, as a search page makes it). */
  readonly lastMatchSeq: number
}

const TRX_ID_PREFIX = 'trx_id:'

/** Whether an action satisfies the expression (the engine's semantics, evaluated on one action). */
function satisfies(expr: SearchExpr, a: IndexedAction): boolean {
  if ('term' in expr)
    return expr.term.startsWith(TRX_ID_PREFIX)
      ? a.action.trxId === expr.term.slice(TRX_ID_PREFIX.length)
      : a.terms.has(expr.term)
  if ('flag' in expr) return a[expr.flag] === expr.value
  if ('and' in expr) return expr.and.every((e) => satisfies(e, a))
  if ('or' in expr) return expr.or.some((e) => satisfies(e, a))
  return !satisfies(expr.not, a)
}

/**
 * Matches search queries against blocks as the live hub delivers them: each block's actions get the terms ingest
 * indexes (search/terms: the same functions, the ABIs at the block, the creators of its deferred transactions), once
 * per block whatever the number of subscriptions, and each distinct query is evaluated once per block. A block's
 * content is the same object for every subscription (the hub's ring), so both are cached by it.
 *
 * One difference with the index, documented: an action after a `setabi` of its own contract in the same block is
 * decoded with the block's final ABI (ingest uses the ABI in force at the action).
 */
export function createLiveMatcher(deps: LiveMatchDeps) {
  const indexed = new WeakMap<StepPayload, Promise<IndexedAction[]>>()
  const matched = createPayloadMemo<LiveRow[]>()
  const decoders = new WeakMap<StepPayload, ReturnType<DecoderSource>>()

  async function index(payload: StepPayload): Promise<IndexedAction[]> {
    const accounts = new Set(payload.actions.map((a) => a.account))
    const decode = await deps.decoders(payload.block.num, accounts)
    const dataTerms = payload.actions.map((a) => {
      const value = decode(a.account, a.name, a.data)
      return dataSearchTerms(a, value === undefined ? undefined : { ok: true, value })
    })
    const scheduled = new Set(
      payload.transactions.filter((t) => t.scheduled && t.blockIndex >= 0 && t.status <= 2).map((t) => t.id),
    )
    const creators = new Map<string, string>()
    if (scheduled.size) {
      const histories = await deps.store.transactionHistories([...scheduled])
      for (const [id, history] of histories) {
        const created = history.records.find((r) => r.details?.deferred)?.details?.deferred
        if (created) creators.set(id, deferredCreator(created))
      }
    }
    const terms = blockSearchTerms(payload.actions, payload.rowChanges, (i) => dataTerms[i], creators)
    return payload.actions.map((action, i) => ({
      action,
      terms: new Set(terms[i]),
      input: action.creatorActionOrdinal === 0,
      notif: action.receiver !== action.account,
      scheduled: scheduled.has(action.trxId),
    }))
  }

  async function rows(payload: StepPayload, expr: SearchExpr): Promise<LiveRow[]> {
    let actions = indexed.get(payload)
    if (!actions) indexed.set(payload, (actions = index(payload)))
    const all = await actions
    const records = new Map(payload.transactions.filter((t) => t.blockIndex >= 0).map((t) => [t.id, t]))
    const out: LiveRow[] = []
    let i = 0
    while (i < all.length) {
      const trxId = all[i].action.trxId
      let end = i
      while (end < all.length && all[end].action.trxId === trxId) end++
      const group = all.slice(i, end)
      const matching = new Set<number>()
      group.forEach((a, idx) => satisfies(expr, a) && matching.add(idx))
      const transaction = records.get(trxId)
      if (matching.size && transaction)
        out.push({
          transaction,
          execution: group.map((a) => a.action),
          matching,
          firstSeq: group[0].action.globalSequence,
          lastMatchSeq: group[Math.max(...matching)].action.globalSequence,
        })
      i = end
    }
    return out
  }

  return {
    /** Decoders with the ABIs at the block, for its accounts and receivers (action data and rows). */
    decoder(payload: StepPayload): ReturnType<DecoderSource> {
      let found = decoders.get(payload)
      if (!found) {
        const accounts = new Set<string>()
        for (const a of payload.actions) accounts.add(a.account).add(a.receiver)
        decoders.set(payload, (found = deps.decoders(payload.block.num, accounts)))
      }
      return found
    },
    /** The block's transactions matching `expr` (keyed by `exprKey`), in execution order. */
    matches(payload: StepPayload, expr: SearchExpr, exprKey: string): Promise<LiveRow[]> {
      return matched(payload, exprKey, () => rows(payload, expr))
    },
  }
}

export type LiveMatcher = ReturnType<typeof createLiveMatcher>
