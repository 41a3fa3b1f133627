import type { BlockRef } from '../antelope/index.ts'
import {
  ShipHistoryGapError,
  ShipProtocolError,
  checkShipAbi,
  createShipReader,
  type ShipReaderEvent,
  type StatusResult,
} from '../ship/index.ts'
import type { BlockBatch, BlockReader, StateReader, StoreWriter } from '../store/index.ts'
import { AbiTracker } from './abi-tracker.ts'
import { CreatorTracker } from './creators.ts'
import { ShipHistoryMismatchError } from './errors.ts'
import { normalizeBlock } from './normalize.ts'

export interface IndexerConfig {
  readonly shipUrl: string
  readonly store: StoreWriter & Pick<StateReader, 'abi'> & Pick<BlockReader, 'transactionHistory' | 'blockByNum'>
  /** First block for an empty store (default 1). */
  readonly startBlockNum?: number
  /** Stop after applying this block (default: follow the chain forever). */
  readonly endBlockNum?: number
  readonly maxMessagesInFlight?: number
  /**
   * Store only irreversible blocks (SHiP's `irreversible_only`): the node sends blocks up to its
   * LIB, so no fork reaches what this mode stores (a block above LIB stops the indexer with
   * `ship_protocol_error`). Reversible blocks a store already held from a normal run are still
   * undone if the chain forks them out.
   */
  readonly irreversibleOnly?: boolean
  /** Ask a Spring node for `finality_data` (v1 requests; see the reader's option). */
  readonly fetchFinalityData?: boolean
  readonly reconnect?: { readonly minDelayMs?: number; readonly maxDelayMs?: number; readonly maxAttempts?: number }
  /** After each applied block: its action traces and table row changes counted. */
  readonly onBlock?: (block: {
    num: number
    id: string
    lib: number
    head: number
    actions: number
    rowChanges: number
  }) => void
  readonly onFork?: (fork: { blockNum: number; undone: number }) => void
  readonly onReaderEvent?: (event: ShipReaderEvent) => void
  /**
   * Called on every connection whose node passed the checks at connect (protocol, retained history, chain id), before
   * any of its blocks: the node is accepted, though a block of another history can still stop the indexer later.
   */
  readonly onNodeAccepted?: (node: { chainId: string | undefined; head: number; lib: number }) => void
}

/** Blocks behind head from which the indexer writes several blocks per transaction. */
const FAR_BEHIND_BLOCKS = 100
/**
 * Blocks per transaction while far behind. A batch's records stay alive until it is written:
 * at 100 blocks they outgrew Node's young generation and were copied by every scavenge (15–30 %
 * more CPU per block); at 50 they fit, and the commit is still a small part of a block's cost.
 */
export const CATCH_UP_BATCH = 50
/**
 * …and at most this many records (action traces and row changes) per transaction, so dense blocks (a mainnet block
 * holds a thousand traces or more) commit in smaller batches instead of holding 50 blocks of records: the bench
 * shape's 50 blocks are 3,650 records, a batch of 50 dense blocks 72,000 (the indexer passed 1 GiB).
 */
export const CATCH_UP_RECORDS = 6000

export interface Indexer {
  /** Runs until `endBlockNum`, `stop()`, or an error that retrying cannot fix (thrown). */
  run(): Promise<void>
  stop(): Promise<void>
}

/**
 * The first block both of the node's state-history logs hold, when it reports them (a log that is
 * off or still empty reports an empty range and is not judged).
 */
function retainedFrom(status: StatusResult): number | undefined {
  const ranges = [
    [status.traceBeginBlock, status.traceEndBlock],
    [status.chainStateBeginBlock, status.chainStateEndBlock],
  ]
  const begins = ranges.filter(([begin, end]) => end > begin).map(([begin]) => begin)
  return begins.length ? Math.max(...begins) : undefined
}

type SessionOutcome = { kind: 'done' | 'stopped' } | { kind: 'relink'; applied: number; reason: string }

/**
 * Follows a SHiP feed into the store, block by block, each in one atomic write. A block whose
 * number is at or below the store's head is a fork: everything from it up is undone first. A
 * block that still does not link means the feed skipped a fork the store has not seen: the
 * session restarts (after a back-off) with the store's reversible blocks as `have_positions`, so
 * the server rewinds. On every connection the node's ABI passes the protocol guard and its
 * retained history must hold the next block; a block past the next one (after results that carry
 * no block) is a gap too: both stop the indexer before anything of it is written.
 *
 * Another history is refused (`ship_history_mismatch_error`), never undone and never retried: a node whose chain id
 * differs from the one the store recorded (checked at connect; the store records its node's before its first write),
 * or a block that differs from the store's at or below the store's LIB (a fork reaching an irreversible block, or a
 * block that does not link to an irreversible head).
 */
