import type { SnapshotReader, StorePosition } from '../store/index.ts'
import { AppNotReadyError, BlockNumAboveHeadError, BlockNumAboveLibError, BlockNumNotCoveredError } from './errors.ts'

/** Where a state read answers: its block and the header fields of dfuse's state answers (docs/API.md). */
export interface ReadHeight {
  readonly blockNum: number
  readonly position: StorePosition
  /**
   * `up_to_block_id`/`_num` when the height is above LIB (a reversible view), and `last_irreversible_block_id`/`_num`
   * always.
   */
  readonly header: {
    up_to_block_id?: string
    up_to_block_num?: number
    last_irreversible_block_id: string
    last_irreversible_block_num: number
  }
}

/**
 * The lowest stored block: blocks are contiguous from the first one the indexer wrote up to head
 * (`antler verify` holds this), so a binary search finds it in about log2(head) reads.
 */
export async function firstStoredBlock(
  reader: Pick<SnapshotReader, 'blockByNum'>,
  high: number,
): Promise<number | undefined> {
  if (!(await reader.blockByNum(high))) return undefined
  let lo = 1
  let hi = high
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2)
    if (await reader.blockByNum(mid)) hi = mid
    else lo = mid + 1
  }
  return lo
}

/**
 * Resolves `block_num` in a snapshot: absent or 0 is head (LIB with `irreversibleOnly`); above head,
 * above LIB with `irreversibleOnly`, or below the stored history is an error naming the range.
 */
export async function resolveHeight(
  reader: SnapshotReader,
  args: { blockNum?: number; irreversibleOnly?: boolean },
): Promise<ReadHeight> {
  const position = await reader.position()
  if (!position) throw AppNotReadyError()
  const head = position.head.blockNum
  const lib = Math.min(position.lib, head)
  const asked = args.blockNum === undefined || args.blockNum === 0 ? undefined : args.blockNum
  const blockNum = asked ?? (args.irreversibleOnly ? lib : head)
  if (blockNum > head) throw BlockNumAboveHeadError({ requested: blockNum, head })
  if (args.irreversibleOnly && blockNum > lib) throw BlockNumAboveLibError({ requested: blockNum, lib })
  const block = await reader.blockByNum(blockNum)
  if (!block)
    throw BlockNumNotCoveredError({ requested: blockNum, first: (await firstStoredBlock(reader, head)) ?? head, head })
  const libBlock = lib > 0 ? await reader.blockByNum(lib) : undefined
  const irreversible = {
    last_irreversible_block_id: libBlock?.id ?? '',
    last_irreversible_block_num: libBlock ? lib : 0,
  }
  const header =
    blockNum > lib ? { up_to_block_id: block.id, up_to_block_num: blockNum, ...irreversible } : irreversible
  return { blockNum, position, header }
}
