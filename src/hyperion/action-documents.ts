import { signatureText, toHex } from '../antelope/index.ts'
import type { ActionDataDecoder, BlockDecoderSource } from '../lifecycle/index.ts'
import type { ActionRecord, BlockRecord, Store, TransactionHistory, TransactionRecord } from '../store/index.ts'
import { hyperionActionData } from './action-data.ts'
import { hyperionTime } from './time.ts'

/**
 * Hyperion's action documents. Antler stores one ActionRecord per action *trace* (one per receiver); Hyperion answers
 * one document per *action*, every receiver of it in `receipts[]` (notifications folded). How the fold works, and why
 * two identical actions of one transaction stay two documents (Hyperion issue 148), is told at `foldNotifications`.
 */

/** A uint64 as a route renders it: get_actions answers numbers, get_transaction strings (Hyperion's raw SHiP JSON). */
export type Uint64 = number | string

/** One receiver of an action. */
export interface HyperionReceipt {
  receiver: string
  global_sequence: Uint64
  recv_sequence: Uint64
  auth_sequence: { account: string; sequence: Uint64 }[]
}

/** One Hyperion action document (docs/HYPERION.md, get_actions). */
export interface HyperionActionDocument {
  '@timestamp': string
  timestamp: string
  block_num: number
  block_id: string
  trx_id: string
  act: {
    account: string
    name: string
    authorization: { actor: string; permission: string }[]
    data: unknown
    hex_data?: string
  }
  receipts: HyperionReceipt[]
  /** The transaction's, on its first document only. */
  cpu_usage_us?: number
  net_usage_words?: number
  /** The transaction's signatures, on its first document only; omitted when the store has none. */
  signatures?: string[]
  /** Omitted when empty. */
  account_ram_deltas?: { account: string; delta: Uint64 }[]
  global_sequence: Uint64
  producer: string
  action_ordinal: number
  creator_action_ordinal: number
  /** The full form (get_transaction) only: what Hyperion keeps of the stored document there. */
  act_digest?: string
  notified?: string
  code_sequence?: number
  abi_sequence?: number
  elapsed?: Uint64
  context_free?: boolean
}

export interface ActionDocumentContext {
  /** The block of the execution: producer, id, time. */
  readonly block: BlockRecord
  /** The transaction's trace record: cpu, net and signatures (on the first document); undefined when not stored. */
  readonly transaction: TransactionRecord | undefined
  /** Decodes data with the ABIs in force at the block (lifecycle/decoder.ts makes them). */
  readonly decode: ActionDataDecoder
}

export interface ActionDocumentOptions {
  /** How uint64s are written: numbers (get_actions, the default) or strings (get_transaction). */
  readonly uint64?: 'number' | 'string'
  /** `noBinary=true`: long strings of `act.data` cut, and no `hex_data`. */
  readonly noBinary?: boolean
  /** get_transaction's form: `act_digest`, `notified`, `code_sequence`, `abi_sequence`, `elapsed`, `context_free`. */
  readonly full?: boolean
}

/**
 * The traces of one execution grouped per action: each group is an original trace (receiver = the action's account)
 * followed by its notifications, in global-sequence order.
 *
 * In nodeos a notification trace copies the original's act (so the same act digest), gets its own action ordinal
 * and, as creator action ordinal, the original's action ordinal; nodeos never notifies the action's own account. So a
 * trace whose receiver is the action's account opens a group, and any other trace joins the group whose original has
 * its creator ordinal as action ordinal and the same digest (an inline action created by an action has another
 * digest; without such a group, as in a store missing the original, the trace stands alone). Ordinals are unique in a
 * transaction, so two identical actions (same digest) stay two groups, each with its own notifications: the fold
 * Hyperion got wrong by grouping on the digest (its issue 148).
 */
export function foldNotifications(execution: readonly ActionRecord[]): ActionRecord[][] {
  const groups: ActionRecord[][] = []
  const byOrdinal = new Map<number, ActionRecord[]>()
  for (const trace of execution) {
    const open = trace.receiver === trace.account ? undefined : byOrdinal.get(trace.creatorActionOrdinal)
    if (open && open[0].actDigest === trace.actDigest) {
      open.push(trace)
      continue
    }
    const group = [trace]
    groups.push(group)
    if (trace.receiver === trace.account) byOrdinal.set(trace.actionOrdinal, group)
  }
  return groups
}

function uint64Of(style: 'number' | 'string'): (value: bigint | number | string) => Uint64 {
  return style === 'string' ? (v) => String(v) : (v) => Number(v)
}

/** RAM deltas of an action's traces summed per account (notification handlers use RAM too); zero sums dropped. */
function ramDeltas(group: readonly ActionRecord[]): { account: string; delta: bigint }[] {
  const sums = new Map<string, bigint>()
  for (const trace of group) for (const d of trace.ramDeltas) sums.set(d.account, (sums.get(d.account) ?? 0n) + d.delta)
  return [...sums].filter(([, delta]) => delta !== 0n).map(([account, delta]) => ({ account, delta }))
}

