import { AbiCache, unpackTransaction, type CompiledAbi } from '../antelope/index.ts'
import type { ActionRecord, BlockRecord, Store, TransactionHistory } from '../store/index.ts'
import type { ActionDataDecoder } from './action-traces.ts'
import { assembleLifecycle, keyRecords, type LifecycleFacts } from './assemble.ts'
import { BLOCK_ACTIONS_PAGE, blockReceiverRunners } from './block-actions.ts'
import { isFinal, type FinalLifecycleCache } from './final-cache.ts'
import { addRunners, receiversRunByOthers, type ReceiverRunners } from './row-attribution.ts'
import type { KnownReads, TransactionLifecycle } from './types.ts'

/**
 * What a batch of lifecycles reads: the batch reads of the store (port.ts BatchReader), the position, and the actions
 * of a block by sequence (a block too large to read its receivers whole is read in pages).
 */
export type LifecycleBatchStore = Pick<
  Store,
  | 'position'
  | 'transactionHistories'
  | 'actionsOfTransactions'
  | 'blocksByNums'
  | 'rowChangesOfBlocks'
  | 'actionReceiversOfBlocks'
  | 'abisAt'
  | 'firstSeqFromBlock'
  | 'actionsBySeq'
>

/** One lifecycle's facts before its row changes and decoder are known. */
interface Pending {
  readonly id: string
  readonly history: TransactionHistory
  readonly execution:
    | {
        record: NonNullable<ReturnType<typeof keyRecords>['execution']>
        block: BlockRecord
        actions: readonly ActionRecord[]
      }
    | undefined
  readonly creation: LifecycleFacts['creation']
  readonly abiBlock: number
  readonly accounts: ReadonlySet<string>
}

/**
 * Lifecycles of many transactions in a fixed number of batch reads, whatever their number (a page
 * of search results): the histories and actions, then every block they name, then the row changes
 * and the receivers of the execution blocks (what dbops attribution needs, each block read once
 * however many of the page's transactions it holds) with the ABIs of every (account, block) the
 * page decodes with, each ABI version compiled once (an AbiCache). The lifecycles are the ones
 * `lifecycle(id)` assembles (service.ts): the same facts, read in bulk. A transaction with a
 * cancelation is left to `single` (its canceling action is searched in the canceling block). The
 * receivers of a block of more than `blockActionsPage` actions are read a page at a time instead
 * (block-actions.ts), once per block.
 */
