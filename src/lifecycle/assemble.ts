import {
  bigIntToName,
  formatNodeosTime,
  formatNodeosTimeSec,
  fromHex,
  signatureText,
  toHex,
  unpackTransaction,
} from '../antelope/index.ts'
import {
  TRANSACTION_CANCELED,
  type ActionRecord,
  type BlockRecord,
  type RowChange,
  type TransactionHistory,
  type TransactionRecord,
} from '../store/index.ts'
import { actionTree, wireAction, type ActionDataDecoder, type TracedAction } from './action-traces.ts'
import { attributeRowChanges } from './row-attribution.ts'
import type {
  TransactionLifecycle,
  TransactionStatus,
  WireBlockHeader,
  WireDbOp,
  WireDTrxOp,
  WireExtDTrxOp,
  WireSignedTransaction,
  WireTransactionTrace,
} from './types.ts'

/** SHiP's transaction statuses, by number. */
const STATUS_NAMES = ['executed', 'soft_fail', 'hard_fail', 'delayed', 'expired'] as const
const STATUS_DELAYED = 3
const STATUS_EXPIRED = 4

/** A record and the block holding it. */
export interface RecordInBlock {
  readonly record: TransactionRecord
  readonly block: BlockRecord
}

/** Everything one lifecycle is assembled from, read by the service. */
export interface LifecycleFacts {
  readonly id: string
  readonly history: TransactionHistory
  readonly lib: number
  /** The trace that ran it (executed, soft_fail or hard_fail), with its executed actions in execution order. */
  readonly execution:
    | (RecordInBlock & {
        readonly actions: readonly ActionRecord[]
        readonly rowChanges: readonly RowChange[]
        readonly otherReceivers: ReadonlySet<string>
      })
    | undefined
  /** The record of the block that created it as a deferred transaction. */
  readonly creation: RecordInBlock | undefined
  /** Its cancelation, with the canceling transaction when found. */
  readonly cancelation:
    (RecordInBlock & { readonly byTrxId: string | undefined; readonly byActionIdx: number }) | undefined
  readonly decode: ActionDataDecoder
}

/** The records that say what became of the transaction, the latest of each kind. */
export function keyRecords(history: TransactionHistory): {
  execution?: TransactionRecord
  creation?: TransactionRecord
  cancelation?: TransactionRecord
  expiration?: TransactionRecord
} {
  const latest = (match: (r: TransactionRecord) => boolean) => history.records.filter(match).at(-1)
  return {
    execution: latest((r) => r.blockIndex >= 0 && r.status <= 2),
    creation:
      history.records.find((r) => r.details?.deferred !== undefined) ??
      history.records.find((r) => r.status === STATUS_DELAYED),
    cancelation: latest((r) => r.status === TRANSACTION_CANCELED),
    expiration: latest((r) => r.status === STATUS_EXPIRED),
  }
}

function status(history: TransactionHistory): TransactionStatus | undefined {
  const k = keyRecords(history)
  if (k.execution) return STATUS_NAMES[k.execution.status]
  if (k.cancelation) return 'canceled'
  if (k.expiration) return 'expired'
  if (k.creation) return 'delayed'
  return history.forkedOut.length ? 'forked_out' : undefined
}

function blockHeader(block: BlockRecord): WireBlockHeader {
  const h = block.header
  return {
    timestamp: formatNodeosTime(block.timestampMs),
    producer: block.producer,
    confirmed: h?.confirmed ?? 0,
    previous: block.previous,
    transaction_mroot: h?.transactionMroot ?? '',
    action_mroot: h?.actionMroot ?? '',
    schedule_version: h?.scheduleVersion ?? 0,
    new_producers: h?.newProducers
      ? {
          version: h.newProducers.version,
          producers: h.newProducers.producers.map((p) => ({
            producer_name: p.producerName,
            block_signing_key: p.blockSigningKey,
          })),
        }
      : null,
    header_extensions: (h?.headerExtensions ?? []).map((e) => [e.type, e.data]),
  }
}

/**
 * The signed transaction: from the deferred creation's packed body when there is one, else from the executing trace's
 * header and input actions.
 */
