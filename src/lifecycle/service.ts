import { unpackTransaction } from '../antelope/index.ts'
import type { ActionRecord, Store, TransactionRecord } from '../store/index.ts'
import { createDecoderSource } from './decoder.ts'
import { assembleLifecycle, keyRecords, type RecordInBlock } from './assemble.ts'
import { createLifecycleBatch, type LifecycleBatchStore } from './batch.ts'
import { BLOCK_ACTIONS_PAGE, blockReceiverRunners, findBlockAction } from './block-actions.ts'
import { FINAL_CACHE_LIMITS, FinalLifecycleCache, isFinal, type FinalCacheLimits } from './final-cache.ts'
import { receiversRunByOthers } from './row-attribution.ts'
import type { LifecycleService, TransactionLifecycle } from './types.ts'

/**
 * What the service reads: block and transaction records, ABIs, the position; for many lifecycles at once, the batch
 * reads.
 */
export type LifecycleStore = Pick<
  Store,
  | 'position'
  | 'transactionHistory'
  | 'actionsOfTransaction'
  | 'blockByNum'
  | 'rowChanges'
  | 'firstSeqFromBlock'
  | 'actionsBySeq'
  | 'abi'
> &
  LifecycleBatchStore

/**
 * Lifecycles assembled from the store. Reads are not one snapshot: the position (LIB) is read first,
 * so a block that became irreversible meanwhile is at worst reported reversible. A block's actions
 * (for dbops attribution and the canceling action) are read `blockActionsPage` at a time, whatever
 * the block's size.
 */
export function createLifecycleService(args: {
  store: LifecycleStore
  blockActionsPage?: number
  /** The bounds of the cache of final lifecycles (final-cache.ts); default FINAL_CACHE_LIMITS, `false` for none. */
  finalCache?: FinalCacheLimits | false
}): LifecycleService {
  const { store } = args
  const pageSize = args.blockActionsPage ?? BLOCK_ACTIONS_PAGE
  const decoderAt = createDecoderSource(store)
  const cache = args.finalCache === false ? undefined : new FinalLifecycleCache(args.finalCache ?? FINAL_CACHE_LIMITS)
  // The JSON of every cached lifecycle object, for answers built from it (json()); gone with the object.
  const jsonOf = new WeakMap<TransactionLifecycle, string>()
  const onFinal = (lifecycle: TransactionLifecycle, json: string) => jsonOf.set(lifecycle, json)

  async function inBlock(record: TransactionRecord | undefined): Promise<RecordInBlock | undefined> {
    if (!record) return undefined
    const block = await store.blockByNum(record.blockNum)
    return block && { record, block }
  }

  async function lifecycle(id: string): Promise<TransactionLifecycle | undefined> {
    const hit = cache?.get(id)
    if (hit) return hit.lifecycle
    const lib = (await store.position())?.lib ?? 0
    const history = await store.transactionHistory(id)
    if (history.records.length === 0 && history.forkedOut.length === 0) return undefined
    const key = keyRecords(history)

    let execution: Parameters<typeof assembleLifecycle>[0]['execution']
    const executed = await inBlock(key.execution)
    if (executed) {
      const actions = (await store.actionsOfTransaction(id)).filter((a) => a.blockNum === executed.block.num)
      const [rowChanges, runners] = await Promise.all([
        store.rowChanges(executed.block.num),
        blockReceiverRunners(store, executed.block, pageSize),
      ])
      const otherReceivers = receiversRunByOthers(runners, id)
      execution = { ...executed, actions, rowChanges, otherReceivers }
    }
    const creation = await inBlock(key.creation)
    let cancelation: Parameters<typeof assembleLifecycle>[0]['cancelation']
    const canceled = await inBlock(key.cancelation)
    if (canceled) {
      // The canceling action: an eosio::canceldelay of the block naming this id (its data ends with the id).
      const cancels = (a: ActionRecord) =>
        a.receiver === 'eosio' &&
        a.account === 'eosio' &&
        a.name === 'canceldelay' &&
        Buffer.from(a.data).toString('hex').endsWith(id)
      const by = await findBlockAction(store, canceled.block, cancels, pageSize)
      const byActions = by ? await store.actionsOfTransaction(by.trxId) : []
      cancelation = {
        ...canceled,
        byTrxId: by?.trxId,
        byActionIdx: by
          ? Math.max(
              0,
              byActions.findIndex((a) => a.globalSequence === by.globalSequence),
            )
          : 0,
      }
    }

    const accounts = new Set<string>()
    for (const a of execution?.actions ?? []) accounts.add(a.account)
    for (const a of key.execution?.details?.unreceipted ?? []) accounts.add(a.account)
    const packed = creation?.record.details?.deferred && unpackTransaction(creation.record.details.deferred.packedTrx)
    for (const a of [...(packed?.actions ?? []), ...(packed?.context_free_actions ?? [])]) accounts.add(a.account)
    const decode = await decoderAt(execution?.block.num ?? creation?.block.num ?? 0, accounts)
    const assembled = assembleLifecycle({ id, history, lib, execution, creation, cancelation, decode })
    if (assembled && cache && isFinal(assembled, history, lib)) onFinal(assembled, cache.put(assembled).json)
    return assembled
  }

  return {
    lifecycle,
    lifecycles: createLifecycleBatch(store, lifecycle, { blockActionsPage: pageSize, finalCache: cache, onFinal }),
    json: (lifecycle) => jsonOf.get(lifecycle) ?? JSON.stringify(lifecycle),
    isFinal: (lifecycle) => jsonOf.has(lifecycle),
    finalCache: cache,
  }
}
