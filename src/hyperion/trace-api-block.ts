import { formatNodeosTime, formatNodeosTimeSec, signatureText, toHex } from '../antelope/index.ts'
import { createDecoderSource, type DecoderSource } from '../lifecycle/index.ts'
import type { ActionRecord, BlockRecord, Store, TransactionRecord } from '../store/index.ts'
import { HyperionNotFoundError } from './errors.ts'

/**
 * `POST /v1/trace_api/get_block`: a block with its transactions and their executed actions, one entry per action
 * receipt (notifications included), as nodeos's trace_api_plugin answers it. Hyperion answers a subset (no
 * `global_sequence`, `return_value`, `cpu_usage_us`, `net_usage_words`, `signatures`, `transaction_header`); these are
 * nodeos's and harmless to Hyperion's readers. `data` is the decoded action data (Hyperion's), the hex when it cannot
 * be decoded; `hex_data` always holds the hex (nodeos's `data`).
 */

export interface TraceApiBlockRequest {
  /** Negative: the head block. */
  readonly block_num?: number
  readonly block_id?: string
}

export interface TraceApiAction {
  readonly global_sequence: number
  readonly receiver: string
  readonly account: string
  readonly action: string
  readonly authorization: readonly { readonly account: string; readonly permission: string }[]
  readonly data: unknown
  readonly hex_data: string
  readonly return_value: string
}

export interface TraceApiTransaction {
  readonly id: string
  readonly block_num: number
  readonly block_time: string
  readonly producer_block_id: string
  readonly status: string
  readonly cpu_usage_us: number
  readonly net_usage_words: number
  readonly signatures: readonly string[]
  readonly transaction_header?: {
    readonly expiration: string
    readonly ref_block_num: number
    readonly ref_block_prefix: number
    readonly max_net_usage_words: number
    readonly max_cpu_usage_ms: number
    readonly delay_sec: number
  }
  readonly actions: TraceApiAction[]
}

export interface TraceApiBlock {
  readonly id: string
  readonly number: number
  readonly previous_id: string
  readonly status: 'irreversible' | 'pending'
  readonly timestamp: string
  readonly producer: string
  readonly transaction_mroot?: string
  readonly action_mroot?: string
  readonly schedule_version?: number
  readonly transactions: TraceApiTransaction[]
}

export type TraceApiStore = Pick<
  Store,
  | 'snapshot'
  | 'firstSeqFromBlock'
  | 'actionsBySeq'
  | 'transactionHistories'
  | 'blockByNum'
  | 'abi'
  | 'stepsOfBlock'
  | 'stepPayloads'
>

const STATUS_NAMES = ['executed', 'soft_fail', 'hard_fail', 'delayed', 'expired']

/** Attempts when the block is forked out while its actions are read: then the answer is read again. */
const READ_ATTEMPTS = 3

export class TraceApiBlocks {
  private readonly decoders: DecoderSource

  constructor(private readonly store: TraceApiStore) {
    this.decoders = createDecoderSource(store)
  }

