import { bigIntToName, formatRfc3339, toHex } from '../../antelope/index.ts'
import { actionTree, attributeRowChanges, receiversOfOthers, type DecoderSource } from '../../lifecycle/index.ts'
import { createPayloadMemo } from '../../live/index.ts'
import { AppNotReadyError, BlockNumNotCoveredError, firstStoredBlock } from '../../state/index.ts'
import type { ActionRecord, StepPayload, StepType } from '../../store/index.ts'
import { WsMessageDataValidationError } from '../errors.ts'
import type { StreamHandler } from './connection.ts'
import { dataBoolean, dataString, type StreamRequest } from './envelope.ts'
import { followFrom, type FeedItem, type FeedStore, type StepFeed } from './feed.ts'
import { progressReporter } from './progress.ts'

/** What a `get_action_traces` request asks, its lists parsed. */
interface ActionFilter {
  readonly accounts: ReadonlySet<string>
  readonly receivers: ReadonlySet<string>
  readonly names: ReadonlySet<string> | undefined
  readonly inlineTraces: boolean
  readonly dbops: boolean
  /** `with_fork_steps` (Antler's addition): each trace carries `step`; forked-out actions are withdrawn by `undo`. */
  readonly forkSteps: boolean
}

const list = (text: string | undefined) =>
  (text ?? '')
    .split('|')
    .map((s) => s.trim())
    .filter((s) => s !== '')

function parseFilter(request: StreamRequest): ActionFilter {
  if (!request.listen) throw WsMessageDataValidationError({ reason: "'listen' required" })
  if (request.fetch) throw WsMessageDataValidationError({ reason: "'fetch' not supported" })
  const d = request.data
  // The deprecated singular forms overwrite the plural ones, as dfuse did.
  const accounts = list(dataString(d, 'account') || dataString(d, 'accounts'))
  if (accounts.length === 0) throw WsMessageDataValidationError({ reason: "'data.accounts' required" })
  const receivers = list(dataString(d, 'receiver') || dataString(d, 'receivers'))
  const names = list(dataString(d, 'action_name') || dataString(d, 'action_names'))
  return {
    accounts: new Set(accounts),
    receivers: new Set(receivers.length ? receivers : accounts),
    names: names.length ? new Set(names) : undefined,
    inlineTraces: dataBoolean(d, 'with_inline_traces'),
    dbops: dataBoolean(d, 'with_dbops'),
    forkSteps: dataBoolean(d, 'with_fork_steps'),
  }
}

/** dfuse's v0 dbop of an action trace: `path` = code/scope/table/key (key as a name), hex values. */
function v0Dbop(change: StepPayload['rowChanges'][number], actionIdx: number) {
  return {
    op: change.old === undefined ? 'INS' : change.value === undefined ? 'REM' : 'UPD',
    action_idx: actionIdx,
    ...(change.old ? { opayer: change.old.payer } : {}),
    ...(change.value ? { npayer: change.payer } : {}),
    path: `${change.code}/${change.scope}/${change.table}/${bigIntToName(change.primaryKey)}`,
    ...(change.old?.value ? { old: toHex(change.old.value) } : {}),
    ...(change.value ? { new: toHex(change.value) } : {}),
  }
}