export function createIndexer(config: IndexerConfig): Indexer {
  let stopped = false
  let closeReader: (() => Promise<void>) | undefined
  let wakeSleep: (() => void) | undefined
  const minDelay = config.reconnect?.minDelayMs ?? 250
  const maxDelay = config.reconnect?.maxDelayMs ?? 10_000
  const abis = new AbiTracker(
    async (account) => (await config.store.abi({ account, blockNum: Number.MAX_SAFE_INTEGER }))?.abi,
  )
  const creators = new CreatorTracker((trxId) => config.store.transactionHistory(trxId))

  /**
   * The node's block `block`, at or below the store's LIB, must be the one the store holds (one the store does not
   * hold, below where it started, cannot be judged).
   */
  async function refuseIrreversibleFork(block: BlockRef, storeLib: number): Promise<void> {
    const stored = await config.store.blockByNum(block.blockNum)
    if (!stored || stored.id === block.blockId) return
    throw ShipHistoryMismatchError({
      kind: 'block',
      blockNum: block.blockNum,
      storeId: stored.id,
      nodeId: block.blockId,
      storeLib,
    })
  }

  /** Records the node's chain id in a store that has none; a store that got another one meanwhile is refused. */
  async function recordChainId(nodeChainId: string): Promise<string> {
    const recorded = await config.store.recordChainId(nodeChainId)
    if (recorded !== nodeChainId)
      throw ShipHistoryMismatchError({ kind: 'chain_id', storeChainId: recorded, nodeChainId })
    return recorded
  }

  async function session(): Promise<SessionOutcome> {
    const { store } = config
    const position = await store.position()
    // The store's LIB: a block that disagrees with the store at or below it is another history.
    let storeLib = position?.lib ?? 0
    let storeChainId = await store.chainId()
    let nodeChainId: string | undefined
    // Positions above LIB, kept in step with the store, for have_positions on every (re)connect.
    const held: BlockRef[] = await store.reversibleBlocks()
    let head = position?.head
    // Where an empty store begins.
    let start = config.startBlockNum ?? 1
    const needed = () => (head ? head.blockNum + 1 : start)
    let applied = 0
    const reader = createShipReader({
      url: config.shipUrl,
      startBlockNum: needed(),
      endBlockNum: config.endBlockNum === undefined ? undefined : config.endBlockNum + 1,
      maxMessagesInFlight: config.maxMessagesInFlight ?? 20,
      irreversibleOnly: config.irreversibleOnly ?? false,
      ...(config.fetchFinalityData ? { fetchFinalityData: true } : {}),
      reconnect: config.reconnect,
      havePositions: () => held,
      resumeFrom: needed,
      onEvent: config.onReaderEvent,
      onHandshake: ({ abi, status }) => {
        checkShipAbi(abi)
        // A node that does not report its chain id (EOSIO 2.0) is judged by its blocks alone.
        if (storeChainId !== undefined && status.chainId !== undefined && status.chainId !== storeChainId)
          throw ShipHistoryMismatchError({
            kind: 'chain_id',
            storeChainId,
            nodeChainId: status.chainId,
            storeHead: head?.blockNum,
            storeLib: position?.lib,
          })
        nodeChainId = status.chainId
        const available = retainedFrom(status)
        if (available !== undefined && needed() < available) {
          // A node started from genesis keeps no state history of block 1 (it is never applied).
          if (!head && start === 1 && available === 2) start = 2
          else throw ShipHistoryGapError({ needed: needed(), available, storeHead: head?.blockNum, source: 'status' })
        }
        config.onNodeAccepted?.({
          chainId: status.chainId,
          head: status.head.blockNum,
          lib: status.lastIrreversible.blockNum,
        })
      },
    })
    closeReader = () => reader.close()
    // Blocks normalized but not yet written: far below head they are written in batches, and a
    // batch is written while the next one is read and normalized (one write in flight at most).
    const pending: BlockBatch[] = []
    let pendingLib = 0
    let pendingRecords = 0
    let writing: Promise<void> | undefined
    // A failed write is held here until the indexer next waits on writes, where it is thrown.
    let writeFailure: { error: unknown } | undefined
    const settle = async () => {
      await writing
      writing = undefined
      if (writeFailure) throw writeFailure.error
    }
    const flush = async () => {
      await settle()
      if (pending.length === 0) return
      const blocks = pending.splice(0)
      pendingRecords = 0
      const mark = abis.mark()
      writing = store.applyBlocks(blocks, pendingLib).then(
        () => abis.written(mark),
        (error: unknown) => {
          writeFailure = { error }
        },
      )
    }
    const flushAndSettle = async () => {
      await flush()
      await settle()
    }
    try {
      for await (const result of reader.blocks()) {
        if (stopped) break
        const thisBlock = result.thisBlock
        // A number the node has no block for (pruned history): judged by the next block.
        if (!thisBlock) continue
        if (config.irreversibleOnly && thisBlock.blockNum > result.lastIrreversible.blockNum) {
          throw ShipProtocolError(
            `irreversible-only: the node sent block ${thisBlock.blockNum} above its LIB ${result.lastIrreversible.blockNum} (it ignores irreversible_only); nothing of it was written`,
          )
        }
        if (head && thisBlock.blockNum <= head.blockNum) {
          await flushAndSettle()
          // A fork reaching LIB is another history: refused before anything is undone.
          if (thisBlock.blockNum <= storeLib) await refuseIrreversibleFork(thisBlock, storeLib)
          else if (result.prevBlock && result.prevBlock.blockNum <= storeLib)
            await refuseIrreversibleFork(result.prevBlock, storeLib)
          await store.undoFrom(thisBlock.blockNum)
          abis.reset()
          creators.reset()
          config.onFork?.({ blockNum: thisBlock.blockNum, undone: head.blockNum - thisBlock.blockNum + 1 })
          while (held.length && held[held.length - 1].blockNum >= thisBlock.blockNum) held.pop()
          head = (await store.position())?.head
        }
        if (thisBlock.blockNum > needed()) {
          await flushAndSettle()
          throw ShipHistoryGapError({
            needed: needed(),
            available: thisBlock.blockNum,
            storeHead: head?.blockNum,
            source: 'results',
          })
        }
        const normalized = normalizeBlock(result)
        if (head && (normalized.block.num !== head.blockNum + 1 || normalized.block.previous !== head.blockId)) {
          await flushAndSettle()
          // The head is irreversible: the node's chain runs through another block there.
          if (normalized.block.num === head.blockNum + 1 && head.blockNum <= storeLib)
            throw ShipHistoryMismatchError({
              kind: 'block',
              blockNum: head.blockNum,
              storeId: head.blockId,
              nodeId: normalized.block.previous,
              storeLib,
            })
          const reason = `block ${normalized.block.num} does not link to the store's head ${head.blockNum} (previous ${normalized.block.previous}, head ${head.blockId}): a fork the node did not rewind`
          return { kind: 'relink', applied, reason }
        }
        // Recorded before the store's first block of this node, so a store with blocks knows its chain.
        if (storeChainId === undefined && nodeChainId !== undefined) storeChainId = await recordChainId(nodeChainId)
        await abis.preload(new Set(normalized.actions.map((a) => a.account)))
        const batch = abis.withSearchTerms(normalized, await creators.creatorsOf(normalized))
        const lib = result.lastIrreversible.blockNum
        pending.push(batch)
        pendingRecords += batch.actions.length + batch.rows.length
        pendingLib = lib
        storeLib = Math.max(storeLib, lib)
        const farBehind = result.head.blockNum - batch.block.num > FAR_BEHIND_BLOCKS
        // Near head each block is durable before it is reported.
        if (!farBehind) await flushAndSettle()
        else if (pending.length >= CATCH_UP_BATCH || pendingRecords >= CATCH_UP_RECORDS) await flush()
        head = { blockNum: batch.block.num, blockId: batch.block.id }
        applied++
        held.push(head)
        while (held.length && held[0].blockNum <= lib) held.shift()
        config.onBlock?.({
          num: head.blockNum,
          id: head.blockId,
          lib,
          head: result.head.blockNum,
          actions: batch.actions.length,
          rowChanges: batch.rows.length,
        })
        if (config.endBlockNum !== undefined && head.blockNum >= config.endBlockNum) break
      }
      await flushAndSettle()
      return { kind: stopped ? 'stopped' : 'done' }
    } finally {
      // On an error the write in flight is still waited for (its failure, if any, is already the
      // error being thrown or secondary to it).
      await writing
      await reader.close()
    }
  }

  return {
    async run() {
      // Consecutive relinks without progress: each waits twice as long as the last, up to maxDelay.
      let attempt = 0
      while (!stopped) {
        const outcome = await session()
        if (outcome.kind !== 'relink') return
        attempt = outcome.applied > 0 ? 1 : attempt + 1
        const delayMs = Math.min(maxDelay, minDelay * 2 ** Math.min(attempt - 1, 16))
        config.onReaderEvent?.({ type: 'reconnecting', attempt, delayMs, reason: outcome.reason })
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delayMs)
          wakeSleep = () => {
            clearTimeout(timer)
            resolve()
          }
        })
        wakeSleep = undefined
      }
    },
    async stop() {
      stopped = true
      wakeSleep?.()
      await closeReader?.()
    },
  }
}