  /** The block asked for; throws HyperionNotFoundError('block not found!') when the store does not hold it. */
  async answer(request: TraceApiBlockRequest): Promise<TraceApiBlock> {
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const found = await this.store.snapshot(async (r) => {
        const position = await r.position()
        if (!position) return undefined
        const block =
          request.block_id !== undefined
            ? await r.blockById(request.block_id.toLowerCase())
            : await r.blockByNum(
                request.block_num === undefined || request.block_num < 0 ? position.head.blockNum : request.block_num,
              )
        return block && { block, lib: position.lib }
      })
      if (!found) throw HyperionNotFoundError('block not found!')
      const answer = await this.assemble(found.block, found.lib)
      // The block's actions are read outside the snapshot: answered only if it is still the block at its height.
      if ((await this.store.blockByNum(found.block.num))?.id === found.block.id) return answer
    }
    throw HyperionNotFoundError('block not found!')
  }

  private async assemble(block: BlockRecord, lib: number): Promise<TraceApiBlock> {
    const { actions, records } = await this.contentOf(block)
    const decode = await this.decoders(block.num, new Set(actions.map((a) => a.account)))
    const blockTime = formatNodeosTime(block.timestampMs)
    const byTrx = new Map<string, ActionRecord[]>()
    for (const a of actions) {
      const list = byTrx.get(a.trxId)
      if (list) list.push(a)
      else byTrx.set(a.trxId, [a])
    }
    // Every trace of the block (a failed one without executed actions too), then any transaction with actions but no
    // record read (a store whose records predate its block content).
    const ids = [...new Set([...records.keys(), ...byTrx.keys()])]
    const transactions: (TraceApiTransaction & { position: number })[] = []
    for (const id of ids) {
      const list = byTrx.get(id) ?? []
      const record = records.get(id)
      const header = record?.details?.header
      transactions.push({
        position: record?.blockIndex ?? Number.MAX_SAFE_INTEGER,
        id,
        block_num: block.num,
        block_time: blockTime,
        producer_block_id: block.id,
        status: record ? (STATUS_NAMES[record.status] ?? String(record.status)) : 'executed',
        cpu_usage_us: record?.cpuUsageUs ?? 0,
        net_usage_words: record?.netUsageWords ?? 0,
        signatures: header?.signatures.map((s) => signatureText(s) ?? s) ?? [],
        ...(header
          ? {
              transaction_header: {
                expiration: formatNodeosTimeSec(header.expiration),
                ref_block_num: header.refBlockNum,
                ref_block_prefix: header.refBlockPrefix,
                max_net_usage_words: header.maxNetUsageWords,
                max_cpu_usage_ms: header.maxCpuUsageMs,
                delay_sec: header.delaySec,
              },
            }
          : {}),
        actions: list.map((a) => {
          const hex = toHex(a.data)
          const data = decode(a.account, a.name, a.data)
          return {
            global_sequence: a.globalSequence,
            receiver: a.receiver,
            account: a.account,
            action: a.name,
            authorization: a.authorization.map((l) => ({ account: l.actor, permission: l.permission })),
            data: data === undefined ? hex : data,
            hex_data: hex,
            return_value: toHex(a.returnValue),
          }
        }),
      })
    }
    transactions.sort((a, b) => a.position - b.position)
    return {
      id: block.id,
      number: block.num,
      previous_id: block.previous,
      status: block.num <= lib ? 'irreversible' : 'pending',
      timestamp: blockTime,
      producer: block.producer,
      ...(block.header
        ? {
            transaction_mroot: block.header.transactionMroot,
            action_mroot: block.header.actionMroot,
            schedule_version: block.header.scheduleVersion,
          }
        : {}),
      transactions: transactions.map(({ position: _position, ...t }) => t),
    }
  }

  /**
   * The block's executed actions (execution order) and its transaction records with a trace (by id): from the block's
   * content as the step log keeps it (one consistent read), else from its span of global sequences and the histories
   * of its transactions.
   */
  private async contentOf(
    block: BlockRecord,
  ): Promise<{ actions: readonly ActionRecord[]; records: Map<string, TransactionRecord> }> {
    const step = (await this.store.stepsOfBlock(block.id)).find((s) => s.type !== 'undo')
    const [payload] = step ? await this.store.stepPayloads([step]) : []
    if (payload && payload.block.id === block.id) {
      const traced = payload.transactions.filter((t) => t.blockIndex >= 0)
      return { actions: payload.actions, records: new Map(traced.map((t) => [t.id, t])) }
    }
    const actions = await this.actionsOf(block)
    const histories = await this.store.transactionHistories([...new Set(actions.map((a) => a.trxId))])
    const records = new Map<string, TransactionRecord>()
    for (const [id, history] of histories) {
      const record = history.records.find((t) => t.blockNum === block.num && t.blockIndex >= 0)
      if (record) records.set(id, record)
    }
    return { actions, records }
  }

  /** The block's executed actions in execution order: its span of global sequences. */
  private async actionsOf(block: BlockRecord): Promise<ActionRecord[]> {
    if (block.actionCount === 0) return []
    const first = await this.store.firstSeqFromBlock(block.num)
    if (first === undefined) return []
    const seqs = Array.from({ length: block.actionCount }, (_, i) => first + i)
    return (await this.store.actionsBySeq(seqs)).filter((a) => a.blockNum === block.num)
  }
}