/** The `action_trace` messages of one block's payload, in execution order. */
async function blockMessages(
  payload: StepPayload,
  filter: ActionFilter,
  decoders: DecoderSource,
  step: StepType | undefined,
): Promise<unknown[]> {
  const executed = new Set(payload.transactions.filter((t) => t.blockIndex >= 0 && t.status === 0).map((t) => t.id))
  const byTrx = new Map<string, ActionRecord[]>()
  for (const a of payload.actions)
    if (executed.has(a.trxId)) (byTrx.get(a.trxId) ?? byTrx.set(a.trxId, []).get(a.trxId)!).push(a)
  const matches = (a: ActionRecord) =>
    filter.receivers.has(a.receiver) && filter.accounts.has(a.account) && (!filter.names || filter.names.has(a.name))
  const wanted = [...byTrx.entries()].filter(([, actions]) => actions.some(matches))
  if (wanted.length === 0) return []
  const decode = await decoders(
    payload.block.num,
    new Set(wanted.flatMap(([, actions]) => actions.map((a) => a.account))),
  )
  const messages: unknown[] = []
  for (const [trxId, actions] of wanted) {
    const tree = actionTree(
      actions.map((executedAction) => ({ executed: executedAction })),
      trxId,
      payload.block,
      decode,
    )
    const nodes = new Map<number, (typeof tree.traces)[number]>()
    const walk = (traces: readonly (typeof tree.traces)[number][]) =>
      traces.forEach((t) => (nodes.set(t.action_ordinal, t), walk(t.inline_traces)))
    walk(tree.traces)
    const attributed = filter.dbops
      ? attributeRowChanges(actions, payload.rowChanges, receiversOfOthers(payload.actions, trxId))
      : []
    actions.forEach((a, idx) => {
      if (!matches(a)) return
      const node = nodes.get(a.actionOrdinal)!
      const dbops = attributed.filter((x) => x.actionIdx === idx).map((x) => v0Dbop(x.change, idx))
      messages.push({
        block_num: payload.block.num,
        block_id: payload.block.id,
        block_time: formatRfc3339(payload.block.timestampMs),
        trx_id: trxId,
        idx,
        ...(step ? { step } : {}),
        trace: filter.inlineTraces ? node : { ...node, inline_traces: [] },
        ...(dbops.length ? { dbops } : {}),
      })
    })
  }
  return messages
}

/** What a filter's messages depend on besides the payload and the step: the key of its shape. */
const filterKey = (f: ActionFilter) =>
  JSON.stringify([[...f.accounts].sort(), [...f.receivers].sort(), f.names ? [...f.names].sort() : null]) +
  `${+f.inlineTraces}${+f.dbops}`

/** Resolves `start_block`: 0 = head, negative = relative to head, positive = that block (above head waits). */
async function resolveStart(store: FeedStore, startBlock: number): Promise<number> {
  const position = await store.position()
  if (!position) throw AppNotReadyError()
  const head = position.head.blockNum
  const resolved = startBlock === 0 ? head : startBlock < 0 ? Math.max(1, head + startBlock) : startBlock
  if (resolved <= head && !(await store.blockByNum(resolved)))
    throw BlockNumNotCoveredError({ requested: resolved, first: (await firstStoredBlock(store, head)) ?? head, head })
  return resolved
}

/**
 * `get_action_traces`: matching actions of executed transactions from `start_block` on,
 * replayed from the store and then live with no gap and no duplicate. By default every applied
 * block is sent as it comes (dfuse: no undo signalling); `irreversible_only` sends blocks as they
 * become irreversible; `with_fork_steps` adds `step` and withdraws forked-out actions by `undo`.
 */
export function actionTracesHandler(deps: {
  store: FeedStore
  feed: StepFeed
  decoders: DecoderSource
}): StreamHandler {
  // One block's messages, serialized, per subscription shape and step: built once, sent to every subscriber of it.
  const shared = createPayloadMemo<string[]>()
  return async (request, out) => {
    const filter = parseFilter(request)
    const shape = filterKey(filter)
    const fromBlock = await resolveStart(deps.store, request.startBlock)
    out.send('listening', { next_block: fromBlock })
    const progress = progressReporter(request.withProgress, out)
    const emit = async (items: readonly FeedItem[]) => {
      for (const { step, payload } of items) {
        if (out.closed) return
        const sends = request.irreversibleOnly
          ? step.type === 'irreversible'
          : step.type === 'new' || step.type === 'redo' || (filter.forkSteps && step.type === 'undo')
        if (!sends) continue
        if (payload) {
          const stepName = filter.forkSteps ? (step.type === 'irreversible' ? 'new' : step.type) : undefined
          const undo = step.type === 'undo'
          const messages = await shared(payload, `${shape}|${stepName ?? ''}|${+undo}`, async () => {
            const built = (await blockMessages(payload, filter, deps.decoders, stepName)).map((m) => JSON.stringify(m))
            return undo ? built.reverse() : built
          })
          if (out.closed) return
          for (const m of messages) out.sendRaw('action_trace', m)
        }
        if (step.type !== 'undo') progress(step.blockNum, step.blockId)
      }
      await out.drain()
    }
    return followFrom(
      { store: deps.store, feed: deps.feed, fromBlock, mode: request.irreversibleOnly ? 'irreversible' : 'apply' },
      emit,
      out.error,
    )
  }
}
