import { formatNodeosTime } from '../antelope/index.ts'
import { createBlockDecoderSource, type BlockDecoderSource } from '../lifecycle/index.ts'
import type { Store } from '../store/index.ts'
import { AccountHistoryIndex, type AccountHistoryOptions } from './v1-account-history.ts'
import { nodeosActionWindow, V1_DEFAULT_OFFSET, V1_DEFAULT_POS } from './v1-action-window.ts'
import { nodeosActionTrace, type NodeosActionTrace } from './v1-action-trace.ts'

/**
 * Entries one `/v1/history/get_actions` answers at most (Hyperion's `limits.get_actions`): a wider window answers its
 * first entries and `time_limit_exceeded_error: true`, as nodeos does when its time limit cuts the loop.
 */
export const V1_MAX_ACTIONS = 1000

export interface V1GetActionsRequest {
  readonly account_name: string
  readonly pos?: number
  readonly offset?: number
}

export interface V1OrderedAction {
  readonly global_action_seq: number
  readonly account_action_seq: number
  readonly block_num: number
  readonly block_time: string
  readonly action_trace: NodeosActionTrace
}

/** nodeos's `get_actions_result`, with `head_block_num` (which wharfkit's typed client requires). */
export interface V1GetActionsResponse {
  readonly actions: V1OrderedAction[]
  readonly last_irreversible_block: number
  readonly head_block_num: number
  readonly time_limit_exceeded_error?: boolean
}

export type V1GetActionsStore = Pick<
  Store,
  'searchActions' | 'position' | 'firstSeqFromBlock' | 'actionsBySeq' | 'blocksByNums' | 'abisAt'
>

/** `/v1/history/get_actions` with nodeos's semantics over the store (v1-account-history.ts, v1-action-window.ts). */
export class V1GetActions {
  private readonly index: AccountHistoryIndex
  private readonly decoders: BlockDecoderSource

  constructor(
    private readonly store: V1GetActionsStore,
    options: AccountHistoryOptions = {},
  ) {
    this.index = new AccountHistoryIndex(store, options)
    this.decoders = createBlockDecoderSource(store)
  }

  async answer(request: V1GetActionsRequest): Promise<V1GetActionsResponse> {
    const position = await this.store.position()
    const history = await this.index.open(request.account_name)
    const window = nodeosActionWindow({
      pos: request.pos ?? V1_DEFAULT_POS,
      offset: request.offset ?? V1_DEFAULT_OFFSET,
      count: history.count,
      max: V1_MAX_ACTIONS,
    })
    const entries = await history.entries(window.first, window.last)
    // A fork between the count and this read gives the forked-out sequences to other actions: only the account's own
    // are answered (actionsBySeq answers only actions of the chain as it now is).
    const account = request.account_name
    const records = (await this.store.actionsBySeq(entries.map((e) => e.globalSequence))).filter(
      (r) => r.receiver === account || r.authorization.some((l) => l.actor === account),
    )
    const bySeq = new Map(records.map((r) => [r.globalSequence, r]))
    const blocks = await this.store.blocksByNums([...new Set(records.map((r) => r.blockNum))])
    const accountsByBlock = new Map<number, Set<string>>()
    for (const r of records) {
      const set = accountsByBlock.get(r.blockNum) ?? new Set<string>()
      set.add(r.account)
      accountsByBlock.set(r.blockNum, set)
    }
    const decoders = await this.decoders(accountsByBlock)
    const actions: V1OrderedAction[] = []
    for (const entry of entries) {
      const record = bySeq.get(entry.globalSequence)
      const block = record && blocks.get(record.blockNum)
      if (!record || !block) continue
      const decode = decoders.get(block.num) ?? (() => undefined)
      actions.push({
        global_action_seq: record.globalSequence,
        account_action_seq: entry.accountActionSeq,
        block_num: block.num,
        block_time: formatNodeosTime(block.timestampMs),
        action_trace: nodeosActionTrace(record, block, decode),
      })
    }
    return {
      actions,
      last_irreversible_block: position?.lib ?? 0,
      head_block_num: position?.head.blockNum ?? 0,
      ...(window.truncated ? { time_limit_exceeded_error: true } : {}),
    }
  }
}
