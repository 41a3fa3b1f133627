import { ABI, Serializer } from '@wharfkit/antelope'
import { actionDigest, actionReceiptDigest, fromHex, nameToBigInt, type RawAction } from '../../antelope/index.ts'
import { chainErrors } from '../errors.ts'
import { contractRowKey, contractScopeKey, type StateDb } from '../state/state-db.ts'
import type { ContractRowRow } from '../state/rows.ts'
import { AuthorityChecker, permissionKey } from './authority.ts'
import type { ActionTrace } from './traces.ts'

/** RAM billed per row and per table (nodeos's billable sizes of key_value_object and table_id_object). */
export const ROW_OVERHEAD_BYTES = 112n
export const TABLE_OVERHEAD_BYTES = 112n
const MAX_INLINE_DEPTH = 4
const MAX_ACTIONS_PER_TRANSACTION = 4096

/** What a contract (native or system) can do while it handles one action for one receiver. */
export interface ApplyContext {
  readonly receiver: string
  readonly act: RawAction
  /** Slot of the block being produced. */
  readonly blockSlot: number
  readonly blockTimeUs: bigint
  readonly state: StateDb
  /** Decodes the action data with an ABI; malformed data fails the action. */
  decode<T>(abi: ABI, type: string): T
  requireAuth(account: string, permission?: string): void
  hasAuth(account: string): boolean
  isAccount(name: string): boolean
  requireRecipient(account: string): void
  sendInline(action: RawAction): void
  setReturnValue(value: Uint8Array): void
  addRam(account: string, delta: bigint): void
  readonly db: ContractDb
}

/** The receiver's own tables, as the db_*_i64 intrinsics see them. */
export interface ContractDb {
  find(scope: string, table: string, primaryKey: bigint): ContractRowRow | undefined
  store(scope: string, table: string, payer: string, primaryKey: bigint, value: Uint8Array): void
  update(scope: string, table: string, primaryKey: bigint, payer: string, value: Uint8Array): void
  remove(scope: string, table: string, primaryKey: bigint): void
}

/** A contract implemented in TypeScript and attached to accounts by its marker code hash. */
export interface NativeContract {
  readonly name: string
  readonly codeHash: string
  readonly markerCode: Uint8Array
  readonly abi: ABI
  apply(ctx: ApplyContext): void
}

export interface TransactionExecution {
  readonly actionTraces: ActionTrace[]
  /** Receipt digests in execution order, for the block's action_mroot. */
  readonly receiptDigests: Uint8Array[]
  readonly ramDeltas: Map<string, bigint>
}

interface Scheduled {
  readonly trace: ActionTrace
  readonly ramDeltas: Map<string, bigint>
}

/**
 * Runs a transaction's actions as nodeos's apply_context does: each action, then every account
 * it notified (in order, each a trace of its own), then its inline actions depth first. Ordinals
 * are given when an action is scheduled, receipts when it finishes. The caller owns the state
 * session and undoes it when this throws.
 */
export class TransactionExecutor {
  readonly traces: ActionTrace[] = []
  readonly receiptDigests: Uint8Array[] = []
  private readonly scheduled: Scheduled[] = []
  readonly ramDeltas = new Map<string, bigint>()

  constructor(
    private readonly args: {
      readonly state: StateDb
      readonly contracts: ReadonlyMap<string, NativeContract>
      readonly systemContract: NativeContract
      readonly blockSlot: number
      readonly blockTimeUs: bigint
      /** ACTION_RETURN_VALUE digest recipe (false = legacy). */
      readonly returnValueDigest: boolean
    },
  ) {}

  /** Executes the top-level actions of a transaction (already authorized by the caller). */
  run(actions: readonly RawAction[]): TransactionExecution {
    const roots = actions.map((act) => this.schedule(act, act.account, 0, 0))
    for (const ordinal of roots) this.execute(ordinal, 0)
    return { actionTraces: this.traces, receiptDigests: this.receiptDigests, ramDeltas: this.ramDeltas }
  }

  private schedule(act: RawAction, receiver: string, creator: number, closestUnnotified: number): number {
    if (this.traces.length >= MAX_ACTIONS_PER_TRANSACTION)
      throw chainErrors.transaction('transaction schedules too many actions')
    const ordinal = this.traces.length + 1
    const trace: ActionTrace = {
      actionOrdinal: ordinal,
      creatorActionOrdinal: creator,
      closestUnnotifiedAncestorActionOrdinal: closestUnnotified,
      receipt: undefined,
      receiver,
      act,
      contextFree: false,
      accountRamDeltas: [],
      returnValue: new Uint8Array(0),
    }
    this.traces.push(trace)
    this.scheduled.push({ trace, ramDeltas: new Map() })
    return ordinal
  }

