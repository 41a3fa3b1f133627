import { SearchForkRaceError } from '../search/index.ts'
import type { ExecutionActions, SearchDirection, SearchExpr, Store, StorePosition } from '../store/index.ts'
import type { BlockDecoderSource } from '../lifecycle/index.ts'
import {
  actionDocuments,
  foldNotifications,
  loadDocumentContexts,
  type ActionDocumentOptions,
  type DocumentContextStore,
  type HyperionActionDocument,
} from './action-documents.ts'
import type { ActionQueryPlan, Bounds } from './action-query.ts'

/**
 * get_actions' paging over the search index: documents (one per action, notifications folded) matching a plan, in
 * global-sequence order, `skip` then `limit` of them, and their count up to a cap. Fork-correct: a page is read
 * between two snapshots that must see the same head block (blocks link by id, so an unchanged head means no block at
 * or below it was replaced meanwhile), and holds nothing above that head; else it is read again.
 */

/** What a page reads. */
export type ActionSearchStore = Pick<
  Store,
  'searchActions' | 'executionsOfActions' | 'firstSeqFromBlock' | 'snapshot'
> &
  DocumentContextStore

/** One document of a page: the execution holding it and its index among the execution's folded groups. */
export interface DocumentRef {
  readonly execution: ExecutionActions
  readonly group: number
}

/** `total` as Hyperion answers it: the count up to the cap, `gte` once capped. */
export interface DocumentTotal {
  readonly value: number
  readonly relation: 'eq' | 'gte'
}

export interface ActionPageRequest {
  readonly plan: ActionQueryPlan
  readonly direction: SearchDirection
  readonly skip: number
  readonly limit: number
  /** Count matching documents up to this many (`track`); undefined: no count. */
  readonly countCap: number | undefined
  /** How the documents are written. */
  readonly documents?: ActionDocumentOptions
}

export interface ActionPage {
  readonly documents: readonly HyperionActionDocument[]
  readonly total: DocumentTotal | undefined
  readonly position: StorePosition | undefined
  /**
   * The highest block the page's range reached (its `before`/block bound, else the head): at or below the position's
   * LIB, the page can never change (no fork reaches an irreversible block, and later blocks are out of its range).
   */
  readonly highBlock?: number
}

/** Attempts before a page that keeps racing forks answers a retryable 503. */
const MAX_ATTEMPTS = 4
/** Matches asked of the engine at most per call. */
const MAX_BATCH = 2_000

/** The fold of an execution, as the group index of each of its actions (by position in the execution). */
function groupIndexes(actions: ExecutionActions['actions']): number[] {
  const out: number[] = []
  foldNotifications(actions).forEach((group, index) => {
    for (const trace of group) out[trace.globalSequence - actions[0].globalSequence] = index
  })
  return out
}

/** A walk's range: global sequences [fromSeq..toSeq] in the direction of travel, in blocks [low, high]. */
interface WalkRange {
  readonly fromSeq: number | undefined
  readonly toSeq: number | undefined
  readonly low: number
  readonly high: number
}

/**
 * Up to `want` documents in the direction of travel: matches read in batches, each batch's executions in one read,
 * and a match folded into the previous document when it is a notification of the same action.
 */
async function walkDocuments(
  store: Pick<Store, 'searchActions' | 'executionsOfActions'>,
  expr: SearchExpr,
  direction: SearchDirection,
  range: WalkRange,
  want: number,
): Promise<DocumentRef[]> {
  const forward = direction === 'forward'
  const out: DocumentRef[] = []
  const folds = new Map<ExecutionActions, number[]>()
  let lastKey: { execution: ExecutionActions; group: number } | undefined
  let at = range.fromSeq
  let batch = Math.min(want + 1, MAX_BATCH)
  while (out.length < want) {
    const matches = await store.searchActions({ query: expr, direction, fromSeq: at, toSeq: range.toSeq, limit: batch })
    if (matches.length === 0) break
    const executions = await store.executionsOfActions(matches.map((m) => m.seq))
    for (const { seq } of matches) {
      const execution = executions.get(seq)
      const first = execution?.actions[0]?.globalSequence
      const action = execution && first !== undefined ? execution.actions[seq - first] : undefined
      // Missing: removed by a fork after the engine read its posting (the second snapshot sees that fork).
      if (!execution || action?.globalSequence !== seq) continue
      if (action.blockNum < range.low || action.blockNum > range.high) continue
      let groups = folds.get(execution)
      if (!groups) folds.set(execution, (groups = groupIndexes(execution.actions)))
      const group = groups[seq - first!]
      // Each batch reads its executions anew: the same execution is compared by transaction and block.
      const previous = lastKey?.execution
      if (previous?.trxId === execution.trxId && previous.blockNum === execution.blockNum && lastKey!.group === group)
        continue
      lastKey = { execution, group }
      out.push(lastKey)
      if (out.length === want) break
    }
    if (matches.length < batch) break
    const last = matches[matches.length - 1].seq
    at = forward ? last + 1 : last - 1
    if (at < 0) break
    batch = Math.min(batch * 2, MAX_BATCH)
  }
  return out
}

