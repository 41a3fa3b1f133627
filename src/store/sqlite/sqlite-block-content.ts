import type Database from 'better-sqlite3'
import {
  actionRange,
  blockContentSql,
  contentsFromRows,
  decodeBlockContent,
  encodeBlockContent,
  FORKED_RETENTION_BLOCKS,
  payloadsOfSteps,
  type BlockContent,
} from '../block-content.ts'
import type { StepReader } from '../port.ts'

type DbRow = Record<string, unknown>

/**
 * The content of blocks for step payloads: stored blocks read from their tables, forked-out ones
 * from `forked_blocks`, where `undoFrom` keeps them (`keepUndone`, inside its transaction) and the
 * block writes prune them (`prune`, inside theirs). Every call runs a fixed number of statements.
 */
export function createSqliteBlockContent(db: Database.Database) {
  const sql = blockContentSql('sqlite')
  const s = {
    blocks: db.prepare(sql.blocks),
    transactions: db.prepare(sql.transactions),
    actions: db.prepare(sql.actions),
    rowChanges: db.prepare(sql.rowChanges),
    forked: db.prepare(sql.forked),
    prune: db.prepare(sql.prune),
    keep: db.prepare('INSERT OR REPLACE INTO forked_blocks (block_id, block_num, payload) VALUES (?, ?, ?)'),
  }

  /** The content of the stored blocks among `ids`, by id. */
  const stored = (ids: readonly string[]): Map<string, BlockContent> => {
    const blocks = s.blocks.all(JSON.stringify(ids)) as DbRow[]
    if (blocks.length === 0) return new Map()
    const nums = JSON.stringify(blocks.map((b) => b.num))
    const range = actionRange(blocks)
    return contentsFromRows({
      blocks,
      transactions: s.transactions.all(nums) as DbRow[],
      actions: range ? (s.actions.all(range.firstSeq, range.lastBlock, nums) as DbRow[]) : [],
      rowChanges: s.rowChanges.all(nums) as DbRow[],
    })
  }

  /** Stored content where the id is stored, else the kept content of a forked-out block. */
  const contents = (ids: readonly string[]): Map<string, BlockContent> => {
    const found = stored(ids)
    const missing = ids.filter((id) => !found.has(id))
    if (missing.length)
      for (const r of s.forked.all(JSON.stringify(missing)) as { block_id: string; payload: Buffer }[])
        found.set(r.block_id, decodeBlockContent(r.payload))
    return found
  }
  // One read transaction: another process's write (a fork) is seen by all of the reads or none.
  const read = db.transaction((ids: readonly string[]) => contents(ids))

  const stepPayloads: StepReader['stepPayloads'] = async (steps) =>
    steps.length === 0 ? [] : payloadsOfSteps(steps, read([...new Set(steps.map((x) => x.blockId))]))

  return {
    stepPayloads,
    /**
     * Keeps what the stored blocks `ids` hold before an undo removes them (a block undone again replaces its earlier
     * copy).
     */
    keepUndone(ids: readonly string[]): void {
      for (const [id, c] of stored(ids)) s.keep.run(id, c.block.num, encodeBlockContent(c))
    },
    /** Drops the kept content LIB has passed by the retention: an indexed range delete. */
    prune(lib: number): void {
      s.prune.run(lib - FORKED_RETENTION_BLOCKS)
    },
  }
}
