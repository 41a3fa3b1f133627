import type { StreamOutput } from './connection.ts'

/** dfuse's least interval between two `progress` messages of a stream. */
const MIN_PROGRESS_INTERVAL_MS = 250

/**
 * `with_progress: N`: after a block's data, a `progress` message when the block number is a
 * multiple of N and 250 ms passed since the last one. N = 0: never.
 */
export function progressReporter(
  every: number,
  out: Pick<StreamOutput, 'send'>,
  now: () => number = Date.now,
): (blockNum: number, blockId: string) => void {
  let last = -Infinity
  return (blockNum, blockId) => {
    if (every <= 0 || blockNum % every !== 0 || now() - last < MIN_PROGRESS_INTERVAL_MS) return
    last = now()
    out.send('progress', { block_num: blockNum, block_id: blockId })
  }
}