/** The receiver terms of an expression, and whether one appears under a NOT. */
function receiverTerms(expr: SearchExpr, negated = false, out = { values: new Set<string>(), negated: false }) {
  if ('term' in expr) {
    if (expr.term.startsWith('receiver:')) {
      out.values.add(expr.term)
      if (negated) out.negated = true
    }
  } else if ('not' in expr) receiverTerms(expr.not, !negated, out)
  else if ('and' in expr) for (const e of expr.and) receiverTerms(e, negated, out)
  else if ('or' in expr) for (const e of expr.or) receiverTerms(e, negated, out)
  return out
}

/**
 * What the expression says of an action's original trace, evaluated on one of its notifications: the original's
 * receiver is the action's account, and every other term the index holds for a notification (account, action,
 * authorizers, data, transaction, the `input` flag) is the original's.
 */
export function onOriginal(expr: SearchExpr): SearchExpr {
  if ('term' in expr)
    return expr.term.startsWith('receiver:') ? { term: `account:${expr.term.slice('receiver:'.length)}` } : expr
  if ('not' in expr) return { not: onOriginal(expr.not) }
  if ('and' in expr) return { and: expr.and.map(onOriginal) }
  if ('or' in expr) return { or: expr.or.map(onOriginal) }
  return expr
}

/**
 * Whether documents can be counted from the posting lists alone: every action has one original trace, so the
 * documents are the matching originals plus the actions whose original does not match but a notification does. The
 * latter are counted one per matching notification, which is exact when at most one notification of an action can
 * match while its original does not: when the expression names at most one receiver, never under a NOT (nodeos
 * notifies an account at most once per action, and every other term is the same on all of an action's traces).
 */
export function countableByPostings(expr: SearchExpr): boolean {
  const receivers = receiverTerms(expr)
  return !receivers.negated && receivers.values.size <= 1
}

/** An AND's or an OR's parts with nested ANDs (ORs) merged in. */
function flatten(expr: SearchExpr): SearchExpr {
  if ('and' in expr) return { and: expr.and.map(flatten).flatMap((e) => ('and' in e ? e.and : [e])) }
  if ('or' in expr) return { or: expr.or.map(flatten).flatMap((e) => ('or' in e ? e.or : [e])) }
  if ('not' in expr) return { not: flatten(expr.not) }
  return expr
}

/** The terms an expression excludes when negated: `not t` and `not (t1 or t2…)`. */
function negatedTerms(expr: SearchExpr): string[] {
  if (!('not' in expr)) return []
  const inner = expr.not
  if ('term' in inner) return [inner.term]
  if ('or' in inner) return inner.or.flatMap((e) => ('term' in e ? [e.term] : []))
  return []
}

/**
 * An AND's parts simplified where its own terms decide them: inside `not (…)` an AND's parts that the AND requires
 * anyway are true, so they go; a NOT left with nothing, or excluding a term the AND requires, makes it match nothing
 * (undefined).
 */
function simplifyConjunction(parts: readonly SearchExpr[]): SearchExpr[] | undefined {
  const positives = new Set(parts.flatMap((p) => ('term' in p ? [p.term] : [])))
  const out: SearchExpr[] = []
  for (const p of parts) {
    if ('not' in p && 'and' in p.not) {
      const left = p.not.and.filter((q) => !('term' in q && positives.has(q.term)))
      if (left.length === 0) return undefined
      out.push({ not: left.length === 1 ? left[0] : { and: left } })
    } else out.push(p)
  }
  const excluded = new Set(out.flatMap(negatedTerms))
  return [...positives].some((t) => excluded.has(t)) ? undefined : out
}