  private execute(ordinal: number, depth: number): void {
    const notified: number[] = [ordinal]
    const inlines: number[] = []
    for (let i = 0; i < notified.length; i++)
      this.executeOne(this.scheduled[notified[i] - 1], ordinal, notified, inlines)
    if (inlines.length > 0 && depth >= MAX_INLINE_DEPTH)
      throw chainErrors.transaction(`max inline action depth per transaction reached`)
    for (const inline of inlines) this.execute(inline, depth + 1)
  }

  private executeOne(current: Scheduled, firstOrdinal: number, notified: number[], inlines: number[]): void {
    const { trace } = current
    const { state } = this.args
    const act = trace.act
    const receiver = trace.receiver
    const ctx: ApplyContext = {
      receiver,
      act,
      blockSlot: this.args.blockSlot,
      blockTimeUs: this.args.blockTimeUs,
      state,
      decode<T>(abi: ABI, type: string): T {
        try {
          return Serializer.objectify(Serializer.decode({ abi, type, data: act.data })) as T
        } catch (error) {
          throw chainErrors.unpack(
            `unable to unpack action data of ${act.account}::${act.name}: ${(error as Error).message}`,
          )
        }
      },
      requireAuth(account, permission) {
        const ok = act.authorization.some(
          (l) => l.actor === account && (permission === undefined || l.permission === permission),
        )
        if (!ok) throw chainErrors.missingAuth(`missing authority of ${account}${permission ? `/${permission}` : ''}`)
      },
      hasAuth: (account) => act.authorization.some((l) => l.actor === account),
      isAccount: (name) => state.has('account', name),
      requireRecipient: (account) => {
        if (!state.has('account', account))
          throw chainErrors.actionValidate(`can not notify non-existent account ${account}`)
        if (notified.some((o) => this.scheduled[o - 1].trace.receiver === account)) return
        notified.push(this.schedule(act, account, trace.actionOrdinal, firstOrdinal))
      },
      sendInline: (inline) => {
        this.checkInline(receiver, inline)
        inlines.push(this.schedule(inline, inline.account, trace.actionOrdinal, firstOrdinal))
      },
      setReturnValue(value) {
        trace.returnValue = value
      },
      addRam: (account, delta) => {
        current.ramDeltas.set(account, (current.ramDeltas.get(account) ?? 0n) + delta)
        this.ramDeltas.set(account, (this.ramDeltas.get(account) ?? 0n) + delta)
      },
      db: this.contractDb(receiver, (account, delta) => ctx.addRam(account, delta)),
    }
    if (receiver === 'eosio' && act.account === 'eosio') this.args.systemContract.apply(ctx)
    else {
      const codeHash = state.get('account_metadata', receiver)?.codeHash
      const contract = codeHash ? this.args.contracts.get(codeHash) : undefined
      if (contract) contract.apply(ctx)
    }
    trace.receipt = this.makeReceipt(trace)
    for (const [account, delta] of current.ramDeltas) if (delta !== 0n) trace.accountRamDeltas.push({ account, delta })
    trace.accountRamDeltas.sort((a, b) => compareNames(a.account, b.account))
  }

  /** Inline actions must be authorized by the sender's `eosio.code` permission. */
  private checkInline(sender: string, inline: RawAction): void {
    const { state } = this.args
    if (!state.has('account', inline.account))
      throw chainErrors.actionValidate(`inline action's code account ${inline.account} does not exist`)
    const checker = new AuthorityChecker(state, new Set(), new Set([permissionKey(sender, 'eosio.code')]))
    for (const level of inline.authorization) {
      if (!state.has('account', level.actor))
        throw chainErrors.actionValidate(`inline action's authorizing actor ${level.actor} does not exist`)
      if (!checker.satisfies(level)) {
        throw chainErrors.unsatisfiedAuthorization(
          `transaction declares authority '${JSON.stringify(level)}', but does not have signatures for it under a provided delay of 0 ms, provided permissions [{"actor":"${sender}","permission":"eosio.code"}], provided keys [], and a delay max limit of 3888000000 ms`,
        )
      }
    }
  }

