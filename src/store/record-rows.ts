import { authText, detailsText, pkText, ramText, sequenceRanges, traceText, trxIdKey } from './row-mapping.ts'
import type { BlockBatch } from './types.ts'

/** How a driver binds the values SQL types differ on (better-sqlite3 takes no booleans; pg wants text for NUMERIC). */
export interface ValueBinding {
  bool(value: boolean): unknown
  bytes(value: Uint8Array): unknown
  decimal(value: bigint): unknown
}

type Row = readonly unknown[]

/**
 * The rows a block writes into `blocks`, `transactions`, `actions` and `row_versions`, each a tuple in its table's
 * column order (both schemas order them alike). A row version's tuple stops at its value: valid_to (NULL: current)
 * and first_block (the closed version's) are the adapter's to add.
 */
export interface BlockRows {
  readonly block: Row
  readonly transactions: readonly Row[]
  readonly actions: readonly Row[]
  /** code, tbl, scope, pk, block_num, payer, value (null: removed). */
  readonly rowVersions: readonly Row[]
}

/**
 * The rows of `batch`, values bound by `bind`. Each tuple is one array literal (no part-arrays spread into it): ingest
 * builds one per action, transaction and row change.
 */
export function blockRows(batch: BlockBatch, bind: ValueBinding): BlockRows {
  const { block: b } = batch
  const ranges = sequenceRanges(batch)
  const counts = [b.transactionCount, b.actionCount, ranges.blockFirstSeq]
  const trxIndex = new Map(batch.transactions.map((t) => [t.id, t.blockIndex]))
  return {
    block: [b.num, b.id, b.previous, b.timestampMs, b.producer, ...counts, detailsText(b.header)],
    transactions: batch.transactions.map((t) => {
      const range = ranges.trx.get(t.id)
      return [
        t.blockNum,
        t.blockIndex,
        t.id,
        trxIdKey(t.id),
        t.status,
        t.cpuUsageUs,
        t.netUsageWords,
        bind.bool(t.scheduled),
        range?.firstSeq ?? null,
        range?.count ?? 0,
        detailsText(t.details),
      ]
    }),
    actions: batch.actions.map((a) => [
      a.globalSequence,
      a.blockNum,
      trxIndex.get(a.trxId) ?? -1,
      a.actionOrdinal,
      a.creatorActionOrdinal,
      a.receiver,
      a.account,
      a.name,
      authText(a.authorization),
      bind.bytes(a.data),
      bind.bytes(a.returnValue),
      a.actDigest,
      bind.decimal(a.recvSequence),
      ramText(a.ramDeltas),
      traceText(a.trace),
    ]),
    rowVersions: batch.rows.map((r) => {
      const value = r.value === undefined ? null : bind.bytes(r.value)
      return [r.code, r.table, r.scope, pkText(r.primaryKey), b.num, r.payer, value]
    }),
  }
}
