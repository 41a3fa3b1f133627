import { randomBytes } from 'node:crypto'
import { PrivateKey } from '@wharfkit/antelope'
import { msToBlockSlot, toHex, type BlockRef } from '../../antelope/index.ts'
import { chainErrors } from '../errors.ts'
import { encodeFullState } from '../state/deltas.ts'
import { StateDb } from '../state/state-db.ts'
import type { NativeContract } from './apply-context.ts'
import { blockIdOf, packSignedBlock, type BlockHeader } from './block.ts'
import { DEV_PRIVATE_KEY, producerNames, writeGenesisState } from './genesis.ts'
import {
  decodeTransaction,
  recoverSigningKeys,
  type DecodedTransaction,
  type PackedTransactionInput,
} from './intake.ts'
import { PendingBlock, type AppliedTransaction, type SavannaBlockInputs } from './pending-block.ts'
import { finalityExtensionOf, finalizerPolicyOf, type FinalizerPolicy, type QcClaim } from './savanna.ts'
import { encodeTraces, type TransactionTrace } from './traces.ts'
import { BlockLog, type ShipPayload, type StoredBlock } from '../storage/block-log.ts'
import { token } from '../contracts/token.ts'
import { rawdb } from '../contracts/rawdb.ts'
import { nftdemo } from '../contracts/nftdemo.ts'
import { createSystemContract } from '../contracts/system.ts'

export interface ChainOptions {
  /** Where the block log lives; undefined keeps everything in memory. */
  readonly dataDir: string | undefined
  readonly producers: number
  readonly libDepth: number
  /** Sign blocks with the producer key (false: a well-formed placeholder signature, for built benchmark chains). */
  readonly signBlocks?: boolean
  readonly now?: () => number
  /**
   * Savanna finality (Spring): blocks from the first one produced in this mode on carry the
   * finality extension and `finality_data`, and LIB trails head by 2 (`libDepth` then applies
   * only to the legacy blocks before). A chain created in Savanna mode stays in it.
   */
  readonly savanna?: boolean
}

/** What a listener learns about the canonical chain. */
export type ChainEvent =
  | { readonly type: 'block'; readonly block: StoredBlock }
  /** Blocks at and above `forkBlockNum` were replaced; `block` events for the new branch follow. */
  | { readonly type: 'fork'; readonly forkBlockNum: number }
  | { readonly type: 'irreversible'; readonly lib: BlockRef }

export interface ForkResult {
  readonly fork_block_num: number
  readonly old_head: { block_num: number; block_id: string }
  readonly new_head: { block_num: number; block_id: string }
}

const PRODUCER_ROUND = 12
const PLACEHOLDER_SIGNATURE = PrivateKey.from(DEV_PRIVATE_KEY).signDigest(new Uint8Array(32)).toString()
/** Blocks kept in memory beyond the reversible ones, for readers following the head. */
const RECENT_EXTRA = 64

/**
 * The devchain's chain: state, canonical blocks, head and LIB. Blocks are produced on request
 * (the producer loop decides when); input transactions run in the pending block at once, as on
 * nodeos. Everything is synchronous, so no two changes ever interleave.
 */
export class Chain {
  readonly state = new StateDb()
  readonly contracts: ReadonlyMap<string, NativeContract>
  readonly systemContract: NativeContract
  readonly chainId: string
  readonly producers: readonly string[]
  private readonly log: BlockLog
  private readonly recent = new Map<number, StoredBlock>()
  private readonly ids: string[] = [] // ids[num] of the canonical chain
  private pending: PendingBlock | undefined
  private headBlock: StoredBlock
  private libNum = 1
  /** Block numbers whose state sessions are still open, oldest first. */
  private readonly sessionBlocks: number[] = []
  private readonly listeners = new Set<(e: ChainEvent) => void>()
  private readonly producerKey: PrivateKey | undefined
  private readonly now: () => number
  /** The first Savanna block, when the chain is (or becomes) a Savanna chain. */
  private readonly savannaFrom: number | undefined
  private stalled = false

