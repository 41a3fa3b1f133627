import { writeSync } from 'node:fs'

/**
 * Named points of the store's write paths where a test can make the process die as a crash
 * would (docs/OPERATIONS.md, Testing; test/ingest/failpoints.test.ts):
 * - `between-statements`: inside a block write's transaction, after its first statements (block,
 *   transaction and action records: of its first block on SQLite, of all its blocks on
 *   PostgreSQL), before the versions, steps, postings and head marker;
 * - `before-commit`: inside the transaction, after its last statement, before COMMIT;
 * - `after-commit`: the write committed, before the indexer learns it did;
 * - `undo-between-statements`, `undo-before-commit`, `undo-after-commit`: the same for an undo
 *   (between: after actions and postings were cut and forked transactions recorded).
 */
export const FAILPOINTS = [
  'between-statements',
  'before-commit',
  'after-commit',
  'undo-between-statements',
  'undo-before-commit',
  'undo-after-commit',
] as const

export type Failpoint = (typeof FAILPOINTS)[number]

/** The blocks of the write reaching a failpoint (for an undo: the first undone block and the head it undoes). */
export interface FailpointBlocks {
  readonly first: number
  readonly last: number
}

/** The blocks of a write of `batches` (consecutive, ascending). */
export const writtenBlocks = (batches: readonly { readonly block: { readonly num: number } }[]): FailpointBlocks => ({
  first: batches[0]?.block.num ?? 0,
  last: batches.at(-1)?.block.num ?? 0,
})

/** `<name>` or `<name>:<n>`: die the n-th time (default the first) the point is reached. */
function parseFailpoint(text: string): { name: Failpoint; hit: number } {
  const match = /^([a-z-]+)(?::([1-9]\d{0,8}))?$/.exec(text.trim())
  const name = FAILPOINTS.find((f) => f === match?.[1])
  if (!match || !name)
    throw new Error(
      `ANTLER_FAILPOINT must be <name>[:<n>] with a name among ${FAILPOINTS.join(', ')}, not ${JSON.stringify(text)}`,
    )
  return { name, hit: match[2] ? Number(match[2]) : 1 }
}

function arm(text: string | undefined): ((point: Failpoint, blocks: FailpointBlocks) => void) | undefined {
  if (!text) return undefined
  const { name, hit } = parseFailpoint(text)
  let reached = 0
  return (point, blocks) => {
    if (point !== name || ++reached < hit) return
    // Synchronous (a worker thread's stderr is forwarded asynchronously), then SIGKILL: no
    // finally block, exit handler, ROLLBACK or close runs, exactly as when the machine dies.
    writeSync(
      2,
      `antler failpoint ${name}:${hit} reached in the write of blocks ${blocks.first}..${blocks.last}: killing the process\n`,
    )
    process.kill(process.pid, 'SIGKILL')
  }
}

/**
 * Set from ANTLER_FAILPOINT once, when the process loads the store; undefined when it is unset,
 * so each point costs one check (`failpoint?.(…)` does not even evaluate its arguments). Reaches
 * are counted per thread that loads the store (`antler dev` and `serve` write on the indexer's
 * worker thread; SIGKILL ends the whole process).
 */
export const failpoint = arm(process.env.ANTLER_FAILPOINT)
