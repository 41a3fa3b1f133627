import { PrivateKey, Serializer, Transaction } from '@wharfkit/antelope'
import {
  BinaryReader,
  blockSlotToMs,
  refBlockPrefix,
  toHex,
  transactionId,
  type RawAction,
} from '../../antelope/index.ts'
import type { StateDb } from '../state/state-db.ts'
import { TransactionExecutor, type NativeContract } from './apply-context.ts'
import { packHeader, type BlockHeader, type BlockReceipt } from './block.ts'
import { sealBlock } from './block-seal.ts'
import { decodeTransaction, netUsageWords, type DecodedTransaction } from './intake.ts'
import { TRX_STATUS, type TransactionTrace } from './traces.ts'
import { checkTransaction } from './transaction-checks.ts'
import type { StoredBlock, StoredInput } from '../storage/block-log.ts'
import type { FinalizerPolicy, QcClaim } from './savanna.ts'

/** What a Savanna block needs from the chain beyond a legacy one (see savanna.ts). */
export interface SavannaBlockInputs {
  readonly qcClaim: QcClaim
  /** The first Savanna block: the finalizer and proposer policies it introduces. */
  readonly genesis?: { readonly policy: FinalizerPolicy; readonly producers: readonly string[] }
  /** Ids of the reversible blocks before this one (LIB + 1 … parent): `reversible_blocks_mroot`. */
  readonly reversibleIds: readonly string[]
  /** The block the QC claim names, unless it is this block itself (the first Savanna block). */
  readonly claimed: { readonly id: string; readonly slot: number } | undefined
}

const DEFERRED_EXPIRATION_WINDOW_SEC = 600
const PRUNE_EVERY_BLOCKS = 64

/** What producing a block needs from the chain. */
export interface BlockContext {
  readonly state: StateDb
  readonly contracts: ReadonlyMap<string, NativeContract>
  readonly systemContract: NativeContract
  readonly chainId: string
  /** Id of the canonical block `num`, when it is still in the TAPOS window. */
  readonly blockIdAt: (num: number) => string | undefined
  readonly producerKey: PrivateKey | undefined
}

/** A transaction's outcome in a pending block. */
export interface AppliedTransaction {
  readonly trace: TransactionTrace
  readonly blockNum: number
  readonly blockSlot: number
}

/**
 * The block being built: opened on the state (a session of its own), then the implicit `onblock`,
 * due deferred transactions, and input transactions, each in a nested session that is undone when
 * the transaction fails. `finish()` seals it into a stored block.
 */
export class PendingBlock {
  readonly receipts: BlockReceipt[] = []
  readonly traces: TransactionTrace[] = []
  readonly inputs: StoredInput[] = []
  private readonly actionDigests: Uint8Array[] = []
  readonly blockTimeUs: bigint

  constructor(
    private readonly ctx: BlockContext,
    readonly num: number,
    readonly slot: number,
    readonly producer: string,
    readonly previous: StoredBlock,
    private readonly savanna?: SavannaBlockInputs,
  ) {
    this.blockTimeUs = BigInt(blockSlotToMs(slot)) * 1000n
    ctx.state.startSession()
    this.pruneExpiredTransactionIds()
    this.runOnblock()
    this.runDueDeferred()
  }

  /**
   * Forgets ids of transactions that expired (they can no longer be replayed, so the duplicate
   * check no longer needs them), every 64 blocks, inside the block's session so forks undo it.
   */
  private pruneExpiredTransactionIds(): void {
    if (this.num % PRUNE_EVERY_BLOCKS !== 0) return
    const { state } = this.ctx
    const expired: string[] = []
    for (const [id, row] of state.rows('_recent_transaction'))
      if (row.expirationSec < this.blockTimeSec) expired.push(id)
    for (const id of expired) state.delete('_recent_transaction', id)
  }

  private get blockTimeSec(): number {
    return Number(this.blockTimeUs / 1_000_000n)
  }

  private executor(): TransactionExecutor {
    return new TransactionExecutor({
      state: this.ctx.state,
      contracts: this.ctx.contracts,
      systemContract: this.ctx.systemContract,
      blockSlot: this.slot,
      blockTimeUs: this.blockTimeUs,
      returnValueDigest: true,
    })
  }