  constructor(private readonly options: ChainOptions) {
    this.contracts = new Map([token, rawdb, nftdemo].map((c) => [c.codeHash, c]))
    this.systemContract = createSystemContract(this.contracts)
    this.producerKey = options.signBlocks === false ? undefined : PrivateKey.from(DEV_PRIVATE_KEY)
    this.now = options.now ?? Date.now
    this.log = new BlockLog(options.dataDir)
    let meta = this.log.meta() ?? {
      chainId: toHex(randomBytes(32)),
      genesisSlot: msToBlockSlot(this.now()),
      producers: producerNames(options.producers),
      ...(options.savanna ? { savannaFrom: 2 } : {}),
    }
    // A legacy chain reopened in Savanna mode switches with its next block, as a Spring chain did.
    if (options.savanna && meta.savannaFrom === undefined && this.log.lastNum() > 0) {
      meta = { ...meta, savannaFrom: this.log.lastNum() + 1 }
      this.log.setMeta(meta)
    }
    this.savannaFrom = meta.savannaFrom
    this.chainId = meta.chainId
    this.producers = meta.producers
    writeGenesisState(this.state, { genesisSlot: meta.genesisSlot, producers: meta.producers })
    const genesis = this.genesisBlock(meta.genesisSlot)
    const stored = this.log.get(1)
    if (stored && stored.id !== genesis.id)
      throw chainErrors.transaction(
        `devchain: genesis in ${options.dataDir} does not match (stored ${stored.id}, computed ${genesis.id})`,
      )
    if (!stored) {
      this.log.setMeta(meta)
      this.log.append(genesis)
    }
    this.headBlock = genesis
    this.remember(genesis)
    this.replay()
  }

  private genesisBlock(slot: number): StoredBlock {
    const header: BlockHeader = {
      slot,
      producer: 'eosio',
      previous: '0'.repeat(64),
      transactionMroot: '0'.repeat(64),
      actionMroot: '0'.repeat(64),
      scheduleVersion: 0,
    }
    return {
      num: 1,
      id: blockIdOf(header, 1),
      previous: header.previous,
      slot,
      producer: 'eosio',
      block: packSignedBlock(header, PLACEHOLDER_SIGNATURE, []),
      traces: encodeTraces([]),
      // nodeos's first chain-state entry is a full dump of every table.
      deltas: encodeFullState((table) => this.state.rows(table)),
      inputs: [],
    }
  }

  /** Re-executes every stored block so the state (and the undo sessions of reversible blocks) come back. */
  private replay(): void {
    for (const stored of this.log.all()) {
      if (stored.num === 1) continue
      const pending = this.openPending(stored.slot, stored.producer, finalityExtensionOf(stored.block)?.qcClaim)
      for (const input of stored.inputs) {
        const trx = decodeTransaction(input.packed)
        pending.apply(trx, input.trusted ? undefined : recoverSigningKeys(this.chainId, trx))
      }
      const block = this.seal(pending, false)
      if (block.id !== stored.id)
        throw chainErrors.transaction(
          `devchain: replay diverged at block ${stored.num} (stored ${stored.id}, produced ${block.id})`,
        )
    }
  }