/** The signatures of a transaction record as `SIG_…` strings (as stored when they cannot be rendered). */
export function transactionSignatures(transaction: TransactionRecord | undefined): string[] {
  return transaction?.details?.header?.signatures.map((s) => signatureText(s) ?? s) ?? []
}

/**
 * The documents of one transaction execution (its actions in global-sequence order): one per action, notifications
 * folded into `receipts[]`; `cpu_usage_us`, `net_usage_words` and `signatures` on the first document only.
 */
export function actionDocuments(
  execution: readonly ActionRecord[],
  context: ActionDocumentContext,
  options: ActionDocumentOptions = {},
): HyperionActionDocument[] {
  const u64 = uint64Of(options.uint64 ?? 'number')
  const time = hyperionTime(context.block.timestampMs)
  const signatures = transactionSignatures(context.transaction)
  return foldNotifications(execution).map((group, index) => {
    const original = group[0]
    const hex = toHex(original.data)
    const data = hyperionActionData({
      account: original.account,
      name: original.name,
      decoded: context.decode(original.account, original.name, original.data),
      hex,
      noBinary: options.noBinary,
    })
    const first = index === 0 && context.transaction ? context.transaction : undefined
    const deltas = ramDeltas(group)
    const doc: HyperionActionDocument = {
      '@timestamp': time,
      timestamp: time,
      block_num: original.blockNum,
      block_id: context.block.id,
      trx_id: original.trxId,
      act: {
        account: original.account,
        name: original.name,
        authorization: original.authorization.map((l) => ({ actor: l.actor, permission: l.permission })),
        data,
        ...(options.noBinary ? {} : { hex_data: hex }),
      },
      receipts: group.map((trace) => ({
        receiver: trace.receiver,
        global_sequence: u64(trace.globalSequence),
        recv_sequence: u64(trace.recvSequence),
        auth_sequence: (trace.trace?.authSequence ?? []).map(([account, sequence]) => ({
          account,
          sequence: u64(sequence),
        })),
      })),
      ...(first && { cpu_usage_us: first.cpuUsageUs, net_usage_words: first.netUsageWords }),
      ...(first && signatures.length > 0 && { signatures }),
      ...(deltas.length > 0 && {
        account_ram_deltas: deltas.map((d) => ({ account: d.account, delta: u64(d.delta) })),
      }),
      global_sequence: u64(original.globalSequence),
      producer: context.block.producer,
      action_ordinal: original.actionOrdinal,
      creator_action_ordinal: original.creatorActionOrdinal,
      ...(options.full && {
        act_digest: original.actDigest,
        notified: group.map((t) => t.receiver).join(','),
        code_sequence: original.trace?.codeSequence ?? 0,
        abi_sequence: original.trace?.abiSequence ?? 0,
        elapsed: u64(original.trace?.elapsedUs ?? 0),
        context_free: original.trace?.contextFree ?? false,
      }),
    }
    return doc
  })
}

/**
 * One execution whose documents a page needs: its transaction, block and every action in execution order, and the
 * transaction's record when it was read with them (the store's executions carry it).
 */
export interface ExecutionRef {
  readonly trxId: string
  readonly blockNum: number
  readonly actions: readonly ActionRecord[]
  readonly transaction?: TransactionRecord
}

/** What loading the contexts of a page reads. */
export type DocumentContextStore = Pick<Store, 'blocksByNums' | 'transactionHistories'>

/**
 * The contexts of a page's executions in a fixed number of batch reads (blocks, transaction records, ABIs), aligned
 * with `executions`; an entry is undefined when its block is no longer stored (a fork removed it meanwhile).
 */
export async function loadDocumentContexts(
  store: DocumentContextStore,
  decoders: BlockDecoderSource,
  executions: readonly ExecutionRef[],
): Promise<(ActionDocumentContext | undefined)[]> {
  if (executions.length === 0) return []
  const accounts = new Map<number, Set<string>>()
  for (const e of executions) {
    let set = accounts.get(e.blockNum)
    if (!set) accounts.set(e.blockNum, (set = new Set()))
    for (const a of e.actions) set.add(a.account)
  }
  // Records not read with their executions are read here, in one batch.
  const unread = [...new Set(executions.filter((e) => !e.transaction).map((e) => e.trxId))]
  const [blocks, histories, decoderOf] = await Promise.all([
    store.blocksByNums([...accounts.keys()]),
    unread.length > 0 ? store.transactionHistories(unread) : new Map<string, TransactionHistory>(),
    decoders(accounts),
  ])
  return executions.map((e) => {
    const block = blocks.get(e.blockNum)
    const decode = decoderOf.get(e.blockNum)
    if (!block || !decode) return undefined
    // The record of this execution: the trace in its block (a cancelation's record has a negative index).
    const transaction =
      e.transaction ?? histories.get(e.trxId)?.records.find((r) => r.blockNum === e.blockNum && r.blockIndex >= 0)
    return { block, transaction, decode }
  })
}
