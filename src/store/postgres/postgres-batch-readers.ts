import type { BatchReader, ExecutionActions } from '../port.ts'
import { blocksByNum, forkedOutFromRow, rowChangesByBlock } from '../batch-answers.ts'
import { TRX_ID_OF_ACTION, actionFromRow, transactionFromRow, trxIdKey, u8 } from '../row-mapping.ts'
import type { ActionRecord, TransactionHistory } from '../types.ts'
import type { Queryable } from './column-insert.ts'

type DbRow = Record<string, unknown>

/** Every record of each id (common-sql.ts TRANSACTION_RECORDS per id; parameters: id keys, ids). */
const RECORDS = `SELECT t.* FROM unnest($1::bigint[], $2::text[]) AS r(k, id)
  CROSS JOIN LATERAL (SELECT * FROM transactions WHERE id_key = r.k AND id = r.id) t ORDER BY t.id, t.block_num, t.block_index`
const FORKED_OUT =
  'SELECT id, block_num, block_id FROM forked_transactions WHERE id = ANY($1::text[]) ORDER BY id, block_num, block_id'
/**
 * The actions of each id's latest record (common-sql.ts LATEST_TRANSACTION_RECORD), as actionsOfTransaction reads them.
 */
const ACTIONS = `SELECT r.id AS of_trx, a.* FROM unnest($1::bigint[], $2::text[]) AS r(k, id)
  CROSS JOIN LATERAL (SELECT first_seq, action_count, block_num FROM transactions WHERE id_key = r.k AND id = r.id ORDER BY block_num DESC, block_index ASC LIMIT 1) t
  CROSS JOIN LATERAL (SELECT * FROM actions WHERE global_seq >= t.first_seq AND global_seq < t.first_seq + t.action_count AND block_num = t.block_num ORDER BY global_seq LIMIT t.action_count) a
  ORDER BY a.global_seq`
/**
 * The executions holding each sequence (parameter: seqs): each transaction's span read once, by
 * the action's place, not by id. The span's LIMIT keeps its read a range seek per transaction:
 * without it the planner flattens the lateral into a hash join over a scan of every action (0.4 s).
 */
const EXECUTIONS = `WITH t AS (SELECT DISTINCT t.id, t.block_num, t.first_seq, t.action_count, t.block_index, t.status,
      t.cpu_usage_us, t.net_usage_words, t.scheduled, t.details FROM unnest($1::bigint[]) AS s(seq)
    CROSS JOIN LATERAL (SELECT block_num, trx_index FROM actions WHERE global_seq = s.seq LIMIT 1) a
    JOIN transactions t ON t.block_num = a.block_num AND t.block_index = a.trx_index)
  SELECT t.id AS of_trx, t.block_index AS t_block_index, t.status AS t_status, t.cpu_usage_us AS t_cpu_usage_us,
    t.net_usage_words AS t_net_usage_words, t.scheduled AS t_scheduled, t.details AS t_details, x.* FROM t CROSS JOIN LATERAL (SELECT * FROM actions
    WHERE global_seq >= t.first_seq AND global_seq < t.first_seq + t.action_count AND block_num = t.block_num ORDER BY global_seq LIMIT t.action_count) x
  ORDER BY x.global_seq`
const BLOCKS = 'SELECT * FROM blocks WHERE num = ANY($1::bigint[])'

/** The transaction record EXECUTIONS carries on each of its rows (its `t_*` columns). */
const executionTransaction = (r: DbRow) =>
  transactionFromRow({
    id: r.of_trx,
    block_num: r.block_num,
    block_index: r.t_block_index,
    status: r.t_status,
    cpu_usage_us: r.t_cpu_usage_us,
    net_usage_words: r.t_net_usage_words,
    scheduled: r.t_scheduled,
    details: r.t_details,
  })
/**
 * common-sql.ts ROW_CHANGES_OF_BLOCK for many blocks, in its order within each block (the closed version by one
 * backward seek, as block-content.ts reads it).
 */
const ROW_CHANGES = `SELECT n.block_num AS at, n.code, n.tbl, n.scope, n.pk, n.payer, n.value, o.payer AS old_payer, o.value AS old_value, o.block_num AS old_block
  FROM row_versions n LEFT JOIN LATERAL (SELECT p.payer, p.value, p.block_num FROM row_versions p
    WHERE p.code = n.code AND p.tbl = n.tbl AND p.scope = n.scope AND p.pk = n.pk AND p.block_num < n.block_num ORDER BY p.block_num DESC LIMIT 1) o ON true
  WHERE n.block_num = ANY($1::bigint[]) ORDER BY n.block_num, n.code, n.tbl, n.scope, n.pk`
/**
 * Each block's actions: the global sequences from its first_seq, action_count of them (one range
 * read per block; the LIMIT keeps it one, as in EXECUTIONS: a hundred blocks were a 0.6 s hash join).
 */
const RECEIVERS = `SELECT b.num, a.receiver, ${TRX_ID_OF_ACTION} FROM blocks b
  LEFT JOIN LATERAL (SELECT global_seq, block_num, trx_index, receiver FROM actions
    WHERE global_seq >= b.first_seq AND global_seq < b.first_seq + b.action_count AND block_num = b.num ORDER BY global_seq LIMIT b.action_count) a ON true
  WHERE b.num = ANY($1::bigint[]) ORDER BY a.global_seq`
