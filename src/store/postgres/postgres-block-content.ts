import { blockContentReader, contentsToKeep, prunedThrough, stepPayloadsOf } from '../block-content.ts'
import { runAsync } from '../sql-routine.ts'
import type { Step, StepPayload } from '../types.ts'
import type { Queryable } from './column-insert.ts'
import { createPostgresRunner } from './postgres-runner.ts'

/** The block content reads on `q`. */
const reader = (q: Queryable) => blockContentReader(createPostgresRunner(q), 'postgres')

/** Keeps (or replaces: a block undone again) the content of undone blocks, one statement for any number. */
const KEEP = `INSERT INTO forked_blocks (block_id, block_num, payload) SELECT * FROM unnest($1::text[], $2::bigint[], $3::bytea[])
  ON CONFLICT (block_id) DO UPDATE SET block_num = EXCLUDED.block_num, payload = EXCLUDED.payload`

/**
 * Records LIB and prunes the kept content it passed by the retention, in one round trip
 * (parameters: LIB, the highest block number to drop): an indexed range delete.
 */
const SET_LIB_AND_PRUNE = `WITH pruned AS (DELETE FROM forked_blocks WHERE block_num <= $2)
  INSERT INTO meta VALUES ('lib', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`

/**
 * The payloads of `steps` (StepReader.stepPayloads), read on `q`, which must be one snapshot
 * (a REPEATABLE READ transaction) so that a fork committed meanwhile is seen by all reads or none.
 */
export async function readStepPayloads(q: Queryable, steps: readonly Step[]): Promise<(StepPayload | undefined)[]> {
  return runAsync(stepPayloadsOf(reader(q), steps))
}

/** Keeps what the stored blocks `ids` hold, inside the undo's transaction, before it removes them. */
export async function keepUndoneBlocks(q: Queryable, ids: readonly string[]): Promise<void> {
  const kept = await runAsync(contentsToKeep(reader(q), ids))
  if (kept.length === 0) return
  await q.query(KEEP, [kept.map((k) => k.id), kept.map((k) => k.num), kept.map((k) => k.payload)])
}

/** Records a new LIB and prunes the kept content of forked-out blocks it passed by the retention. */
export async function setLibAndPrune(q: Queryable, lib: number): Promise<void> {
  await q.query(SET_LIB_AND_PRUNE, [String(lib), prunedThrough(lib)])
}