/**
 * A counting query the engine walks cheaply. The engine filters flags on a term's own list, but an AND of flags with
 * only an OR walks the every-action list, and a NOT that excludes every candidate walks its list to the end; so flags
 * and NOTs are distributed into the OR's branches, and each branch is simplified (simplifyConjunction): a branch such
 * as `auth:x AND NOT (account:x OR auth:x)` matches nothing and is dropped.
 */
export function countingQuery(expr: SearchExpr): SearchExpr {
  const flat = flatten(expr)
  if (!('and' in flat)) return flat
  const ors = flat.and.filter((e) => 'or' in e)
  const rest = flat.and.filter((e) => !('or' in e))
  const conjunctions =
    ors.length === 1
      ? (ors[0] as { or: SearchExpr[] }).or.map((b) => (flatten({ and: [b, ...rest] }) as { and: SearchExpr[] }).and)
      : [flat.and]
  const branches = conjunctions.flatMap((c) => {
    const simplified = simplifyConjunction(c)
    return simplified ? [{ and: simplified }] : []
  })
  return branches.length === 1 ? branches[0] : { or: branches }
}

/** Documents matching `expr` within the sequence range, counted up to `cap`. */
async function countDocuments(
  store: Pick<Store, 'searchActions' | 'executionsOfActions'>,
  expr: SearchExpr,
  range: WalkRange,
  cap: number,
): Promise<DocumentTotal> {
  const total = (n: number): DocumentTotal => (n > cap ? { value: cap, relation: 'gte' } : { value: n, relation: 'eq' })
  if (!countableByPostings(expr)) return total((await walkDocuments(store, expr, 'forward', range, cap + 1)).length)
  const seqs = { direction: 'forward' as const, fromSeq: range.fromSeq, toSeq: range.toSeq }
  const originals = await store.searchActions({
    query: countingQuery({ and: [expr, { flag: 'notif', value: false }] }),
    ...seqs,
    limit: cap + 1,
  })
  if (originals.length > cap || receiverTerms(expr).values.size === 0) return total(originals.length)
  const notificationsOnly = await store.searchActions({
    query: countingQuery({ and: [expr, { flag: 'notif', value: true }, { not: onOriginal(expr) }] }),
    ...seqs,
    limit: cap + 1 - originals.length,
  })
  return total(originals.length + notificationsOnly.length)
}

/** The global sequence of the last action at or below `blockNum` (undefined: no bound, the head's). */
async function lastSeqOfBlock(store: Pick<Store, 'firstSeqFromBlock'>, blockNum: number): Promise<number | undefined> {
  const next = await store.firstSeqFromBlock(blockNum + 1)
  return next === undefined ? undefined : next - 1
}

const maxOf = (a: number | undefined, b: number | undefined) =>
  a === undefined ? b : b === undefined ? a : Math.max(a, b)
const minOf = (a: number | undefined, b: number | undefined) =>
  a === undefined ? b : b === undefined ? a : Math.min(a, b)

/**
 * One page of get_actions: `skip` documents passed over, then up to `limit`, with their count when asked. Documents
 * are walked, not postings, so `skip` counts documents as Hyperion does.
 */
