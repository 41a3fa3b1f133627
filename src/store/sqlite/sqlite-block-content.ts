import type Database from 'better-sqlite3'
import { blockContentReader, contentsToKeep, prunedThrough, stepPayloadsOf } from '../block-content.ts'
import type { StepReader } from '../port.ts'
import type { Step } from '../types.ts'
import { runSync, type SyncSqlRunner } from '../sql-routine.ts'

/** Keeps (or replaces: a block undone again) the content of an undone block. */
const KEEP = 'INSERT OR REPLACE INTO forked_blocks (block_id, block_num, payload) VALUES (?, ?, ?)'

/**
 * The content of blocks for step payloads: stored blocks read from their tables, forked-out ones
 * from `forked_blocks`, where `undoFrom` keeps them (`keepUndone`, inside its transaction) and the
 * block writes prune them (`prune`, inside theirs). Every call runs a fixed number of statements.
 */
export function createSqliteBlockContent(db: Database.Database, sql: SyncSqlRunner) {
  const reader = blockContentReader(sql, 'sqlite')
  // One read transaction: another process's write (a fork) is seen by all of the reads or none.
  const read = db.transaction((steps: readonly Step[]) => runSync(stepPayloadsOf(reader, steps)))

  const stepPayloads: StepReader['stepPayloads'] = async (steps) => (steps.length === 0 ? [] : read(steps))

  return {
    stepPayloads,
    /** Keeps what the stored blocks `ids` hold before an undo removes them. */
    keepUndone(ids: readonly string[]): void {
      for (const k of runSync(contentsToKeep(reader, ids))) sql.run(KEEP, [k.id, k.num, k.payload])
    },
    /** Drops the kept content LIB has passed by the retention: an indexed range delete. */
    prune(lib: number): void {
      sql.run(reader.text.prune, [prunedThrough(lib)])
    },
  }
}
