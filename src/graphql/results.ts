import { addRunners, type ReceiverRunners } from '../lifecycle/index.ts'
import type { SearchRow } from '../search/index.ts'
import type { BlockRecord, TransactionRecord } from '../store/index.ts'
import type { GraphqlServices } from './context.ts'
import { blockHeader, TransactionTraceNode, type BlockRows, type TraceDecoder } from './trace-model.ts'

/** One `SearchTransactionForwardResponse` (the backward one is the same without `undo`). */
export interface SearchResult {
  readonly undo: boolean
  readonly cursor: string
  readonly isIrreversible: boolean
  readonly irreversibleBlockNum: number
  readonly block: ReturnType<typeof blockHeader>
  readonly trace: TransactionTraceNode | null
}

export function searchResult(args: {
  undo: boolean
  cursor: string
  lib: number
  block: BlockRecord
  trace: TransactionTraceNode | null
}): SearchResult {
  return {
    undo: args.undo,
    cursor: args.cursor,
    isIrreversible: args.block.num <= args.lib,
    irreversibleBlockNum: args.lib,
    block: blockHeader(args.block),
    trace: args.trace,
  }
}

/** Which transaction ran each receiver of a block (null once several did): row attribution's input. */
export const receiverRunners = (actions: Iterable<{ trxId: string; receiver: string }>): ReceiverRunners =>
  addRunners(new Map(), actions)

/** A block's rows for dbOps, read from the store once per block and operation. */
export function storedBlockRows(services: GraphqlServices): (blockNum: number) => Promise<BlockRows> {
  const cache = new Map<number, Promise<BlockRows>>()
  return (blockNum) => {
    let found = cache.get(blockNum)
    if (!found) {
      found = Promise.all([
        services.store.rowChangesOfBlocks([blockNum]),
        services.store.actionReceiversOfBlocks([blockNum]),
      ]).then(([changes, receivers]) => ({
        changes: changes.get(blockNum) ?? [],
        runners: receiverRunners(receivers.get(blockNum) ?? []),
      }))
      cache.set(blockNum, found)
    }
    return found
  }
}

/** Decoders of the blocks of a page (one batch read): each for the accounts and receivers its rows name. */
function blockDecoders(services: GraphqlServices, rows: readonly SearchRow[]): Promise<Map<number, TraceDecoder>> {
  const accounts = new Map<number, Set<string>>()
  for (const row of rows) {
    const set = accounts.get(row.blockNum) ?? accounts.set(row.blockNum, new Set()).get(row.blockNum)!
    for (const a of row.execution) set.add(a.account).add(a.receiver)
  }
  return services.blockDecoders(accounts)
}

/** The transaction records of a page's rows (the record of the block each row is in). */
async function rowRecords(
  services: GraphqlServices,
  rows: readonly SearchRow[],
): Promise<Map<string, TransactionRecord>> {
  const histories = await services.store.transactionHistories([...new Set(rows.map((r) => r.trxId))])
  const out = new Map<string, TransactionRecord>()
  for (const row of rows) {
    const record = histories.get(row.trxId)?.records.find((r) => r.blockNum === row.blockNum && r.blockIndex >= 0)
    if (record) out.set(`${row.trxId}:${row.blockNum}`, record)
  }
  return out
}

/** The GraphQL results of a search page's rows, in the page's order. */
export async function pageResults(
  services: GraphqlServices,
  rows: readonly SearchRow[],
  lib: number,
): Promise<SearchResult[]> {
  if (rows.length === 0) return []
  const [decoders, records] = await Promise.all([blockDecoders(services, rows), rowRecords(services, rows)])
  const blockRows = storedBlockRows(services)
  return rows.map((row) => {
    const transaction = records.get(`${row.trxId}:${row.blockNum}`)
    // The page was read consistent: a record missing now is a bug, not a fork.
    if (!transaction) throw new Error(`no record of the matched transaction ${row.trxId} at block ${row.blockNum}`)
    const trace = new TransactionTraceNode({
      block: row.block,
      transaction,
      execution: row.execution,
      matching: new Set(row.actionIdx),
      decode: decoders.get(row.blockNum)!,
      rows: () => blockRows(row.blockNum),
    })
    return searchResult({ undo: false, cursor: row.cursor, lib, block: row.block, trace })
  })
}
