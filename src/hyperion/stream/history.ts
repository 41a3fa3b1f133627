import type { SearchExpr } from '../../store/index.ts'
import { actionDocuments, loadDocumentContexts } from '../action-documents.ts'
import { actionMatches, blockDeltaDocuments, deltaMatches } from './documents.ts'
import { matchesFilters } from './filters.ts'
import type { ActionStreamRequest, DeltaStreamRequest, StreamRequest } from './request.ts'
import type { StreamDeps, StreamDocument } from './types.ts'

/** Documents per history batch (Hyperion's `stream_scroll_batch`). */
export const HISTORY_BATCH = 500
/** Blocks whose row changes one delta-history read takes. */
const DELTA_BLOCKS_PER_READ = 100

/** A stretch of history: the documents that pass the filters, and how many the filters dropped. */
export interface HistoryChunk {
  readonly docs: readonly StreamDocument[]
  readonly filtered: number
}

/** Gathers a request's documents into chunks of HISTORY_BATCH, counting those its filters drop. */
function historyBatcher(request: StreamRequest) {
  let docs: StreamDocument[] = []
  let filtered = 0
  return {
    add(doc: StreamDocument): void {
      if (matchesFilters(doc, request.filters, request.filterOp)) docs.push(doc)
      else filtered++
    },
    /** The chunk gathered so far when it is full (or `final` and anything is held); undefined otherwise. */
    take(final = false): HistoryChunk | undefined {
      if (final ? docs.length === 0 && filtered === 0 : docs.length < HISTORY_BATCH) return undefined
      const chunk = { docs, filtered }
      docs = []
      filtered = 0
      return chunk
    },
  }
}

/** The search postings an action request's documents are found by (the same facts `actionMatches` checks). */
export function actionQuery(request: ActionStreamRequest): SearchExpr {
  const parts: SearchExpr[] = []
  if (request.account)
    parts.push({ or: [{ term: `receiver:${request.account}` }, { term: `auth:${request.account}` }] })
  if (request.contract) parts.push({ term: `account:${request.contract}` })
  if (request.action) parts.push({ term: `action:${request.action}` })
  return parts.length === 1 ? parts[0] : { and: parts }
}

/**
 * The action documents of blocks `from..to` answering the request, in global-sequence order, in chunks of about
 * HISTORY_BATCH: matching traces from the search postings, each one's whole execution read (notifications fold into
 * the document of the action they notify), documents checked against the request and its filters.
 */
export async function* actionHistory(
  deps: StreamDeps,
  request: ActionStreamRequest,
  range: { from: number; to: number },
): AsyncGenerator<HistoryChunk> {
  const { store } = deps
  const fromSeq = await store.firstSeqFromBlock(range.from)
  if (fromSeq === undefined) return
  const next = await store.firstSeqFromBlock(range.to + 1)
  const toSeq = next === undefined ? undefined : next - 1
  if (toSeq !== undefined && toSeq < fromSeq) return
  const query = actionQuery(request)
  let at = fromSeq
  let lastSent = -1
  const batch = historyBatcher(request)
  for (;;) {
    const matches = await store.searchActions({ query, direction: 'forward', fromSeq: at, toSeq, limit: HISTORY_BATCH })
    if (matches.length === 0) break
    at = matches[matches.length - 1].seq + 1
    const executions = await store.executionsOfActions(matches.map((m) => m.seq))
    const distinct = [...new Set(executions.values())]
      .filter((e) => e.blockNum >= range.from && e.blockNum <= range.to)
      .sort((a, b) => a.actions[0].globalSequence - b.actions[0].globalSequence)
    const contexts = await loadDocumentContexts(store, deps.blockDecoders, distinct)
    const docs = distinct.flatMap((e, i) => {
      const context = contexts[i]
      return context ? actionDocuments(e.actions, context) : []
    })
    for (const doc of docs) {
      const seq = Number(doc.global_sequence)
      // An execution spanning two postings reads is read twice: its documents go once.
      if (seq <= lastSent || !actionMatches(doc, request)) continue
      lastSent = seq
      batch.add(doc)
    }
    const full = batch.take()
    if (full) yield full
    if (matches.length < HISTORY_BATCH) break
  }
  const rest = batch.take(true)
  if (rest) yield rest
}

/** The delta documents of blocks `from..to` answering the request, block by block, in chunks of about HISTORY_BATCH. */
export async function* deltaHistory(
  deps: StreamDeps,
  request: DeltaStreamRequest,
  range: { from: number; to: number },
): AsyncGenerator<HistoryChunk> {
  const { store } = deps
  const batch = historyBatcher(request)
  for (let first = range.from; first <= range.to; first += DELTA_BLOCKS_PER_READ) {
    const nums: number[] = []
    for (let n = first; n <= Math.min(range.to, first + DELTA_BLOCKS_PER_READ - 1); n++) nums.push(n)
    const changes = await store.rowChangesOfBlocks(nums)
    const touched = nums.filter((n) => (changes.get(n) ?? []).some((c) => c.code === request.code))
    if (touched.length === 0) continue
    const blocks = await store.blocksByNums(touched)
    for (const num of touched) {
      const block = blocks.get(num)
      if (!block) continue
      const wanted = (changes.get(num) ?? []).filter((c) => deltaMatches(c, request))
      for (const doc of await blockDeltaDocuments(block, wanted, request.code, deps.decoders)) batch.add(doc)
    }
    const full = batch.take()
    if (full) yield full
  }
  const rest = batch.take(true)
  if (rest) yield rest
}