function signedTransaction(
  facts: LifecycleFacts,
  executionOrder: readonly TracedAction[],
): WireSignedTransaction | null {
  const created = facts.creation?.record.details
  const signatures =
    (created?.header ?? facts.execution?.record.details?.header)?.signatures.map((s) => signatureText(s) ?? s) ?? []
  const packed = created?.deferred && unpackTransaction(created.deferred.packedTrx)
  if (packed) {
    const actions = (list: typeof packed.actions) =>
      list.map((a) => wireAction({ ...a, data: fromHex(a.data) }, facts.decode))
    return {
      ...packed,
      context_free_actions: actions(packed.context_free_actions),
      actions: actions(packed.actions),
      transaction_extensions: packed.transaction_extensions.map((x) => [x.type, x.data]),
      signatures,
      context_free_data: created.header?.contextFreeData ?? [],
    }
  }
  const header = facts.execution?.record.details?.header
  if (!header) return null
  const inputs = executionOrder.filter(
    (a) => ('executed' in a ? a.executed.creatorActionOrdinal : a.unreceipted.creatorActionOrdinal) === 0,
  )
  const rendered = inputs.map((a) => {
    const x =
      'executed' in a
        ? { ...a.executed, contextFree: a.executed.trace?.contextFree ?? false }
        : { ...a.unreceipted, data: fromHex(a.unreceipted.data), contextFree: a.unreceipted.trace.contextFree }
    return { contextFree: x.contextFree, action: wireAction(x, facts.decode) }
  })
  return {
    expiration: formatNodeosTimeSec(header.expiration),
    ref_block_num: header.refBlockNum,
    ref_block_prefix: header.refBlockPrefix,
    max_net_usage_words: header.maxNetUsageWords,
    max_cpu_usage_ms: header.maxCpuUsageMs,
    delay_sec: header.delaySec,
    context_free_actions: rendered.filter((a) => a.contextFree).map((a) => a.action),
    actions: rendered.filter((a) => !a.contextFree).map((a) => a.action),
    transaction_extensions: header.transactionExtensions.map((e) => [e.type, e.data]),
    signatures,
    context_free_data: header.contextFreeData,
  }
}

function executionTrace(
  facts: LifecycleFacts,
  traces: WireTransactionTrace['action_traces'],
): WireTransactionTrace | null {
  const e = facts.execution
  if (!e) return null
  const d = e.record.details
  return {
    id: facts.id,
    block_num: e.block.num,
    block_time: formatNodeosTime(e.block.timestampMs),
    producer_block_id: e.block.id,
    receipt: {
      status: STATUS_NAMES[e.record.status],
      cpu_usage_us: e.record.cpuUsageUs,
      net_usage_words: e.record.netUsageWords,
    },
    elapsed: d?.elapsedUs ?? 0,
    // Records stored before schema version 5 lack the trace's net_usage: net_usage_words × 8 is what nodeos bills.
    net_usage: d?.netUsage ?? e.record.netUsageWords * 8,
    scheduled: e.record.scheduled,
    action_traces: traces,
    failed_dtrx_trace: d?.failedDtrx
      ? {
          id: d.failedDtrx.id,
          receipt: { status: STATUS_NAMES[d.failedDtrx.status] ?? String(d.failedDtrx.status) },
          except: d.failedDtrx.except ?? null,
        }
      : null,
    except: d?.except ?? null,
  }
}

/** Row changes of the execution block attributable to this transaction (row-attribution.ts). */
function dbops(facts: LifecycleFacts): WireDbOp[] {
  const e = facts.execution
  if (!e) return []
  const side = (payer: string | undefined, value: Uint8Array | undefined) =>
    payer === undefined || value === undefined ? {} : { payer, hex: toHex(value) }
  return attributeRowChanges(e.actions, e.rowChanges, e.otherReceivers).map(({ change: c, actionIdx }) => ({
    op: c.old === undefined ? 'INS' : c.value === undefined ? 'REM' : 'UPD',
    action_idx: actionIdx,
    account: c.code,
    table: c.table,
    scope: c.scope,
    key: bigIntToName(c.primaryKey),
    old: side(c.old?.payer, c.old?.value),
    new: side(c.payer, c.value),
  }))
}

