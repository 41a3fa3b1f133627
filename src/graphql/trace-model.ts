import { isValidName, nameToBigInt, renderKey, toHex, type CompiledAbi, type KeyType } from '../antelope/index.ts'
import {
  attributeRowChanges,
  receiversRunByOthers,
  type ActionDataDecoder,
  type ReceiverRunners,
} from '../lifecycle/index.ts'
import type { ActionRecord, BlockRecord, RowChange, TransactionRecord } from '../store/index.ts'

export type TraceDecoder = ActionDataDecoder & { readonly abiOf?: (account: string) => CompiledAbi | undefined }

/** A block's row changes and which receivers other transactions ran (what dbOps attribution needs). */
export interface BlockRows {
  readonly changes: readonly RowChange[]
  /** Receiver → the one transaction that ran it, or null once several did. */
  readonly runners: ReceiverRunners
}

/** Everything one GraphQL TransactionTrace is built from. */
export interface TraceFacts {
  readonly block: BlockRecord
  readonly transaction: TransactionRecord
  /** The executed actions, in execution (global sequence) order. */
  readonly execution: readonly ActionRecord[]
  /** Execution indexes of the actions the search matched (empty outside a search). */
  readonly matching: ReadonlySet<number>
  /** Action data decoder with the ABIs at the block; `abiOf` (row types) for the receivers' ABIs. */
  readonly decode: TraceDecoder
  /** The block's rows, read once when a dbOps field asks. */
  readonly rows: () => Promise<BlockRows>
}

const STATUS = ['EXECUTED', 'SOFT_FAIL', 'HARD_FAIL', 'DELAYED', 'EXPIRED'] as const
export const statusName = (status: number): string => STATUS[status] ?? 'UNKNOWN'

/** The GraphQL `BlockHeader` of a stored block. */
export function blockHeader(block: BlockRecord) {
  const h = block.header
  return {
    id: block.id,
    num: block.num,
    timestamp: block.timestampMs,
    producer: block.producer,
    confirmed: h?.confirmed ?? 0,
    previous: block.previous,
    transactionMRoot: h?.transactionMroot ?? '',
    actionMRoot: h?.actionMroot ?? '',
    scheduleVersion: h?.scheduleVersion ?? 0,
    newProducers: h?.newProducers ?? null,
  }
}

type Encoding = 'NAME' | 'DECIMAL' | 'HEXADECIMAL' | 'SYMBOL' | 'SYMBOL_CODE'

/** dfuse's GraphQL encodings of a uint64 as the REST `key_type` renderings (HEXADECIMAL: big-endian, padded). */
const KEY_TYPE_OF: Record<Encoding, KeyType> = {
  NAME: 'name',
  DECIMAL: 'uint64',
  HEXADECIMAL: 'hex_be',
  SYMBOL: 'symbol',
  SYMBOL_CODE: 'symbol_code',
}

/** A uint64 (scope or primary key) in one of dfuse's encodings. */
const encodeUint64 = (value: bigint, encoding: Encoding = 'NAME'): string => renderKey(value, KEY_TYPE_OF[encoding])

/** A scope is stored as its name text: its uint64 is the name's (0 for text that is not a name). */
function scopeValue(scope: string): bigint {
  return isValidName(scope) ? nameToBigInt(scope) : 0n
}

/** One action of a transaction trace; methods are GraphQL fields with arguments. */
export class ActionTraceNode {
  constructor(
    private readonly trace: TransactionTraceNode,
    private readonly action: ActionRecord,
    readonly executionIndex: number,
  ) {}

  get seq(): number {
    return this.action.globalSequence
  }
  get receipt() {
    const a = this.action
    return {
      receiver: a.receiver,
      digest: a.actDigest,
      globalSequence: a.globalSequence,
      codeSequence: a.trace?.codeSequence ?? 0,
      abiSequence: a.trace?.abiSequence ?? 0,
    }
  }
  get receiver(): string {
    return this.action.receiver
  }
  get account(): string {
    return this.action.account
  }
  get name(): string {
    return this.action.name
  }
  get authorization() {
    return this.action.authorization
  }
  get json(): unknown {
    return this.trace.decode(this.action.account, this.action.name, this.action.data) ?? null
  }
  get data(): unknown {
    return this.json
  }
  get hexData(): string {
    return toHex(this.action.data)
  }
  readonly ramOps: readonly never[] = []
  readonly dtrxOps: readonly never[] = []
  readonly tableOps: readonly never[] = []
  get console(): string {
    return this.action.trace?.console ?? ''
  }
  get contextFree(): boolean {
    return this.action.trace?.contextFree ?? false
  }
  get elapsed(): number {
    return this.action.trace?.elapsedUs ?? 0
  }
  get exceptJSON(): unknown {
    const except = this.action.trace?.except
    return except ? { message: except } : null
  }
  get isNotify(): boolean {
    return this.action.receiver !== this.action.account
  }
  get isMatchingQuery(): boolean {
    return this.trace.matching.has(this.executionIndex)
  }
  get actionOrdinal(): number {
    return this.action.actionOrdinal
  }
  get creatorOrdinal(): number {
    return this.action.creatorActionOrdinal
  }