export async function searchActionDocuments(
  store: ActionSearchStore,
  decoders: BlockDecoderSource,
  request: ActionPageRequest,
): Promise<ActionPage> {
  const { plan } = request
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const begun = await store.snapshot(async (reader) => {
      const position = await reader.position()
      if (!position) return undefined
      const anchor = await reader.blockByNum(position.head.blockNum)
      const after =
        plan.time.afterMs === undefined
          ? undefined
          : await reader.blockByTime({ timeMs: plan.time.afterMs, comparator: 'gte' })
      const before =
        plan.time.beforeMs === undefined
          ? undefined
          : await reader.blockByTime({ timeMs: plan.time.beforeMs, comparator: 'lte' })
      const blocks: Bounds = {
        low: maxOf(plan.blocks.low, after?.num) ?? 1,
        high: minOf(plan.blocks.high, before?.num) ?? position.head.blockNum,
      }
      const empty = (plan.time.afterMs !== undefined && !after) || (plan.time.beforeMs !== undefined && !before)
      return { position, anchorId: anchor?.id, blocks, empty }
    })
    if (!begun)
      return {
        documents: [],
        total: request.countCap === undefined ? undefined : { value: 0, relation: 'eq' },
        position: undefined,
      }
    const head = begun.position.head.blockNum
    const low = Math.max(1, begun.blocks.low ?? 1)
    const high = Math.min(head, begun.blocks.high ?? head)
    const emptyTotal = request.countCap === undefined ? undefined : ({ value: 0, relation: 'eq' } as const)
    if (begun.empty || low > high || (plan.seq.low ?? 0) > (plan.seq.high ?? Number.MAX_SAFE_INTEGER))
      return { documents: [], total: emptyTotal, position: begun.position, highBlock: high }
    const [firstSeq, lastSeq] = await Promise.all([
      low > 1 ? store.firstSeqFromBlock(low) : Promise.resolve(0),
      high < head ? lastSeqOfBlock(store, high) : Promise.resolve(undefined),
    ])
    if (firstSeq === undefined) return { documents: [], total: emptyTotal, position: begun.position, highBlock: high }
    const seqLow = maxOf(plan.seq.low, firstSeq) ?? 0
    const seqHigh = minOf(plan.seq.high, lastSeq)
    const forward = request.direction === 'forward'
    const range: WalkRange = {
      fromSeq: forward ? seqLow : seqHigh,
      toSeq: forward ? seqHigh : seqLow,
      low,
      high,
    }
    const [walked, total] = await Promise.all([
      request.limit > 0
        ? walkDocuments(store, plan.expr, request.direction, range, request.skip + request.limit)
        : Promise.resolve([]),
      request.countCap === undefined
        ? undefined
        : countDocuments(store, plan.expr, { ...range, fromSeq: seqLow, toSeq: seqHigh }, request.countCap),
    ])
    const documents = await documentsOf(store, decoders, walked.slice(request.skip), request.documents)
    if (documents === undefined || !(await anchorHolds(store, head, begun.anchorId))) continue
    return { documents, total, position: begun.position, highBlock: high }
  }
  throw SearchForkRaceError({ attempts: MAX_ATTEMPTS })
}

/** Whether the block at `head` is still the one read as the anchor (undefined: the store was empty). */
async function anchorHolds(
  store: Pick<Store, 'snapshot'>,
  head: number,
  anchorId: string | undefined,
): Promise<boolean> {
  return store.snapshot(async (reader) => anchorId === undefined || (await reader.blockByNum(head))?.id === anchorId)
}

/**
 * The documents of a page's refs, in their order: the executions' contexts in one batch of reads, each execution's
 * documents built once. Undefined when a block is gone (a fork removed it while the page was read).
 */
export async function documentsOf(
  store: DocumentContextStore,
  decoders: BlockDecoderSource,
  refs: readonly DocumentRef[],
  options: ActionDocumentOptions = {},
): Promise<HyperionActionDocument[] | undefined> {
  const executions = [...new Set(refs.map((r) => r.execution))]
  const contexts = await loadDocumentContexts(store, decoders, executions)
  const built = new Map<ExecutionActions, HyperionActionDocument[]>()
  for (let i = 0; i < executions.length; i++) {
    const context = contexts[i]
    if (!context) return undefined
    built.set(executions[i], actionDocuments(executions[i].actions, context, options))
  }
  return refs.map((r) => built.get(r.execution)![r.group])
}

/**
 * `read` on a consistent view: it runs between two snapshots that must see the same head block, and again (at most
 * MAX_ATTEMPTS times, then a retryable 503) when a fork replaced it meanwhile or `read` itself saw one ('forked').
 */
export async function readConsistently<T>(
  store: Pick<Store, 'snapshot'>,
  read: (position: StorePosition | undefined) => Promise<T | 'forked'>,
): Promise<{ value: T; position: StorePosition | undefined }> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const begun = await store.snapshot(async (reader) => {
      const position = await reader.position()
      const anchorId = position ? (await reader.blockByNum(position.head.blockNum))?.id : undefined
      return { position, anchorId }
    })
    const value = await read(begun.position)
    if (value === 'forked') continue
    if (begun.position && !(await anchorHolds(store, begun.position.head.blockNum, begun.anchorId))) continue
    return { value, position: begun.position }
  }
  throw SearchForkRaceError({ attempts: MAX_ATTEMPTS })
}
