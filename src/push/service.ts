import { AbiCache, AntlerError, formatNodeosTime, formatNodeosTimeSec } from '../antelope/index.ts'
import type { BlockReader, BlockRecord, StateReader, StorePosition, TransactionRecord } from '../store/index.ts'
import { isDuplicateRefusal, postToChain } from './chain-client.ts'
import { PushTimeoutError, PushTransactionExpiredError, PushTransactionFailedError } from './errors.ts'
import { formatPushGuarantee, type PushGuarantee } from './guarantee.ts'
import { readPackedTransaction, type PackedTransactionFacts } from './packed.ts'
import { buildProcessed, transactionStatusName } from './processed.ts'

/** A guaranteed push's answer: the block that satisfied the guarantee and the transaction's trace in it. */
export interface PushResult {
  transaction_id: string
  block_id: string
  block_num: number
  /** The trace in nodeos's push_transaction `processed` shape, built from the store (see processed.ts). */
  processed: Record<string, unknown>
}

/** push_transaction with a delivery guarantee. */
export interface PushService {
  /**
   * Validates and forwards the packed transaction, then answers once the block satisfying the
   * guarantee is in the store. Rejects with `push_invalid_transaction_error`, `push_chain_error`
   * (the chain's status and body), `push_chain_unavailable_error`, `push_transaction_expired_error`,
   * `push_transaction_failed_error`, `push_timeout_error`, or the signal's reason when aborted.
   */
  push(args: { body: unknown; guarantee: PushGuarantee; signal?: AbortSignal }): Promise<PushResult>
}

/** The store reads a push needs. */
export type PushStore = Pick<BlockReader, 'transactionHistory' | 'blockByNum' | 'actionsOfTransaction'> &
  Pick<StateReader, 'abi'> & { position(): Promise<StorePosition | undefined> }

/** What the push service is built from. */
export interface PushServiceDeps {
  /** Base URL of the chain's /v1/chain API (nodeos or the devchain). */
  chainApi: string
  store: PushStore
  log?: { warn(obj: object, msg: string): void }
  /** Wall clock, milliseconds (time limits and re-push intervals). */
  now?: () => number
  /** How long a transaction may be in no stored block before it is pushed again (default 8000). */
  repushIntervalMs?: number
  /** How often the store is read while waiting (default 50). */
  pollIntervalMs?: number
  /** Time limits per guarantee (defaults 120_000, 180_000, 480_000: dfuse's 2, 3 and 8 minutes). */
  timeoutsMs?: { inBlock: number; handoffs: number; irreversible: number }
}

const DEFAULT_TIMEOUTS = { inBlock: 120_000, handoffs: 180_000, irreversible: 480_000 }

/** A stored block holding the transaction's executed (or soft-failed) record, read consistently. */
interface Inclusion {
  readonly record: TransactionRecord
  readonly block: BlockRecord
}

/** Where the transaction stands in the store. */
type Sighting =
  | { kind: 'absent' }
  | { kind: 'pending-execution' }
  | { kind: 'ended'; record: TransactionRecord }
  | { kind: 'included'; inclusion: Inclusion }

/**
 * The push service. Invariants of one push's wait:
 * - it answers only with a block that is, at the last read before the answer, the stored block at
 *   its height and holds the transaction (read before and after everything the answer is built
 *   from, so a fork written meanwhile is seen and the wait goes on);
 * - the transaction is pushed again when it has been in no stored block for `repushIntervalMs`
 *   (the clock restarts whenever it is seen in one); `tx_duplicate` then means the chain still has it;
 * - a refusal of a re-push, or an expiration passed by the store's head block time, fails the push
 *   only once the store holds no inclusion of it (a refusal waits until the store reaches the
 *   chain head of the moment it was refused, as the transaction may sit in a block not yet stored).
 */