  async dbOps(args: { code?: string | null; table?: string | null }) {
    const ops = await this.trace.dbOpsOf(this.executionIndex)
    return ops.filter((op) => (!args.code || op.key.code === args.code) && (!args.table || op.key.table === args.table))
  }

  createdActions(args: { sort?: 'EXECUTION' | 'CREATION' }): ActionTraceNode[] {
    const created = this.trace.executedActions.filter((a) => a.creatorOrdinal === this.action.actionOrdinal)
    return args.sort === 'CREATION' ? created.sort((a, b) => a.actionOrdinal - b.actionOrdinal) : created
  }

  get creatorAction(): ActionTraceNode | null {
    return this.trace.byOrdinal(this.action.creatorActionOrdinal) ?? null
  }

  /** The nearest creator up the tree that is not a notification. */
  get closestUnnotifiedAncestorAction(): ActionTraceNode | null {
    let at = this.creatorAction
    while (at && at.isNotify) at = at.creatorAction
    return at
  }
}

/** A transaction trace as GraphQL serves it (`TransactionTrace`). */
export class TransactionTraceNode {
  readonly executedActions: ActionTraceNode[]
  private readonly ordinals = new Map<number, ActionTraceNode>()
  private dbOpsByIndex: Promise<Map<number, ReturnType<typeof dbOp>[]>> | undefined

  constructor(private readonly facts: TraceFacts) {
    this.executedActions = facts.execution.map((a, i) => new ActionTraceNode(this, a, i))
    for (const node of this.executedActions) this.ordinals.set(node.actionOrdinal, node)
  }

  get decode(): TraceDecoder {
    return this.facts.decode
  }
  get matching(): ReadonlySet<number> {
    return this.facts.matching
  }
  get id(): string {
    return this.facts.transaction.id
  }
  get block() {
    return blockHeader(this.facts.block)
  }
  get status(): string {
    return statusName(this.facts.transaction.status)
  }
  get receipt() {
    const t = this.facts.transaction
    return { status: statusName(t.status), cpuUsageMicroSeconds: t.cpuUsageUs, netUsageWords: t.netUsageWords }
  }
  get elapsed(): number {
    return this.facts.transaction.details?.elapsedUs ?? 0
  }
  get netUsage(): number {
    return this.facts.transaction.details?.netUsage ?? this.facts.transaction.netUsageWords * 8
  }
  get scheduled(): boolean {
    return this.facts.transaction.scheduled
  }
  get matchingActions(): ActionTraceNode[] {
    return this.executedActions.filter((a) => this.facts.matching.has(a.executionIndex))
  }
  get topLevelActions(): ActionTraceNode[] {
    return this.executedActions.filter((a) => a.creatorOrdinal === 0)
  }
  get exceptJSON(): unknown {
    const except = this.facts.transaction.details?.except
    return except ? { message: except } : null
  }

  byOrdinal(ordinal: number): ActionTraceNode | undefined {
    return ordinal === 0 ? undefined : this.ordinals.get(ordinal)
  }

  /** The row changes attributed to the action at `index` (docs/API.md: SHiP reports rows per block). */
  async dbOpsOf(index: number): Promise<ReturnType<typeof dbOp>[]> {
    this.dbOpsByIndex ??= this.facts.rows().then((rows) => {
      const others = receiversRunByOthers(rows.runners, this.id)
      const byIndex = new Map<number, ReturnType<typeof dbOp>[]>()
      for (const { change, actionIdx } of attributeRowChanges(this.facts.execution, rows.changes, others)) {
        const list = byIndex.get(actionIdx) ?? byIndex.set(actionIdx, []).get(actionIdx)!
        list.push(dbOp(change, this.facts.decode.abiOf?.(change.code)))
      }
      return byIndex
    })
    return (await this.dbOpsByIndex).get(index) ?? []
  }
}

/** A row change as GraphQL's `DBOp`, rows decoded with the contract's ABI at the block when it declares the table. */
function dbOp(change: RowChange, abi: CompiledAbi | undefined) {
  const scope = scopeValue(change.scope)
  const rowType = abi?.abi.tables.find((t) => t.name.toString() === change.table)?.type
  const decoded = (value: Uint8Array | undefined) => {
    if (value === undefined) return { object: null, error: null }
    if (!abi || !rowType) return { object: null, error: `no ABI declares table ${change.table} of ${change.code}` }
    const result = abi.decode(rowType, value)
    return result.ok ? { object: result.value, error: null } : { object: null, error: result.error }
  }
  return {
    operation: change.old === undefined ? 'INS' : change.value === undefined ? 'REM' : 'UPD',
    oldPayer: change.old?.payer ?? null,
    newPayer: change.value === undefined ? null : change.payer,
    key: {
      code: change.code,
      table: change.table,
      scope: (args: { encoding?: Encoding }) => encodeUint64(scope, args.encoding),
      key: (args: { encoding?: Encoding }) => encodeUint64(change.primaryKey, args.encoding),
    },
    oldData: change.old?.value ? toHex(change.old.value) : null,
    newData: change.value ? toHex(change.value) : null,
    oldJSON: decoded(change.old?.value),
    newJSON: decoded(change.value),
  }
}
