import { createPayloadMemo, type LiveStep, type Subscription } from '../../live/index.ts'
import type { StepPayload } from '../../store/index.ts'
import type { HyperionActionDocument } from '../action-documents.ts'
import type { HyperionDeltaDocument } from '../delta-documents.ts'
import { actionMatches, blockDeltaDocuments, executionDocuments, payloadExecutions } from './documents.ts'
import { matchesFilters } from './filters.ts'
import type { StreamRequest } from './request.ts'
import type { ForkEvent, StreamDeps, StreamDocument } from './types.ts'

/**
 * What one block's payload makes, built once per payload and shared by every live request (the hub hands the same
 * payload object to all its live subscribers): its action documents, and its delta documents per contract.
 */
export interface BlockDocumentMemo {
  actions(payload: StepPayload): Promise<HyperionActionDocument[]>
  deltas(payload: StepPayload, code: string): Promise<HyperionDeltaDocument[]>
}

export function createBlockDocumentMemo(deps: Pick<StreamDeps, 'decoders'>): BlockDocumentMemo {
  const actions = createPayloadMemo<HyperionActionDocument[]>()
  const deltas = createPayloadMemo<HyperionDeltaDocument[]>()
  return {
    actions: (payload) =>
      actions(payload, 'actions', () => executionDocuments(payloadExecutions(payload), deps.decoders)),
    deltas: (payload, code) =>
      deltas(payload, code, () => blockDeltaDocuments(payload.block, payload.rowChanges, code, deps.decoders)),
  }
}

/** The documents of a block that answer a request (before its filters). */
export async function liveDocuments(
  memo: BlockDocumentMemo,
  payload: StepPayload,
  request: StreamRequest,
): Promise<StreamDocument[]> {
  if (request.kind === 'action') return (await memo.actions(payload)).filter((d) => actionMatches(d, request))
  return (await memo.deltas(payload, request.code)).filter(
    (d) =>
      (!request.table || d.table === request.table) &&
      (!request.scope || d.scope === request.scope) &&
      (!request.payer || d.payer === request.payer),
  )
}

/** What the live follower hands out. */
export interface LiveOutput {
  /** Documents of an applied block that pass the request and its filters. */
  documents(docs: readonly StreamDocument[], blockNum: number): void
  fork(event: Omit<ForkEvent, 'chain_id' | 'reqUUID'>): void
  /** Called after each batch of steps; the hub waits for it (a slow client slows, then loses, its subscription). */
  flush(): Promise<void>
  /** `read_until` is irreversible: nothing more can come (or change) for the request. */
  finished(): void
}

/**
 * Follows the step log for one request: applied blocks (`new`, `redo`) in the window `floor..until` give their
 * documents; undone blocks the request was past are gathered into one fork notice, sent with the id of the block that
 * replaces the first of them (the next applied step), before that block's documents. `irreversible` steps carry
 * nothing here (`lib_update` is the server's) but end the request once `read_until` is irreversible.
 */
export function followLive(
  deps: Pick<StreamDeps, 'live'>,
  memo: BlockDocumentMemo,
  request: StreamRequest,
  window: { afterSeq: number; floor: number; until: number | undefined },
  out: LiveOutput,
  onError: (error: unknown) => void,
): Subscription {
  let undone: { block_num: number; block_id: string }[] = []
  const inWindow = (num: number) => num >= window.floor && (window.until === undefined || num <= window.until)
  const onSteps = async (items: readonly LiveStep[]) => {
    for (const { step, payload } of items) {
      if (step.type === 'irreversible' && window.until !== undefined && step.blockNum >= window.until) {
        await out.flush()
        return out.finished()
      }
      if (step.type === 'undo') {
        if (inWindow(step.blockNum)) undone.push({ block_num: step.blockNum, block_id: step.blockId })
        continue
      }
      if (step.type !== 'new' && step.type !== 'redo') continue
      if (undone.length > 0) {
        const nums = undone.map((b) => b.block_num)
        out.fork({
          starting_block: Math.min(...nums),
          ending_block: Math.max(...nums),
          new_id: step.blockId,
          forkedBlocks: undone,
        })
        undone = []
      }
      if (!payload || !inWindow(step.blockNum)) continue
      const docs = (await liveDocuments(memo, payload, request)).filter((d) =>
        matchesFilters(d, request.filters, request.filterOp),
      )
      if (docs.length > 0) out.documents(docs, step.blockNum)
    }
    await out.flush()
  }
  return deps.live.subscribe({ afterSeq: window.afterSeq, onSteps, onError })
}