  private runOnblock(): void {
    const data = packHeader(headerOfStored(this.previous))
    const act: RawAction = {
      account: 'eosio',
      name: 'onblock',
      authorization: [{ actor: 'eosio', permission: 'active' }],
      data,
    }
    const trx = Transaction.from({
      expiration: this.blockTimeSec + 1,
      ref_block_num: this.previous.num & 0xffff,
      ref_block_prefix: refBlockPrefix(this.previous.id),
      actions: [{ account: act.account, name: act.name, authorization: [...act.authorization], data: toHex(data) }],
    })
    const packed = Serializer.encode({ object: trx }).array
    const execution = this.executor().run([act])
    this.actionDigests.push(...execution.receiptDigests)
    this.traces.push({
      id: transactionId(packed),
      status: TRX_STATUS.executed,
      cpuUsageUs: 100,
      netUsageWords: 0,
      netUsage: 0,
      scheduled: false,
      actionTraces: execution.actionTraces,
      accountRamDelta: undefined,
      except: undefined,
      partial: {
        expirationSec: this.blockTimeSec + 1,
        refBlockNum: this.previous.num & 0xffff,
        refBlockPrefix: refBlockPrefix(this.previous.id),
        maxNetUsageWords: 0,
        maxCpuUsageMs: 0,
        delaySec: 0,
        signatures: [],
        contextFreeData: [],
      },
    })
  }

  private runDueDeferred(): void {
    const { state } = this.ctx
    const due = [...state.rows('generated_transaction')]
      .filter(([, row]) => row.delayUntilUs <= this.blockTimeUs)
      .sort(([ka, a], [kb, b]) =>
        a.delayUntilUs === b.delayUntilUs ? (ka < kb ? -1 : 1) : a.delayUntilUs < b.delayUntilUs ? -1 : 1,
      )
    for (const [key, row] of due) {
      const base = {
        id: row.trxId,
        cpuUsageUs: 0,
        netUsageWords: 0,
        netUsage: 0,
        scheduled: true,
        accountRamDelta: undefined,
        partial: undefined,
      }
      if (row.expirationUs < this.blockTimeUs) {
        state.delete('generated_transaction', key)
        this.addReceipt(
          { status: TRX_STATUS.expired, cpuUsageUs: 0, netUsageWords: 0, trx: { kind: 'id', id: row.trxId } },
          { ...base, status: TRX_STATUS.expired, actionTraces: [], except: 'expired' },
        )
        continue
      }
      const trx = decodeTransaction({
        signatures: [],
        compression: 0,
        packedContextFreeData: new Uint8Array(0),
        packedTrx: row.packedTrx,
      })
      state.startSession()
      try {
        state.delete('generated_transaction', key)
        const execution = this.executor().run(trx.actions)
        state.squash()
        this.actionDigests.push(...execution.receiptDigests)
        this.addReceipt(
          { status: TRX_STATUS.executed, cpuUsageUs: 150, netUsageWords: 0, trx: { kind: 'id', id: row.trxId } },
          {
            ...base,
            status: TRX_STATUS.executed,
            cpuUsageUs: 150,
            actionTraces: execution.actionTraces,
            except: undefined,
          },
        )
      } catch (error) {
        state.undo()
        state.delete('generated_transaction', key)
        this.addReceipt(
          { status: TRX_STATUS.hard_fail, cpuUsageUs: 0, netUsageWords: 0, trx: { kind: 'id', id: row.trxId } },
          { ...base, status: TRX_STATUS.hard_fail, actionTraces: [], except: (error as Error).message },
        )
      }
    }
  }

  private addReceipt(receipt: BlockReceipt, trace: TransactionTrace): void {
    this.receipts.push(receipt)
    this.traces.push(trace)
  }

  /** Validates an input transaction against the pending state; `keys` undefined = trusted input. */
  private validate(trx: DecodedTransaction, keys: ReadonlySet<string> | undefined): void {
    const { state, blockIdAt } = this.ctx
    checkTransaction({ state, blockIdAt, blockTimeSec: this.blockTimeSec, previousNum: this.previous.num }, trx, keys)
  }

