import type { ActionRecord, BlockRecord, Store } from '../store/index.ts'
import { addRunners, type ReceiverRunners } from './row-attribution.ts'

/** How many of a block's actions are read at a time: memory stays bounded whatever the block's size. */
export const BLOCK_ACTIONS_PAGE = 5_000

/** The reads a scan of a block's actions needs. */
export type BlockActionsStore = Pick<Store, 'firstSeqFromBlock' | 'actionsBySeq'>

/**
 * Visits the block's actions in execution order, `pageSize` at a time (a block's actions hold consecutive global
 * sequences from its first), until `visit` answers true; answers whether it did.
 */
export async function scanBlockActions(
  store: BlockActionsStore,
  block: BlockRecord,
  visit: (page: readonly ActionRecord[]) => boolean | void,
  pageSize = BLOCK_ACTIONS_PAGE,
): Promise<boolean> {
  if (block.actionCount === 0) return false
  const first = await store.firstSeqFromBlock(block.num)
  if (first === undefined) return false
  for (let offset = 0; offset < block.actionCount; offset += pageSize) {
    const count = Math.min(pageSize, block.actionCount - offset)
    const seqs = Array.from({ length: count }, (_, i) => first + offset + i)
    const page = (await store.actionsBySeq(seqs)).filter((a) => a.blockNum === block.num)
    if (visit(page)) return true
  }
  return false
}

/** The first of the block's actions that `match` holds of, read a page at a time. */
export async function findBlockAction(
  store: BlockActionsStore,
  block: BlockRecord,
  match: (action: ActionRecord) => boolean,
  pageSize = BLOCK_ACTIONS_PAGE,
): Promise<ActionRecord | undefined> {
  let found: ActionRecord | undefined
  await scanBlockActions(store, block, (page) => (found = page.find(match)) !== undefined, pageSize)
  return found
}

/** The runners of every receiver of the block, its actions read a page at a time. */
export async function blockReceiverRunners(
  store: BlockActionsStore,
  block: BlockRecord,
  pageSize = BLOCK_ACTIONS_PAGE,
): Promise<ReceiverRunners> {
  const runners: ReceiverRunners = new Map()
  await scanBlockActions(store, block, (page) => void addRunners(runners, page), pageSize)
  return runners
}
