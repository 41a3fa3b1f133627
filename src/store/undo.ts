import { StoreIrreversibleUndoError } from './errors.ts'
import { failpoint } from './failpoints.ts'
import { GET_META, INSERT_STEP, RECORD_FORKED_TRANSACTIONS, SET_META } from './common-sql.ts'
import { awaited, type Maybe, type SqlRoutine, type SqlRunner } from './sql-routine.ts'
import { VERSIONED_TABLES } from './versioned-tables.ts'

/** What an undo does its own way on each adapter; the rest of it is one statement sequence for both. */
export interface UndoDialect {
  readonly sql: SqlRunner
  /** Keeps what the stored blocks `ids` hold (for step payloads) before the undo removes them. */
  keepUndone(ids: readonly string[]): Maybe<void>
  /** Deletes the actions from global sequence `cut` (block `blockNum`'s first) and cuts the postings there. */
  cutActions(cut: number, blockNum: number): Maybe<void>
  /**
   * Reopens the row versions the undone blocks closed: only a key's last version below `blockNum` can have been
   * closed at or after it, found by one backward seek (a balance may have millions of versions).
   */
  reopenRows(blockNum: number): Maybe<void>
  /** Tells step listeners, inside the transaction (PostgreSQL's NOTIFY). */
  announce?(blockNum: number): Maybe<unknown>
}

/**
 * What undoing from a block removes (parameter: the block): row versions written from it (their keys reopened
 * before), every other versioned table's versions written from it, with those it closed reopened, and the blocks
 * and transactions.
 */
const REMOVE_FROM = [
  'DELETE FROM row_versions WHERE block_num >= ?',
  ...VERSIONED_TABLES.flatMap((t) => [
    `DELETE FROM ${t} WHERE block_num >= ?`,
    `UPDATE ${t} SET valid_to = NULL WHERE valid_to >= ?`,
  ]),
  'DELETE FROM blocks WHERE num >= ?',
  'DELETE FROM transactions WHERE block_num >= ?',
]

/**
 * Undoes the stored blocks from `blockNum` up, inside the caller's transaction: keeps their content and their
 * transactions (as forked out), removes what they wrote, logs an undo step per block from the head down and moves
 * the head below them. Returns the head it undid (undefined: nothing to undo).
 */
export function* undoFrom(d: UndoDialect, blockNum: number): SqlRoutine<number | undefined> {
  const { sql } = d
  const lib = Number((yield* awaited(sql.rows<{ value: string }>(GET_META, ['lib'])))[0]?.value ?? 0)
  if (blockNum <= lib) throw StoreIrreversibleUndoError({ blockNum, lib })
  const undone = yield* awaited(
    sql.rows<{ num: number | string; id: string }>('SELECT num, id FROM blocks WHERE num >= ? ORDER BY num DESC', [
      blockNum,
    ]),
  )
  if (undone.length === 0) return undefined
  const blocks = { first: blockNum, last: Number(undone[0].num) }
  yield* awaited(d.keepUndone(undone.map((b) => b.id)))
  const [{ seq: cut }] = yield* awaited(
    sql.rows<{ seq: number | string | null }>('SELECT MIN(first_seq) AS seq FROM blocks WHERE num >= ?', [blockNum]),
  )
  if (cut !== null) yield* awaited(d.cutActions(Number(cut), blockNum))
  yield* awaited(sql.run(RECORD_FORKED_TRANSACTIONS, [blockNum]))
  failpoint?.('undo-between-statements', blocks)
  yield* awaited(d.reopenRows(blockNum))
  for (const statement of REMOVE_FROM) yield* awaited(sql.run(statement, [blockNum]))
  for (const b of undone) yield* awaited(sql.run(INSERT_STEP, ['undo', Number(b.num), b.id]))
  const [head] = yield* awaited(
    sql.rows<{ num: number | string; id: string }>('SELECT num, id FROM blocks WHERE num = ?', [blockNum - 1]),
  )
  if (head) yield* awaited(sql.run(SET_META, ['head', `${head.num}:${head.id}`]))
  else yield* awaited(sql.run("DELETE FROM meta WHERE key = 'head'"))
  if (d.announce) yield* awaited(d.announce(blockNum))
  failpoint?.('undo-before-commit', blocks)
  return blocks.last
}

/** After an undo's commit: the failpoint that dies before the indexer learns it (nothing undone: none). */
export function undoCommitted(blockNum: number, undoneHead: number | undefined): void {
  if (undoneHead !== undefined) failpoint?.('undo-after-commit', { first: blockNum, last: undoneHead })
}
