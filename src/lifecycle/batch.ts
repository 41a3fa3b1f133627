import { AbiCache, unpackTransaction, type CompiledAbi } from '../antelope/index.ts'
import type { ActionRecord, BlockRecord, Store, TransactionHistory } from '../store/index.ts'
import type { ActionDataDecoder } from './action-traces.ts'
import { assembleLifecycle, keyRecords, type LifecycleFacts } from './assemble.ts'
import type { KnownReads, TransactionLifecycle } from './types.ts'

/** What a batch of lifecycles reads: the batch reads of the store (port.ts BatchReader) and the position. */
export type LifecycleBatchStore = Pick<
  Store,
  | 'position'
  | 'transactionHistories'
  | 'actionsOfTransactions'
  | 'blocksByNums'
  | 'rowChangesOfBlocks'
  | 'actionReceiversOfBlocks'
  | 'abisAt'
>

/** Blocks with more actions than this are not read whole to attribute row changes (dbops then stay empty). */
export const MAX_BLOCK_ACTIONS_READ = 5_000

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
 * cancelation is left to `single` (its canceling action is searched in the canceling block).
 */
export function createLifecycleBatch(
  store: LifecycleBatchStore,
  single: (id: string) => Promise<TransactionLifecycle | undefined>,
  cacheSize = 256,
) {
  const abis = new AbiCache(cacheSize)

  return async function lifecycles(
    ids: readonly string[],
    known: KnownReads = {},
  ): Promise<Map<string, TransactionLifecycle>> {
    const distinct = [...new Set(ids)]
    const out = new Map<string, TransactionLifecycle>()
    if (distinct.length === 0) return out
    const missingActions = known.actions ? distinct.filter((id) => !known.actions!.has(id)) : distinct
    const [position, histories, readActions, knownBlocks] = await Promise.all([
      known.position ?? store.position(),
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

    // Row changes of every execution block not too large to read whole (one without actions has no other receivers).
    const executionBlocks = new Map<number, BlockRecord>()
    for (const p of pending)
      if (p.execution && p.execution.block.actionCount <= MAX_BLOCK_ACTIONS_READ)
        executionBlocks.set(p.execution.block.num, p.execution.block)
    const withActions = [...executionBlocks.values()].filter((b) => b.actionCount > 0).map((b) => b.num)
    const abiRequests = new Map<string, { account: string; blockNum: number }>()
    for (const p of pending)
      for (const account of p.accounts) abiRequests.set(`${account}:${p.abiBlock}`, { account, blockNum: p.abiBlock })
    const requests = [...abiRequests.values()]
    const [rowChanges, receivers, abiAnswers] = await Promise.all([
      store.rowChangesOfBlocks([...executionBlocks.keys()]),
      store.actionReceiversOfBlocks(withActions),
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

    const assembled = new Map<string, TransactionLifecycle>()
    for (const p of pending) {
      const e = p.execution
      const readable = e !== undefined && e.block.actionCount <= MAX_BLOCK_ACTIONS_READ
      const otherReceivers = new Set<string>()
      if (readable)
        for (const a of receivers.get(e.block.num) ?? []) if (a.trxId !== p.id) otherReceivers.add(a.receiver)
      const execution = e && { ...e, rowChanges: readable ? (rowChanges.get(e.block.num) ?? []) : [], otherReceivers }
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
      if (lifecycle) assembled.set(p.id, lifecycle)
    }
    // In the order asked, as lifecycles(ids) answers.
    const ordered = new Map<string, TransactionLifecycle>()
    for (const id of distinct) {
      const found = assembled.get(id) ?? out.get(id)
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