/**
 * The ABI version in force for each (account, block), then each distinct version's bytes once
 * (parameters: accounts, blocks): rows with `i` set name a request's version, rows without it carry the bytes.
 */
const ABIS = `WITH r AS (SELECT r.i, r.account, v.block_num FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY AS r(account, at, i)
    CROSS JOIN LATERAL (SELECT block_num FROM abi_versions WHERE account = r.account AND block_num <= r.at ORDER BY block_num DESC LIMIT 1) v)
  SELECT r.i, r.account, r.block_num, NULL::bytea AS abi FROM r
  UNION ALL SELECT NULL, a.account, a.block_num, a.abi FROM abi_versions a JOIN (SELECT DISTINCT account, block_num FROM r) d ON a.account = d.account AND a.block_num = d.block_num`

const unique = <T>(xs: readonly T[]) => [...new Set(xs)]

/** The batch reads (port.ts BatchReader) on PostgreSQL: one round trip each (two for histories, sent together). */
export function createPostgresBatchReaders(q: Queryable): BatchReader {
  return {
    async transactionHistories(ids) {
      const out = new Map<string, TransactionHistory>()
      if (ids.length === 0) return out
      const distinct = unique(ids)
      const [records, forked] = await Promise.all([
        q.query(RECORDS, [distinct.map(trxIdKey), distinct]),
        q.query(FORKED_OUT, [distinct]),
      ])
      const histories = new Map(
        distinct.map((id) => [
          id,
          {
            records: [] as ReturnType<typeof transactionFromRow>[],
            forkedOut: [] as { blockNum: number; blockId: string }[],
          },
        ]),
      )
      for (const r of records.rows as DbRow[]) histories.get(r.id as string)?.records.push(transactionFromRow(r))
      for (const r of forked.rows as DbRow[]) histories.get(r.id as string)?.forkedOut.push(forkedOutFromRow(r))
      for (const [id, h] of histories) out.set(id, h)
      return out
    },
    async actionsOfTransactions(ids) {
      const distinct = unique(ids)
      const out = new Map<string, ActionRecord[]>(distinct.map((id) => [id, []]))
      if (distinct.length === 0) return out
      const rows = (await q.query(ACTIONS, [distinct.map(trxIdKey), distinct])).rows as DbRow[]
      for (const r of rows) out.get(r.of_trx as string)?.push(actionFromRow(r, r.of_trx as string))
      return out
    },
    async executionsOfActions(seqs) {
      const out = new Map<number, ExecutionActions>()
      if (seqs.length === 0) return out
      const executions: (ExecutionActions & { actions: ActionRecord[] })[] = []
      for (const r of (await q.query(EXECUTIONS, [unique(seqs)])).rows as DbRow[]) {
        const action = actionFromRow(r, r.of_trx as string)
        let last = executions[executions.length - 1]
        if (!last || last.trxId !== action.trxId || last.blockNum !== action.blockNum)
          executions.push(
            (last = {
              trxId: action.trxId,
              blockNum: action.blockNum,
              actions: [],
              transaction: executionTransaction(r),
            }),
          )
        last.actions.push(action)
      }
      const asked = new Set(seqs)
      for (const e of executions)
        for (const a of e.actions) if (asked.has(a.globalSequence)) out.set(a.globalSequence, e)
      return out
    },
    async blocksByNums(nums) {
      return nums.length === 0 ? new Map() : blocksByNum((await q.query(BLOCKS, [unique(nums)])).rows)
    },
    async rowChangesOfBlocks(nums) {
      return rowChangesByBlock(nums, nums.length === 0 ? [] : (await q.query(ROW_CHANGES, [unique(nums)])).rows)
    },
    async actionReceiversOfBlocks(nums) {
      const out = new Map<number, { trxId: string; receiver: string }[]>()
      if (nums.length === 0) return out
      for (const r of (await q.query(RECEIVERS, [unique(nums)])).rows as DbRow[]) {
        const num = Number(r.num)
        const list = out.get(num) ?? []
        out.set(num, list)
        // A block without actions is one row without a receiver.
        if (r.receiver !== null) list.push({ trxId: r.trx_id as string, receiver: r.receiver as string })
      }
      return out
    },
    async abisAt(requests) {
      if (requests.length === 0) return []
      const rows = (await q.query(ABIS, [requests.map((r) => r.account), requests.map((r) => r.blockNum)])).rows as {
        i: string | null
        account: string
        block_num: string
        abi: Buffer | null
      }[]
      const versions = new Map<string, { abi: Uint8Array; blockNum: number } | undefined>()
      for (const r of rows)
        if (r.i === null && r.abi)
          versions.set(
            `${r.account}:${r.block_num}`,
            r.abi.length > 0 ? { abi: u8(r.abi), blockNum: Number(r.block_num) } : undefined,
          )
      const answers: ({ abi: Uint8Array; blockNum: number } | undefined)[] = requests.map(() => undefined)
      for (const r of rows) if (r.i !== null) answers[Number(r.i) - 1] = versions.get(`${r.account}:${r.block_num}`)
      return answers
    },
  }
}
