import type { BlockRef } from '../antelope/index.ts'
import { createShipReader, type ShipReaderEvent } from '../ship/index.ts'
import type { BlockBatch, BlockReader, StateReader, StoreWriter } from '../store/index.ts'
import { AbiTracker } from './abi-tracker.ts'
import { CreatorTracker } from './creators.ts'
import { normalizeBlock } from './normalize.ts'

export interface IndexerConfig {
  readonly shipUrl: string
  readonly store: StoreWriter & Pick<StateReader, 'abi'> & Pick<BlockReader, 'transactionHistory'>
  /** First block for an empty store (default 1). */
  readonly startBlockNum?: number
  /** Stop after applying this block (default: follow the chain forever). */
  readonly endBlockNum?: number
  readonly maxMessagesInFlight?: number
  readonly reconnect?: { readonly minDelayMs?: number; readonly maxDelayMs?: number; readonly maxAttempts?: number }
  readonly onBlock?: (block: { num: number; id: string; lib: number; head: number; actions: number }) => void
  readonly onFork?: (fork: { blockNum: number; undone: number }) => void
  readonly onReaderEvent?: (event: ShipReaderEvent) => void
}

/** Blocks behind head from which the indexer writes several blocks per transaction. */
const FAR_BEHIND_BLOCKS = 100
/**
 * Blocks per transaction while far behind. A batch's records stay alive until it is written:
 * at 100 blocks they outgrew Node's young generation and were copied by every scavenge (15–30 %
 * more CPU per block); at 50 they fit, and the commit is still a small part of a block's cost.
 */
export const CATCH_UP_BATCH = 50

export interface Indexer {
  /** Runs until `endBlockNum`, `stop()`, or an error that retrying cannot fix (thrown). */
  run(): Promise<void>
  stop(): Promise<void>
}

/**
 * Follows a SHiP feed into the store, block by block, each in one atomic write. A block whose
 * number is at or below the store's head is a fork: everything from it up is undone first. A
 * block that still does not link means the feed skipped a fork the store has not seen: the
 * session restarts with the store's reversible blocks as `have_positions`, so the server rewinds.
 */
export function createIndexer(config: IndexerConfig): Indexer {
  let stopped = false
  let closeReader: (() => Promise<void>) | undefined
  const abis = new AbiTracker(async (account) => (await config.store.abi({ account, blockNum: Number.MAX_SAFE_INTEGER }))?.abi)
  const creators = new CreatorTracker((trxId) => config.store.transactionHistory(trxId))

  async function session(): Promise<'done' | 'relink' | 'stopped'> {
    const { store } = config
    const position = await store.position()
    // Positions above LIB, kept in step with the store, for have_positions on every (re)connect.
    const held: BlockRef[] = await store.reversibleBlocks()
    let head = position?.head
    const reader = createShipReader({
      url: config.shipUrl,
      startBlockNum: head ? head.blockNum + 1 : (config.startBlockNum ?? 1),
      endBlockNum: config.endBlockNum === undefined ? undefined : config.endBlockNum + 1,
      maxMessagesInFlight: config.maxMessagesInFlight ?? 20,
      reconnect: config.reconnect,
      havePositions: () => held,
      resumeFrom: () => (head ? head.blockNum + 1 : (config.startBlockNum ?? 1)),
      onEvent: config.onReaderEvent,
    })
    closeReader = () => reader.close()
    // Blocks normalized but not yet written: far below head they are written in batches, and a
    // batch is written while the next one is read and normalized (one write in flight at most).
    const pending: BlockBatch[] = []
    let pendingLib = 0
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
        if (!thisBlock) continue
        if (head && thisBlock.blockNum <= head.blockNum) {
          await flushAndSettle()
          await store.undoFrom(thisBlock.blockNum)
          abis.reset()
          creators.reset()
          config.onFork?.({ blockNum: thisBlock.blockNum, undone: head.blockNum - thisBlock.blockNum + 1 })
          while (held.length && held[held.length - 1].blockNum >= thisBlock.blockNum) held.pop()
          head = (await store.position())?.head
        }
        const normalized = normalizeBlock(result)
        if (head && (normalized.block.num !== head.blockNum + 1 || normalized.block.previous !== head.blockId)) {
          await flushAndSettle()
          return 'relink'
        }
        await abis.preload(new Set(normalized.actions.map((a) => a.account)))
        const batch = abis.withSearchTerms(normalized, await creators.creatorsOf(normalized))
        const lib = result.lastIrreversible.blockNum
        pending.push(batch)
        pendingLib = lib
        const farBehind = result.head.blockNum - batch.block.num > FAR_BEHIND_BLOCKS
        // Near head each block is durable before it is reported.
        if (!farBehind) await flushAndSettle()
        else if (pending.length >= CATCH_UP_BATCH) await flush()
        head = { blockNum: batch.block.num, blockId: batch.block.id }
        held.push(head)
        while (held.length && held[0].blockNum <= lib) held.shift()
        config.onBlock?.({ num: head.blockNum, id: head.blockId, lib, head: result.head.blockNum, actions: batch.actions.length })
        if (config.endBlockNum !== undefined && head.blockNum >= config.endBlockNum) break
      }
      await flushAndSettle()
      return stopped ? 'stopped' : 'done'
    } finally {
      // On an error the write in flight is still waited for (its failure, if any, is already the
      // error being thrown or secondary to it).
      await writing
      await reader.close()
    }
  }

  return {
    async run() {
      while (!stopped) {
        const outcome = await session()
        if (outcome !== 'relink') return
      }
    },
    async stop() {
      stopped = true
      await closeReader?.()
    },
  }
}
