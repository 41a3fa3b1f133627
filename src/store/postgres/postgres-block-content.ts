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
import { numbered } from '../shared-sql.ts'
import type { Step, StepPayload } from '../types.ts'
import type { Queryable } from './column-insert.ts'

const SQL = Object.fromEntries(
  Object.entries(blockContentSql('postgres')).map(([name, text]) => [name, numbered(text)]),
) as ReturnType<typeof blockContentSql>

/** Keeps (or replaces: a block undone again) the content of undone blocks, one statement for any number. */
const KEEP = `INSERT INTO forked_blocks (block_id, block_num, payload) SELECT * FROM unnest($1::text[], $2::bigint[], $3::bytea[])
  ON CONFLICT (block_id) DO UPDATE SET block_num = EXCLUDED.block_num, payload = EXCLUDED.payload`

/**
 * Records LIB and prunes the kept content it passed by the retention, in one round trip
 * (parameters: LIB, the highest block number to drop): an indexed range delete.
 */
const SET_LIB_AND_PRUNE = `WITH pruned AS (DELETE FROM forked_blocks WHERE block_num <= $2)
  INSERT INTO meta VALUES ('lib', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`

/** The content of the stored blocks among `ids`, by id: four statements, whatever their number. */
async function stored(q: Queryable, ids: readonly string[]): Promise<Map<string, BlockContent>> {
  const blocks = (await q.query(SQL.blocks, [ids])).rows
  if (blocks.length === 0) return new Map()
  const nums = blocks.map((b) => b.num as string)
  const range = actionRange(blocks)
  return contentsFromRows({
    blocks,
    transactions: (await q.query(SQL.transactions, [nums])).rows,
    actions: range ? (await q.query(SQL.actions, [range.firstSeq, range.lastBlock, nums])).rows : [],
    rowChanges: (await q.query(SQL.rowChanges, [nums])).rows,
  })
}

/**
 * The payloads of `steps` (StepReader.stepPayloads), read on `q`, which must be one snapshot
 * (a REPEATABLE READ transaction) so that a fork committed meanwhile is seen by all reads or none.
 */
export async function readStepPayloads(q: Queryable, steps: readonly Step[]): Promise<(StepPayload | undefined)[]> {
  const ids = [...new Set(steps.map((x) => x.blockId))]
  const found = await stored(q, ids)
  const missing = ids.filter((id) => !found.has(id))
  if (missing.length) {
    for (const r of (await q.query<{ block_id: string; payload: Buffer }>(SQL.forked, [missing])).rows)
      found.set(r.block_id, decodeBlockContent(r.payload))
  }
  return payloadsOfSteps(steps, found)
}

/** Keeps what the stored blocks `ids` hold, inside the undo's transaction, before it removes them. */
export async function keepUndoneBlocks(q: Queryable, ids: readonly string[]): Promise<void> {
  const contents = [...(await stored(q, ids)).values()]
  if (contents.length === 0) return
  await q.query(KEEP, [
    contents.map((c) => c.block.id),
    contents.map((c) => c.block.num),
    contents.map(encodeBlockContent),
  ])
}

/** Records a new LIB and prunes the kept content of forked-out blocks it passed by FORKED_RETENTION_BLOCKS. */
export async function setLibAndPrune(q: Queryable, lib: number): Promise<void> {
  await q.query(SET_LIB_AND_PRUNE, [String(lib), lib - FORKED_RETENTION_BLOCKS])
}