export function createLifecycleBatch(
  store: LifecycleBatchStore,
  single: (id: string) => Promise<TransactionLifecycle | undefined>,
  options: {
    cacheSize?: number
    blockActionsPage?: number
    /** Final lifecycles: served from it without a read, and those assembled here put in it. */
    finalCache?: FinalLifecycleCache
    /** Told of every lifecycle put in the cache (its JSON). */
    onFinal?: (lifecycle: TransactionLifecycle, json: string) => void
  } = {},
) {
  const abis = new AbiCache(options.cacheSize ?? 256)
  const pageSize = options.blockActionsPage ?? BLOCK_ACTIONS_PAGE

  return async function lifecycles(
    ids: readonly string[],
    known: KnownReads = {},
  ): Promise<Map<string, TransactionLifecycle>> {
    const asked = [...new Set(ids)]
    const out = new Map<string, TransactionLifecycle>()
    if (asked.length === 0) return out
    // Final lifecycles come from the cache; one whose execution block is not the block the caller read its actions in
    // is not taken (it cannot happen: a transaction executed irreversibly is never executed again).
    const cached = new Map<string, TransactionLifecycle>()
    const cache = options.finalCache
    if (cache)
      for (const id of asked) {
        const hit = cache.get(id)
        const readIn = known.actions?.get(id)?.[0]?.blockNum
        if (hit && (readIn === undefined || readIn === hit.blockNum)) cached.set(id, hit.lifecycle)
      }
    const distinct = cached.size ? asked.filter((id) => !cached.has(id)) : asked
    if (distinct.length === 0) return cached
    // A lifecycle is final only against a LIB read before its records: read first, never alongside.
    const position = known.position ?? (await store.position())
    const missingActions = known.actions ? distinct.filter((id) => !known.actions!.has(id)) : distinct
    const [histories, readActions, knownBlocks] = await Promise.all([
      store.transactionHistories(distinct),
      store.actionsOfTransactions(missingActions),
      known.blocks,
    ])
    const lib = position?.lib ?? 0
    const actionsOf = (id: string): readonly ActionRecord[] => known.actions?.get(id) ?? readActions.get(id) ?? []

    // The blocks every history names, except those the caller read already.
    const keys = new Map(distinct.map((id) => [id, keyRecords(histories.get(id) ?? { records: [], forkedOut: [] })]))
    const wanted = new Set<number>()
    for (const k of keys.values())
      for (const r of [k.execution, k.creation]) if (r && !knownBlocks?.has(r.blockNum)) wanted.add(r.blockNum)
    const readBlocks = await store.blocksByNums([...wanted])
    const blockOf = (num: number) => knownBlocks?.get(num) ?? readBlocks.get(num)

    const pending: Pending[] = []
    const singles = new Set<string>()
    for (const id of distinct) {
      const history = histories.get(id)
      if (!history || (history.records.length === 0 && history.forkedOut.length === 0)) continue
      const key = keys.get(id)!
      if (key.cancelation) {
        singles.add(id)
        continue
      }
      const executedBlock = key.execution && blockOf(key.execution.blockNum)
      const execution =
        key.execution && executedBlock
          ? {
              record: key.execution,
              block: executedBlock,
              actions: actionsOf(id).filter((a) => a.blockNum === executedBlock.num),
            }
          : undefined
      const creationBlock = key.creation && blockOf(key.creation.blockNum)
      const creation = key.creation && creationBlock ? { record: key.creation, block: creationBlock } : undefined
      const accounts = new Set<string>()
      for (const a of execution?.actions ?? []) accounts.add(a.account)
      for (const a of key.execution?.details?.unreceipted ?? []) accounts.add(a.account)
      const packed = creation?.record.details?.deferred && unpackTransaction(creation.record.details.deferred.packedTrx)
      for (const a of [...(packed?.actions ?? []), ...(packed?.context_free_actions ?? [])]) accounts.add(a.account)
      pending.push({
        id,
        history,
        execution,
        creation,
        abiBlock: execution?.block.num ?? creation?.block.num ?? 0,
        accounts,
      })
    }

    // Row changes of every execution block; the receivers of each in one read, or in pages for a large one (a block
    // without actions has no other receivers).
    const executionBlocks = new Map<number, BlockRecord>()
    for (const p of pending) if (p.execution) executionBlocks.set(p.execution.block.num, p.execution.block)
    const withActions = [...executionBlocks.values()].filter((b) => b.actionCount > 0)
    const small = withActions.filter((b) => b.actionCount <= pageSize).map((b) => b.num)
    const large = withActions.filter((b) => b.actionCount > pageSize)
    const abiRequests = new Map<string, { account: string; blockNum: number }>()
    for (const p of pending)
      for (const account of p.accounts) abiRequests.set(`${account}:${p.abiBlock}`, { account, blockNum: p.abiBlock })
    const requests = [...abiRequests.values()]
    const [rowChanges, receivers, largeRunners, abiAnswers] = await Promise.all([
      store.rowChangesOfBlocks([...executionBlocks.keys()]),
      store.actionReceiversOfBlocks(small),
      // One large block after another: one page of actions in memory at a time.
      (async () => {
        const byBlock = new Map<number, ReceiverRunners>()
        for (const b of large) byBlock.set(b.num, await blockReceiverRunners(store, b, pageSize))
        return byBlock
      })(),
      store.abisAt(requests),
      Promise.all([...singles].map(async (id) => [id, await single(id)] as const)).then((found) => {
        for (const [id, lifecycle] of found) if (lifecycle) out.set(id, lifecycle)
      }),
    ])
    const compiled = new Map<string, CompiledAbi | undefined>()
    requests.forEach((r, i) => {
      const stored = abiAnswers[i]
      const result = stored ? abis.fromBinary(stored.abi) : undefined
      compiled.set(`${r.account}:${r.blockNum}`, result?.ok ? result.value : undefined)
    })

    const runners = new Map<number, ReceiverRunners>(largeRunners)
    for (const [num, list] of receivers) runners.set(num, addRunners(new Map(), list))

    const assembled = new Map<string, TransactionLifecycle>()
    for (const p of pending) {
      const e = p.execution
      const execution = e && {
        ...e,
        rowChanges: rowChanges.get(e.block.num) ?? [],
        otherReceivers: receiversRunByOthers(runners.get(e.block.num) ?? new Map(), p.id),
      }
      const decode = decoderOf(p.accounts, (account) => compiled.get(`${account}:${p.abiBlock}`))
      const lifecycle = assembleLifecycle({
        id: p.id,
        history: p.history,
        lib,
        execution,
        creation: p.creation,
        cancelation: undefined,
        decode,
      })
      if (!lifecycle) continue
      assembled.set(p.id, lifecycle)
      if (cache && isFinal(lifecycle, p.history, lib)) options.onFinal?.(lifecycle, cache.put(lifecycle).json)
    }
    // In the order asked, as lifecycles(ids) answers.
    const ordered = new Map<string, TransactionLifecycle>()
    for (const id of asked) {
      const found = cached.get(id) ?? assembled.get(id) ?? out.get(id)
      if (found) ordered.set(id, found)
    }
    return ordered
  }
}

/**
 * A decoder of the accounts one lifecycle prepared its ABIs for (decoder.ts's, from ABIs already
 * compiled). An input action is rendered twice (its trace and the signed transaction) from the same
 * bytes: the second time reuses the first decoding.
 */
function decoderOf(
  accounts: ReadonlySet<string>,
  abiOf: (account: string) => CompiledAbi | undefined,
): ActionDataDecoder {
  const seen = new WeakMap<Uint8Array, { account: string; name: string; value: unknown }>()
  return (account, name, data) => {
    if (!accounts.has(account)) return undefined
    const known = seen.get(data)
    if (known && known.account === account && known.name === name) return known.value
    const abi = abiOf(account)
    const type = abi?.actionType(name)
    const decoded = abi && type ? abi.decode(type, data) : undefined
    const value = decoded?.ok ? decoded.value : undefined
    seen.set(data, { account, name, value })
    return value
  }
}