  subscribe(listener: (e: ChainEvent) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  private emit(event: ChainEvent): void {
    for (const listener of this.listeners) listener(event)
  }

  get head(): StoredBlock {
    return this.headBlock
  }

  get lib(): BlockRef {
    return { blockNum: this.libNum, blockId: this.ids[this.libNum] }
  }

  get libDepth(): number {
    return this.options.libDepth
  }

  /** Savanna mode: the first Savanna block and the finalizer policy; undefined on a legacy chain. */
  get savanna(): { readonly from: number; readonly policy: FinalizerPolicy; readonly stalled: boolean } | undefined {
    return this.savannaFrom === undefined
      ? undefined
      : { from: this.savannaFrom, policy: finalizerPolicyOf(this.producers), stalled: this.stalled }
  }

  /**
   * Savanna mode: while stalled, finalizers "do not vote": each block repeats its parent's QC
   * claim, so LIB stays put while head advances; once released, the next block claims its parent
   * and LIB jumps to head − 2.
   */
  setFinalityStalled(stalled: boolean): void {
    if (this.savannaFrom === undefined)
      throw chainErrors.badRequest('finality can only be stalled on a Savanna chain (--savanna)')
    this.stalled = stalled
  }

  /** The id of canonical block `num`, if it exists. */
  blockIdAt(num: number): string | undefined {
    return this.ids[num]
  }

  /** A canonical block, from memory when recent, else from the log. */
  block(num: number): StoredBlock | undefined {
    if (num < 1 || num > this.headBlock.num) return undefined
    return this.recent.get(num) ?? this.log.get(num)
  }

  /** What SHiP serves of a canonical block (the log read skips the stored inputs). */
  shipPayload(num: number): ShipPayload | undefined {
    if (num < 1 || num > this.headBlock.num) return undefined
    return this.recent.get(num) ?? this.log.payload(num)
  }

  /** The producer scheduled for block `num`: each produces 12 blocks in turn. */
  producerOf(num: number): string {
    return this.producers[Math.floor((num - 2) / PRODUCER_ROUND) % this.producers.length] ?? 'eosio'
  }

  private nextSlot(): number {
    return Math.max(this.headBlock.slot + 1, msToBlockSlot(this.now()))
  }

  private openPending(slot: number, producer: string, replayedClaim?: QcClaim): PendingBlock {
    const num = this.headBlock.num + 1
    return new PendingBlock(
      {
        state: this.state,
        contracts: this.contracts,
        systemContract: this.systemContract,
        chainId: this.chainId,
        blockIdAt: (n) => this.ids[n],
        producerKey: this.producerKey,
      },
      num,
      slot,
      producer,
      this.headBlock,
      this.savannaInputs(num, replayedClaim),
    )
  }

  /** What block `num` needs to be a Savanna block (undefined: a legacy block). */
  private savannaInputs(num: number, replayedClaim: QcClaim | undefined): SavannaBlockInputs | undefined {
    const from = this.savannaFrom
    if (from === undefined || num < from) return undefined
    let qcClaim: QcClaim
    if (replayedClaim) qcClaim = replayedClaim
    else if (num === from)
      qcClaim = { blockNum: num, isStrongQc: false } // the Savanna Genesis block claims itself
    else if (this.stalled)
      qcClaim = finalityExtensionOf(this.headBlock.block)?.qcClaim ?? { blockNum: from, isStrongQc: false }
    else qcClaim = { blockNum: num - 1, isStrongQc: true }
    const claimedBlock = qcClaim.blockNum < num ? this.block(qcClaim.blockNum) : undefined
    return {
      qcClaim,
      genesis: num === from ? { policy: finalizerPolicyOf(this.producers), producers: this.producers } : undefined,
      reversibleIds: this.ids.slice(this.libNum + 1, num),
      claimed: claimedBlock && { id: claimedBlock.id, slot: claimedBlock.slot },
    }
  }

  private ensurePending(): PendingBlock {
    this.pending ??= this.openPending(this.nextSlot(), this.producerOf(this.headBlock.num + 1))
    return this.pending
  }

  /** Runs a signed transaction in the pending block; throws a chain error when it is refused. */
  pushTransaction(input: PackedTransactionInput): AppliedTransaction {
    const trx = decodeTransaction(input)
    const keys = recoverSigningKeys(this.chainId, trx)
    return this.ensurePending().apply(trx, keys)
  }

  /** Runs a transaction without signature checks (chain builder, boot). */
  pushTrusted(input: PackedTransactionInput): AppliedTransaction {
    return this.ensurePending().apply(decodeTransaction(input), undefined)
  }

  /** Runs an already decoded transaction without signature checks (the chain builder's fast path). */
  pushDecodedTrusted(trx: DecodedTransaction): AppliedTransaction {
    return this.ensurePending().apply(trx, undefined)
  }

  /** Executes a transaction against the pending state and undoes it (`compute_transaction`). */
  computeTransaction(input: PackedTransactionInput): TransactionTrace {
    return this.ensurePending().dryRun(decodeTransaction(input))
  }

  /** Seals the pending block (an empty one if none is open) and makes it the head. */
  produceBlock(): StoredBlock {
    const pending = this.ensurePending()
    this.pending = undefined
    return this.seal(pending, true)
  }

  private seal(pending: PendingBlock, persist: boolean): StoredBlock {
    const block = pending.finish(PLACEHOLDER_SIGNATURE)
    this.sessionBlocks.push(block.num)
    this.headBlock = block
    this.remember(block)
    if (persist) this.log.append(block)
    this.advanceLib()
    if (persist) this.emit({ type: 'block', block })
    return block
  }

  private remember(block: StoredBlock): void {
    this.ids[block.num] = block.id
    this.recent.set(block.num, block)
    this.recent.delete(block.num - this.options.libDepth - RECENT_EXTRA)
  }

  private advanceLib(): void {
    let target = Math.max(this.libNum, this.headBlock.num - this.options.libDepth)
    if (this.savannaFrom !== undefined && this.headBlock.num >= this.savannaFrom) {
      // Savanna: a strong QC on block C (claimed by the head) makes C − 1 final (two-chain rule).
      const claim = finalityExtensionOf(this.headBlock.block)?.qcClaim
      target = claim?.isStrongQc ? Math.max(this.libNum, claim.blockNum - 1) : this.libNum
    }
    if (target === this.libNum) return
    this.libNum = target
    while (this.sessionBlocks.length > 0 && this.sessionBlocks[0] <= this.libNum) {
      this.state.commitOldest()
      this.sessionBlocks.shift()
    }
    this.emit({ type: 'irreversible', lib: this.lib })
  }

  /**
   * Replaces the last `depth` blocks with a longer branch (depth + 1 blocks): the pending block
   * is dropped, the forked-out transactions are re-included in the new branch unless listed in
   * `drop` (or no longer valid), and the first new block skips a slot so every id differs.
   */
  fork(depth: number, drop: readonly string[] = []): ForkResult {
    const reversible = this.headBlock.num - this.libNum
    if (!Number.isInteger(depth) || depth < 1 || depth > reversible) {
      throw chainErrors.badRequest(`fork depth must be an integer from 1 to ${reversible} (the reversible blocks)`)
    }
    const oldHead = { block_num: this.headBlock.num, block_id: this.headBlock.id }
    const reinclude: PackedTransactionInput[] = []
    if (this.pending) {
      this.state.undo()
      reinclude.unshift(...this.pending.inputs.map((i) => i.packed))
      this.pending = undefined
    }
    const forkBlockNum = this.headBlock.num - depth + 1
    const forkedOut: StoredBlock[] = []
    while (this.headBlock.num >= forkBlockNum) {
      this.state.undo()
      this.sessionBlocks.pop()
      forkedOut.unshift(this.headBlock)
      this.ids.length = this.headBlock.num
      this.recent.delete(this.headBlock.num)
      this.headBlock = this.block(this.headBlock.num - 1)!
    }
    reinclude.unshift(...forkedOut.flatMap((b) => b.inputs.map((i) => i.packed)))
    this.log.truncateFrom(forkBlockNum)
    this.emit({ type: 'fork', forkBlockNum })
    const dropped = new Set(drop)
    const trusted = new Set(forkedOut.flatMap((b) => b.inputs.filter((i) => i.trusted).map((i) => i.packed)))
    let slot = this.headBlock.slot + 2
    for (let i = 0; i <= depth; i++) {
      this.pending = this.openPending(slot, this.producerOf(this.headBlock.num + 1))
      if (i === 0) {
        for (const input of reinclude) {
          try {
            const trx = decodeTransaction(input)
            if (dropped.has(trx.id)) continue
            this.pending.apply(trx, trusted.has(input) ? undefined : recoverSigningKeys(this.chainId, trx))
          } catch {
            // No longer valid on the new branch (expired, TAPOS on a forked-out block): dropped, as nodeos would.
          }
        }
      }
      this.produceBlock()
      slot = this.headBlock.slot + 1
    }
    return {
      fork_block_num: forkBlockNum,
      old_head: oldHead,
      new_head: { block_num: this.headBlock.num, block_id: this.headBlock.id },
    }
  }

  /** Groups many block productions into one disk transaction (chain builder). */
  batch<T>(fn: () => T): T {
    return this.log.batch(fn)
  }

  close(): void {
    this.log.close()
  }
}