export function createPushService(deps: PushServiceDeps): PushService {
  const now = deps.now ?? Date.now
  const repushIntervalMs = deps.repushIntervalMs ?? 8000
  const pollIntervalMs = deps.pollIntervalMs ?? 50
  const timeouts = deps.timeoutsMs ?? DEFAULT_TIMEOUTS
  const abis = new AbiCache(64)
  const { store } = deps
  const pushUrl = `${deps.chainApi.replace(/\/+$/, '')}/v1/chain/push_transaction`
  const infoUrl = `${deps.chainApi.replace(/\/+$/, '')}/v1/chain/get_info`

  /** The transaction's latest record and, when it executed, its block; consistent per the invariant above. */
  async function sight(id: string): Promise<Sighting> {
    const { records } = await store.transactionHistory(id)
    const record = records.at(-1)
    if (!record) return { kind: 'absent' }
    if (record.status === 3) return { kind: 'pending-execution' }
    if (record.status > 1) return { kind: 'ended', record }
    const block = await store.blockByNum(record.blockNum)
    return block ? { kind: 'included', inclusion: { record, block } } : { kind: 'absent' }
  }

  /** Whether the inclusion is still what the store holds: the same block at its height, the same record. */
  async function stillHeld(inclusion: Inclusion): Promise<boolean> {
    const { records } = await store.transactionHistory(inclusion.record.id)
    const record = records.at(-1)
    if (!record || record.blockNum !== inclusion.record.blockNum || record.blockIndex !== inclusion.record.blockIndex)
      return false
    return (await store.blockByNum(inclusion.block.num))?.id === inclusion.block.id
  }

  /**
   * Blocks stored after `from`, linked to it, as far as needed for `count` distinct producers other
   * than `from`'s (dfuse's handoffs: the block is still in the longest chain after N producers).
   * `cache` holds what earlier polls read and verified; it is dropped when its top was forked out.
   */
  async function handoffsReached(from: BlockRecord, count: number, cache: BlockRecord[]): Promise<boolean> {
    const top = cache.at(-1)
    if (top && (cache[0].previous !== from.id || (await store.blockByNum(top.num))?.id !== top.id)) cache.length = 0
    const producers = new Set(cache.map((b) => b.producer).filter((p) => p !== from.producer))
    let previous = cache.at(-1) ?? from
    while (producers.size < count) {
      const next = await store.blockByNum(previous.num + 1)
      if (!next || next.previous !== previous.id) return false
      cache.push(next)
      if (next.producer !== from.producer) producers.add(next.producer)
      previous = next
    }
    return true
  }

  async function satisfied(guarantee: PushGuarantee, inclusion: Inclusion, cache: BlockRecord[]): Promise<boolean> {
    switch (guarantee.kind) {
      case 'in-block':
        return true
      case 'handoffs':
        return handoffsReached(inclusion.block, guarantee.count, cache)
      case 'irreversible':
        return ((await store.position())?.lib ?? 0) >= inclusion.block.num
    }
  }

  async function chainHeadNum(signal: AbortSignal | undefined): Promise<number | undefined> {
    try {
      const info = (await postToChain(infoUrl, {}, signal)) as { head_block_num?: unknown }
      return typeof info.head_block_num === 'number' ? info.head_block_num : undefined
    } catch (error) {
      if (signal?.aborted) throw error
      return undefined
    }
  }

  /** The expiration error when the store's head block is at or past the transaction's expiration (chain time). */
  async function expiredByStore(trx: PackedTransactionFacts): Promise<AntlerError | undefined> {
    const position = await store.position()
    const head = position && (await store.blockByNum(position.head.blockNum))
    if (!head || head.timestampMs < trx.expirationSec * 1000) return undefined
    return PushTransactionExpiredError({
      transaction_id: trx.id,
      expiration: formatNodeosTimeSec(trx.expirationSec),
      head_block_num: head.num,
      head_block_time: formatNodeosTime(head.timestampMs),
    })
  }

  /** Pushes again; a refusal other than `tx_duplicate` is returned with the chain head it must be judged against. */
  async function repush(
    body: unknown,
    trx: PackedTransactionFacts,
    signal: AbortSignal | undefined,
  ): Promise<{ error: AntlerError; chainHead: number } | undefined> {
    try {
      await postToChain(pushUrl, body, signal)
      return undefined
    } catch (error) {
      if (!(error instanceof AntlerError)) throw error
      if (isDuplicateRefusal(error)) return undefined
      if (error.code !== 'push_chain_error') {
        deps.log?.warn({ transaction_id: trx.id, error: error.message }, 'push re-push did not reach the chain')
        return undefined
      }
      // Without the chain head, the refusal is judged against the store's head: the next poll.
      return { error, chainHead: (await chainHeadNum(signal)) ?? 0 }
    }
  }

  return {
    async push({ body, guarantee, signal }) {
      const trx = readPackedTransaction(body)
      signal?.throwIfAborted()
      const started = now()
      const limit =
        guarantee.kind === 'in-block'
          ? timeouts.inBlock
          : guarantee.kind === 'handoffs'
            ? timeouts.handoffs
            : timeouts.irreversible
      const answer = (await postToChain(pushUrl, body, signal)) as { transaction_id?: unknown }
      if (answer?.transaction_id !== trx.id)
        deps.log?.warn(
          { transaction_id: trx.id, chain_transaction_id: answer?.transaction_id },
          'push chain answered another transaction id',
        )
      let lastSeenOrPushed = now()
      // A re-push the chain refused, held until the store reaches the chain head of that moment.
      let refusal: { error: AntlerError; chainHead: number } | undefined
      const handoffCache: BlockRecord[] = []
      for (;;) {
        signal?.throwIfAborted()
        const sighting = await sight(trx.id)
        if (sighting.kind === 'ended') {
          const { record } = sighting
          throw PushTransactionFailedError({
            transaction_id: trx.id,
            status: transactionStatusName(record.status),
            block_num: record.blockNum,
          })
        }
        if (sighting.kind === 'included' || sighting.kind === 'pending-execution') {
          refusal = undefined
          lastSeenOrPushed = now()
        }
        if (sighting.kind === 'included') {
          const { inclusion } = sighting
          if (await satisfied(guarantee, inclusion, handoffCache)) {
            const processed = await buildProcessed({
              store,
              abis,
              record: inclusion.record,
              block: inclusion.block,
              contextFreeActionCount: trx.contextFreeActionCount,
            })
            if (await stillHeld(inclusion))
              return { transaction_id: trx.id, block_id: inclusion.block.id, block_num: inclusion.block.num, processed }
          }
        }
        if (sighting.kind === 'absent') {
          if (refusal && ((await store.position())?.head.blockNum ?? 0) >= refusal.chainHead) throw refusal.error
          const expired = await expiredByStore(trx)
          if (expired) throw expired
          if (now() - lastSeenOrPushed >= repushIntervalMs) {
            refusal = await repush(body, trx, signal)
            lastSeenOrPushed = now()
          }
        }
        const waited = now() - started
        if (waited >= limit)
          throw PushTimeoutError({
            transaction_id: trx.id,
            guarantee: formatPushGuarantee(guarantee),
            waited_ms: waited,
          })
        await sleep(Math.min(pollIntervalMs, limit - waited), signal)
      }
    },
  }
}

/** Waits `ms`, or less when `signal` aborts (the caller then sees `signal.aborted`). */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, Math.max(0, ms))
    signal?.addEventListener('abort', done, { once: true })
  })
}
