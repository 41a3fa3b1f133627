import type { DecoderSource } from '../../lifecycle/index.ts'
import type { ActionRecord, BlockRecord, RowChange, StepPayload, TransactionRecord } from '../../store/index.ts'
import { actionDocuments, type HyperionActionDocument } from '../action-documents.ts'
import { deltaDocuments, rowDecoderOf, type HyperionDeltaDocument } from '../delta-documents.ts'
import type { ActionStreamRequest, DeltaStreamRequest } from './request.ts'

/** One transaction's execution in a block, with what its documents need. */
export interface Execution {
  readonly block: BlockRecord
  readonly transaction: TransactionRecord | undefined
  /** Its actions in global-sequence order. */
  readonly actions: readonly ActionRecord[]
}

/** Does an action document answer the request? (`account`: notified or authorizer; `contract`/`action`: the call.) */
export function actionMatches(doc: HyperionActionDocument, request: ActionStreamRequest): boolean {
  if (request.contract && doc.act.account !== request.contract) return false
  if (request.action && doc.act.name !== request.action) return false
  if (request.account) {
    const account = request.account
    // Hyperion compares the account with the notified list and never matches when contract is given too; here
    // both must hold.
    const notified = doc.receipts.some((r) => r.receiver === account)
    if (!notified && !doc.act.authorization.some((a) => a.actor === account)) return false
  }
  return true
}

/** Does a row change answer a delta request? */
export function deltaMatches(change: RowChange, request: DeltaStreamRequest): boolean {
  if (change.code !== request.code) return false
  if (request.table && change.table !== request.table) return false
  if (request.scope && change.scope !== request.scope) return false
  if (request.payer) {
    const payer = change.value !== undefined ? change.payer : change.payer || change.old?.payer
    if (payer !== request.payer) return false
  }
  return true
}

/** The documents of executions (one decoder read per block), in the executions' order. */
export async function executionDocuments(
  executions: readonly Execution[],
  decoders: DecoderSource,
): Promise<HyperionActionDocument[]> {
  const out: HyperionActionDocument[] = []
  const accountsByBlock = new Map<number, Set<string>>()
  for (const e of executions) {
    const set = accountsByBlock.get(e.block.num) ?? accountsByBlock.set(e.block.num, new Set()).get(e.block.num)!
    for (const a of e.actions) set.add(a.account)
  }
  const decodeOf = new Map<number, Awaited<ReturnType<DecoderSource>>>()
  for (const [num, accounts] of accountsByBlock) decodeOf.set(num, await decoders(num, accounts))
  for (const e of executions)
    out.push(
      ...actionDocuments(e.actions, { block: e.block, transaction: e.transaction, decode: decodeOf.get(e.block.num)! }),
    )
  return out
}

/** The executed transactions of a step's block, each with its actions (what a live action stream reads). */
export function payloadExecutions(payload: StepPayload): Execution[] {
  const executed = new Map<string, TransactionRecord>()
  for (const t of payload.transactions) if (t.blockIndex >= 0 && t.status === 0) executed.set(t.id, t)
  const byTrx = new Map<string, ActionRecord[]>()
  for (const a of payload.actions) {
    if (!executed.has(a.trxId)) continue
    const list = byTrx.get(a.trxId) ?? byTrx.set(a.trxId, []).get(a.trxId)!
    list.push(a)
  }
  return [...byTrx].map(([id, actions]) => ({ block: payload.block, transaction: executed.get(id), actions }))
}

/** The delta documents of a block's changes of contract `code`, decoded with the ABI in force at that block. */
export async function blockDeltaDocuments(
  block: BlockRecord,
  changes: readonly RowChange[],
  code: string,
  decoders: DecoderSource,
): Promise<HyperionDeltaDocument[]> {
  const wanted = changes.filter((c) => c.code === code)
  if (wanted.length === 0) return []
  const decode = await decoders(block.num, [code])
  return deltaDocuments(wanted, block, rowDecoderOf(decode.abiOf))
}
