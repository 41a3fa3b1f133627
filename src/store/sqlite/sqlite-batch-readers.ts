import type Database from 'better-sqlite3'
import type { BatchReader, ExecutionActions } from '../port.ts'
import { blocksByNum, forkedOutFromRow, rowChangesByBlock } from '../batch-answers.ts'
import { TRX_ID_OF_ACTION, actionFromRow, transactionFromRow, trxIdKey, u8 } from '../row-mapping.ts'
import { LATEST_TRANSACTION_RECORD, TRANSACTION_RECORDS } from '../common-sql.ts'
import type { ActionRecord, TransactionHistory } from '../types.ts'

type DbRow = Record<string, unknown>

/** Numbers as one JSON array parameter (`json_each`), so every statement has one text, prepared once. */
const list = (xs: readonly unknown[]) => JSON.stringify(xs)

/**
 * The batch reads (port.ts BatchReader) on SQLite. Statements run in this process, so a batch costs
 * no round trip: list reads are one statement over a JSON array, per-id reads loop over prepared
 * statements (the same probes the single reads make).
 */
export function createSqliteBatchReaders(db: Database.Database): BatchReader {
  const s = {
    records: db.prepare(TRANSACTION_RECORDS),
    forkedOut: db.prepare(
      'SELECT block_num, block_id FROM forked_transactions WHERE id = ? ORDER BY block_num, block_id',
    ),
    latest: db.prepare(LATEST_TRANSACTION_RECORD),
    actionsInRange: db.prepare('SELECT * FROM actions WHERE global_seq >= ? AND global_seq < ? ORDER BY global_seq'),
    // The transaction holding an action, by the action's place (no id lookup).
    execution: db.prepare(
      'SELECT t.* FROM actions a JOIN transactions t ON t.block_num = a.block_num AND t.block_index = a.trx_index WHERE a.global_seq = ?',
    ),
    blocks: db.prepare('SELECT * FROM blocks WHERE num IN (SELECT value FROM json_each(?))'),
    // common-sql.ts ROW_CHANGES_OF_BLOCK for a list of blocks, in its order within each block.
    rowChanges:
      db.prepare(`SELECT n.block_num AS at, n.code, n.tbl, n.scope, n.pk, n.payer, n.value, o.payer AS old_payer, o.value AS old_value, o.block_num AS old_block
      FROM row_versions n LEFT JOIN row_versions o ON o.code = n.code AND o.tbl = n.tbl AND o.scope = n.scope AND o.pk = n.pk
        AND o.block_num = (SELECT max(p.block_num) FROM row_versions p WHERE p.code = n.code AND p.tbl = n.tbl AND p.scope = n.scope AND p.pk = n.pk AND p.block_num < n.block_num)
      WHERE n.block_num IN (SELECT value FROM json_each(?)) ORDER BY n.block_num, n.code, n.tbl, n.scope, n.pk`),
    // A block's actions are the global sequences from its first_seq, action_count of them.
    receivers: db.prepare(`SELECT a.block_num, a.receiver, ${TRX_ID_OF_ACTION} FROM actions a
      WHERE a.global_seq >= ? AND a.global_seq < ? AND a.block_num = ? ORDER BY a.global_seq`),
    blockSpan: db.prepare('SELECT first_seq, action_count FROM blocks WHERE num = ?'),
    abiVersion: db.prepare(
      'SELECT block_num FROM abi_versions WHERE account = ? AND block_num <= ? ORDER BY block_num DESC LIMIT 1',
    ),
    abi: db.prepare('SELECT abi FROM abi_versions WHERE account = ? AND block_num = ?'),
  }

  return {
    async transactionHistories(ids) {
      const out = new Map<string, TransactionHistory>()
      for (const id of ids) {
        if (out.has(id)) continue
        out.set(id, {
          records: (s.records.all(trxIdKey(id), id) as DbRow[]).map(transactionFromRow),
          forkedOut: (s.forkedOut.all(id) as DbRow[]).map(forkedOutFromRow),
        })
      }
      return out
    },
    async actionsOfTransactions(ids) {
      const out = new Map<string, ActionRecord[]>()
      for (const id of ids) {
        if (out.has(id)) continue
        const trx = s.latest.get(trxIdKey(id), id) as { first_seq: number | null; action_count: number } | undefined
        out.set(
          id,
          !trx || trx.first_seq === null
            ? []
            : (s.actionsInRange.all(trx.first_seq, trx.first_seq + trx.action_count) as DbRow[]).map((r) =>
                actionFromRow(r, id),
              ),
        )
      }
      return out
    },
    async executionsOfActions(seqs) {
      const out = new Map<number, ExecutionActions>()
      // Matches come in runs of one transaction: the execution read last usually holds the next one.
      let last: { execution: ExecutionActions; firstSeq: number; lastSeq: number } | undefined
      for (const seq of seqs) {
        if (!last || seq < last.firstSeq || seq > last.lastSeq) {
          const t = s.execution.get(seq) as
            (DbRow & { id: string; block_num: number; first_seq: number | null; action_count: number }) | undefined
          if (!t || t.first_seq === null) continue
          const actions = (s.actionsInRange.all(t.first_seq, t.first_seq + t.action_count) as DbRow[]).map((r) =>
            actionFromRow(r, t.id),
          )
          last = {
            execution: { trxId: t.id, blockNum: t.block_num, actions, transaction: transactionFromRow(t) },
            firstSeq: t.first_seq,
            lastSeq: t.first_seq + t.action_count - 1,
          }
        }
        out.set(seq, last.execution)
      }
      return out
    },
    async blocksByNums(nums) {
      return nums.length === 0 ? new Map() : blocksByNum(s.blocks.all(list([...new Set(nums)])) as DbRow[])
    },
    async rowChangesOfBlocks(nums) {
      return rowChangesByBlock(nums, nums.length === 0 ? [] : (s.rowChanges.all(list([...new Set(nums)])) as DbRow[]))
    },
    async actionReceiversOfBlocks(nums) {
      const out = new Map<number, { trxId: string; receiver: string }[]>()
      for (const num of nums) {
        if (out.has(num)) continue
        const span = s.blockSpan.get(num) as { first_seq: number | null; action_count: number } | undefined
        if (!span) continue
        const rows =
          span.first_seq === null
            ? []
            : (s.receivers.all(span.first_seq, span.first_seq + span.action_count, num) as {
                receiver: string
                trx_id: string
              }[])
        out.set(
          num,
          rows.map((r) => ({ trxId: r.trx_id, receiver: r.receiver })),
        )
      }
      return out
    },
    async abisAt(requests) {
      const versions = new Map<string, { abi: Uint8Array; blockNum: number } | undefined>()
      return requests.map(({ account, blockNum }) => {
        const version = (s.abiVersion.get(account, blockNum) as { block_num: number } | undefined)?.block_num
        if (version === undefined) return undefined
        const key = `${account}:${version}`
        if (!versions.has(key)) {
          const row = s.abi.get(account, version) as { abi: Buffer } | undefined
          versions.set(key, row && row.abi.length > 0 ? { abi: u8(row.abi), blockNum: version } : undefined)
        }
        return versions.get(key)
      })
    },
  }
}