function creationOp(facts: LifecycleFacts): { op: WireDTrxOp; ext: WireExtDTrxOp } | undefined {
  const c = facts.creation
  if (!c) return undefined
  const deferred = c.record.details?.deferred
  const trx = deferred && unpackTransaction(deferred.packedTrx)
  // Without the generated_transaction row (a push created and canceled in one block leaves none), the delayed trace
  // itself says what it can.
  const delaySec = trx?.delay_sec ?? c.record.details?.header?.delaySec ?? 0
  const publishedMs = c.block.timestampMs
  const expiration =
    trx?.expiration ?? (c.record.details?.header ? formatNodeosTimeSec(c.record.details.header.expiration) : '')
  const op: WireDTrxOp = {
    op: deferred && deferred.sender !== '' ? 'CREATE' : 'PUSH_CREATE',
    // A delayed push is its own creator (index 0); for a contract's deferred transaction `src_trx_id` names the
    // creating transaction.
    action_idx: 0,
    sender: deferred?.sender ?? '',
    sender_id: deferred?.senderId ?? '0',
    payer: deferred?.payer ?? '',
    published_at: formatNodeosTime(publishedMs),
    delay_until: formatNodeosTime(publishedMs + delaySec * 1000),
    expiration_at: expiration,
    trx_id: facts.id,
  }
  const source = deferred ? (deferred.createdBy?.trxId ?? '') : facts.id
  return {
    op,
    ext: {
      ...op,
      src_trx_id: source,
      block_num: c.block.num,
      block_id: c.block.id,
      block_time: formatNodeosTime(c.block.timestampMs),
    },
  }
}

function cancelationOp(facts: LifecycleFacts, created: WireDTrxOp | undefined): WireExtDTrxOp | null {
  const c = facts.cancelation
  if (!c) return null
  const base = created ?? {
    sender: '',
    sender_id: '0',
    payer: '',
    published_at: '',
    delay_until: '',
    expiration_at: '',
    trx_id: facts.id,
  }
  return {
    ...base,
    op: 'CANCEL',
    action_idx: c.byActionIdx,
    trx_id: facts.id,
    src_trx_id: c.byTrxId ?? '',
    block_num: c.block.num,
    block_id: c.block.id,
    block_time: formatNodeosTime(c.block.timestampMs),
  }
}

/** The lifecycle from its facts; undefined when the store never saw the id. */
export function assembleLifecycle(facts: LifecycleFacts): TransactionLifecycle | undefined {
  const transactionStatus = status(facts.history)
  if (!transactionStatus) return undefined
  const e = facts.execution
  const executionOrder: TracedAction[] = e
    ? [
        ...e.actions.map((executed) => ({ executed })),
        ...(e.record.details?.unreceipted ?? []).map((unreceipted) => ({ unreceipted })),
      ]
    : []
  const tree = e ? actionTree(executionOrder, facts.id, e.block, facts.decode) : { traces: [], creationTree: [] }
  const creation = creationOp(facts)
  const ownCreation = creation && creation.ext.src_trx_id === facts.id ? [creation.op] : []
  return {
    transaction_status: transactionStatus,
    id: facts.id,
    transaction: signedTransaction(facts, executionOrder),
    execution_trace: executionTrace(facts, tree.traces),
    execution_block_header: e ? blockHeader(e.block) : null,
    creation_tree: tree.creationTree,
    dtrxops: ownCreation,
    dbops: dbops(facts),
    // SHiP reports RAM per action as deltas without their cause: they are in each action trace's `account_ram_deltas`.
    ramops: [],
    tableops: [],
    pub_keys: [],
    created_by: creation?.ext ?? null,
    canceled_by: cancelationOp(facts, creation?.op),
    execution_irreversible: e !== undefined && e.block.num <= facts.lib,
    creation_irreversible: facts.creation !== undefined && facts.creation.block.num <= facts.lib,
    cancelation_irreversible: facts.cancelation !== undefined && facts.cancelation.block.num <= facts.lib,
    dtrx_creation_irreversible: facts.creation !== undefined && facts.creation.block.num <= facts.lib,
    dtrx_cancelation_irreversible: facts.cancelation !== undefined && facts.cancelation.block.num <= facts.lib,
  }
}