  private makeReceipt(trace: ActionTrace): NonNullable<ActionTrace['receipt']> {
    const { state } = this.args
    const globalSequence = (state.get('_counter', 'global_sequence')?.value ?? 0n) + 1n
    state.put('_counter', 'global_sequence', { value: globalSequence })
    const receiverSeq = sequenceRow(state, trace.receiver)
    const recvSequence = receiverSeq.recvSequence + 1n
    state.put('_account_sequence', trace.receiver, { ...receiverSeq, recvSequence })
    const actors = [...new Set(trace.act.authorization.map((l) => l.actor))].sort(compareNames)
    const authSequence = actors.map((actor) => {
      const row = sequenceRow(state, actor)
      const next = row.authSequence + 1n
      state.put('_account_sequence', actor, { ...row, authSequence: next })
      return [actor, next] as const
    })
    const codeOwner = sequenceRow(state, trace.act.account)
    const receipt = {
      receiver: trace.receiver,
      actDigest: actionDigest(trace.act, trace.returnValue, !this.args.returnValueDigest),
      globalSequence,
      recvSequence,
      authSequence,
      codeSequence: codeOwner.codeSequence,
      abiSequence: codeOwner.abiSequence,
    }
    this.receiptDigests.push(
      actionReceiptDigest({
        receiver: nameToBigInt(receipt.receiver),
        actDigest: fromHex(receipt.actDigest),
        globalSequence,
        recvSequence,
        authSequence: authSequence.map(([account, sequence]) => ({ account: nameToBigInt(account), sequence })),
        codeSequence: receipt.codeSequence,
        abiSequence: receipt.abiSequence,
      }),
    )
    return receipt
  }

  private contractDb(code: string, addRam: (account: string, delta: bigint) => void): ContractDb {
    const { state } = this.args
    const ensureTable = (scope: string, table: string, payer: string) => {
      const key = contractScopeKey(code, scope, table)
      if (state.has('contract_table', key)) return
      state.put('contract_table', key, { code, scope, table, payer })
      addRam(payer, TABLE_OVERHEAD_BYTES)
    }
    const dropTableIfEmpty = (scope: string, table: string) => {
      if (state.contractRowKeys(code, scope, table).length > 0) return
      const key = contractScopeKey(code, scope, table)
      const row = state.get('contract_table', key)
      if (!row) return
      state.delete('contract_table', key)
      addRam(row.payer, -TABLE_OVERHEAD_BYTES)
    }
    return {
      find: (scope, table, primaryKey) => state.get('contract_row', contractRowKey(code, scope, table, primaryKey)),
      store: (scope, table, payer, primaryKey, value) => {
        const key = contractRowKey(code, scope, table, primaryKey)
        if (state.has('contract_row', key))
          throw chainErrors.transaction(
            `db_store_i64: a row with primary key ${primaryKey} already exists in ${code}:${scope}:${table}`,
          )
        if (!state.has('account', payer))
          throw chainErrors.actionValidate(`db_store_i64: payer ${payer} does not exist`)
        ensureTable(scope, table, payer)
        state.put('contract_row', key, { code, scope, table, primaryKey, payer, value })
        addRam(payer, ROW_OVERHEAD_BYTES + BigInt(value.length))
      },
      update: (scope, table, primaryKey, payer, value) => {
        const key = contractRowKey(code, scope, table, primaryKey)
        const old = state.get('contract_row', key)
        if (!old)
          throw chainErrors.transaction(
            `db_update_i64: no row with primary key ${primaryKey} in ${code}:${scope}:${table}`,
          )
        if (payer !== old.payer) {
          addRam(old.payer, -(ROW_OVERHEAD_BYTES + BigInt(old.value.length)))
          addRam(payer, ROW_OVERHEAD_BYTES + BigInt(value.length))
        } else if (value.length !== old.value.length) {
          addRam(payer, BigInt(value.length - old.value.length))
        }
        state.put('contract_row', key, { ...old, payer, value })
      },
      remove: (scope, table, primaryKey) => {
        const key = contractRowKey(code, scope, table, primaryKey)
        const old = state.get('contract_row', key)
        if (!old)
          throw chainErrors.transaction(
            `db_remove_i64: no row with primary key ${primaryKey} in ${code}:${scope}:${table}`,
          )
        state.delete('contract_row', key)
        addRam(old.payer, -(ROW_OVERHEAD_BYTES + BigInt(old.value.length)))
        dropTableIfEmpty(scope, table)
      },
    }
  }
}

function sequenceRow(state: StateDb, account: string) {
  return (
    state.get('_account_sequence', account) ?? { recvSequence: 0n, authSequence: 0n, codeSequence: 0, abiSequence: 0 }
  )
}

/** Orders names by their uint64 value, as nodeos's flat_maps do. */
export function compareNames(a: string, b: string): number {
  const x = nameToBigInt(a)
  const y = nameToBigInt(b)
  return x < y ? -1 : x > y ? 1 : 0
}