  /** Applies an input transaction; throws (leaving the state untouched) when it fails. */
  apply(trx: DecodedTransaction, keys: ReadonlySet<string> | undefined): AppliedTransaction {
    this.validate(trx, keys)
    const { state } = this.ctx
    state.startSession()
    let outcome: { trace: TransactionTrace; digests: Uint8Array[] }
    try {
      outcome = this.execute(trx)
      state.squash()
    } catch (error) {
      state.undo()
      throw error
    }
    const { trace } = outcome
    this.actionDigests.push(...outcome.digests)
    this.addReceipt(
      {
        status: trace.status,
        cpuUsageUs: trace.cpuUsageUs,
        netUsageWords: trace.netUsageWords,
        trx: { kind: 'packed', id: trx.id, packed: trx.input },
      },
      trace,
    )
    this.inputs.push({ trusted: keys === undefined, packed: trx.input })
    return { trace, blockNum: this.num, blockSlot: this.slot }
  }

  /** Runs a transaction against the pending state and undoes it (`compute_transaction`: no signatures). */
  dryRun(trx: DecodedTransaction): TransactionTrace {
    this.validate(trx, undefined)
    this.ctx.state.startSession()
    try {
      return this.execute(trx).trace
    } finally {
      this.ctx.state.undo()
    }
  }

  /** The transaction's effects inside the caller's session: a delayed row, or its actions run. */
  private execute(trx: DecodedTransaction): { trace: TransactionTrace; digests: Uint8Array[] } {
    const { state } = this.ctx
    state.put('_recent_transaction', trx.id, { expirationSec: trx.expirationSec })
    const words = netUsageWords(trx)
    const partial = {
      expirationSec: trx.expirationSec,
      refBlockNum: trx.refBlockNum,
      refBlockPrefix: trx.refBlockPrefix,
      maxNetUsageWords: trx.maxNetUsageWords,
      maxCpuUsageMs: trx.maxCpuUsageMs,
      delaySec: trx.delaySec,
      signatures: trx.input.signatures,
      contextFreeData: trx.contextFreeData,
    }
    const base = {
      id: trx.id,
      netUsageWords: words,
      netUsage: words * 8,
      scheduled: false,
      accountRamDelta: undefined,
      except: undefined,
      partial,
    }
    if (trx.delaySec > 0) {
      const payer = trx.actions[0].authorization[0]?.actor ?? 'eosio'
      const delayUntilUs = this.blockTimeUs + BigInt(trx.delaySec) * 1_000_000n
      state.put('generated_transaction', `\u0000${trx.id}`, {
        sender: '',
        senderId: BigInt(`0x${trx.id.slice(0, 32)}`).toString(),
        payer,
        trxId: trx.id,
        packedTrx: trx.packedTrx,
        delayUntilUs,
        expirationUs: delayUntilUs + BigInt(DEFERRED_EXPIRATION_WINDOW_SEC) * 1_000_000n,
      })
      return { trace: { ...base, status: TRX_STATUS.delayed, cpuUsageUs: 100, actionTraces: [] }, digests: [] }
    }
    const execution = this.executor().run(trx.actions)
    const cpuUsageUs = 100 + 40 * execution.actionTraces.length
    return {
      trace: { ...base, status: TRX_STATUS.executed, cpuUsageUs, actionTraces: execution.actionTraces },
      digests: execution.receiptDigests,
    }
  }

  /** Seals the block: mroots, id, signature, and the SHiP payloads. The state session stays open. */
  finish(placeholderSignature: string): StoredBlock {
    const { state, producerKey } = this.ctx
    const { num, slot, producer, previous, receipts, traces, actionDigests, inputs, savanna } = this
    return sealBlock(
      { num, slot, producer, previous, receipts, traces, actionDigests, inputs, savanna, state, producerKey },
      placeholderSignature,
    )
  }
}

/** Reads back the header fields of a stored block from its packed `signed_block`. */
export function headerOfStored(block: StoredBlock): BlockHeader {
  const b = block.block
  const hex = (from: number) => toHex(b.subarray(from, from + 32))
  // timestamp(4) producer(8) confirmed(2) previous(32) transaction_mroot(32) action_mroot(32) schedule_version(4)
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength)
  // new_producers (always absent on the devchain), then the header extensions.
  const r = new BinaryReader(b.subarray(115))
  const headerExtensions: { type: number; data: Uint8Array }[] = []
  for (let i = r.varuint32(); i > 0; i--) headerExtensions.push({ type: r.uint16(), data: r.bytes() })
  return {
    slot: view.getUint32(0, true),
    producer: block.producer,
    previous: hex(14),
    transactionMroot: hex(46),
    actionMroot: hex(78),
    scheduleVersion: view.getUint32(110, true),
    headerExtensions,
  }
}
