import { forkedOutFromRow } from './batch-answers.ts'
import type { Store } from './port.ts'
import {
  blockByTimeClause,
  blockFromRow,
  prefixUpperBound,
  rowChangeFromRow,
  stepFromRow,
  transactionFromRow,
  trxIdKey,
  trxIdKeyRange,
  type StepRow,
} from './row-mapping.ts'
import {
  BLOCKS_ABOVE,
  GET_META,
  LATEST_TRANSACTION_RECORD,
  ROW_CHANGES_OF_BLOCK,
  TRANSACTIONS_BY_ID_PREFIX,
  TRANSACTION_RECORDS,
} from './common-sql.ts'
import { rowsOf, type SqlSession } from './sql-routine.ts'

/** The reads both adapters run as the same statements, one each (two for a history). */
export type CommonReads = Pick<
  Store,
  | 'blockById'
  | 'blockByTime'
  | 'reversibleBlocks'
  | 'transaction'
  | 'transactionsByIdPrefix'
  | 'firstSeqFromBlock'
  | 'stepsAfter'
  | 'stepsOfBlock'
  | 'libBeforeStep'
  | 'transactionHistory'
  | 'rowChanges'
>

const FIRST_SEQ_FROM = 'SELECT first_seq FROM blocks WHERE num >= ? AND first_seq IS NOT NULL ORDER BY num LIMIT 1'
const STEPS_AFTER = 'SELECT seq, type, block_num, block_id FROM steps WHERE seq > ? ORDER BY seq LIMIT ?'
const LIB_BEFORE_STEP = "SELECT block_num FROM steps WHERE seq < ? AND type = 'irreversible' ORDER BY seq DESC LIMIT 1"
const STEPS_OF_BLOCK = 'SELECT seq, type, block_num, block_id FROM steps WHERE block_id = ? ORDER BY seq'
const FORKED_OUT = 'SELECT block_num, block_id FROM forked_transactions WHERE id = ? ORDER BY block_num, block_id'

/** The common reads on an executor (integers may come as numbers or as strings: each is read with Number). */
export function createCommonReads(on: SqlSession): CommonReads {
  const firstRow = async (text: string, params: readonly unknown[]) => (await on.run(rowsOf(text, params)))[0]
  const allRows = (text: string, params: readonly unknown[]) => on.run(rowsOf(text, params))
  const block = async (text: string, param: unknown) => {
    const row = await firstRow(text, [param])
    return row && blockFromRow(row)
  }
  return {
    blockById: (id) => block('SELECT * FROM blocks WHERE id = ?', id),
    blockByTime: ({ timeMs, comparator }) =>
      block(`SELECT * FROM blocks WHERE ${blockByTimeClause(comparator)} LIMIT 1`, timeMs),
    async reversibleBlocks() {
      const lib = Number((await firstRow(GET_META, ['lib']))?.value ?? 0)
      const rows = await on.run(rowsOf<{ num: number | string; id: string }>(BLOCKS_ABOVE, [lib]))
      return rows.map((r) => ({ blockNum: Number(r.num), blockId: r.id }))
    },
    async transaction(id) {
      const row = await firstRow(LATEST_TRANSACTION_RECORD, [trxIdKey(id), id])
      return row && transactionFromRow(row)
    },
    async transactionsByIdPrefix(prefix, limit) {
      if (!/^[0-9a-f]{1,64}$/.test(prefix)) return []
      const bounds = [...trxIdKeyRange(prefix), prefix, prefixUpperBound(prefix)]
      return (await allRows(TRANSACTIONS_BY_ID_PREFIX, [...bounds, limit])).map(transactionFromRow)
    },
    async firstSeqFromBlock(blockNum) {
      const row = await firstRow(FIRST_SEQ_FROM, [blockNum])
      return row ? Number(row.first_seq) : undefined
    },
    async stepsAfter(seq, limit) {
      return (await on.run(rowsOf<StepRow>(STEPS_AFTER, [seq, limit]))).map(stepFromRow)
    },
    async stepsOfBlock(blockId) {
      return (await on.run(rowsOf<StepRow>(STEPS_OF_BLOCK, [blockId]))).map(stepFromRow)
    },
    async libBeforeStep(seq) {
      const row = await firstRow(LIB_BEFORE_STEP, [seq])
      return row ? Number(row.block_num) : undefined
    },
    async transactionHistory(id) {
      const records = (await allRows(TRANSACTION_RECORDS, [trxIdKey(id), id])).map(transactionFromRow)
      return { records, forkedOut: (await allRows(FORKED_OUT, [id])).map(forkedOutFromRow) }
    },
    async rowChanges(blockNum) {
      return (await allRows(ROW_CHANGES_OF_BLOCK, [blockNum])).map(rowChangeFromRow)
    },
  }
}
