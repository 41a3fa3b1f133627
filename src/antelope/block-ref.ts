/** A block's position on one branch: its number and id. */
export interface BlockRef {
  readonly blockNum: number
  readonly blockId: string
}

/** Same block: same number and same id. Positions are compared only through these helpers. */
export function sameBlock(a: BlockRef, b: BlockRef): boolean {
  return a.blockNum === b.blockNum && a.blockId === b.blockId
}

/** Orders positions by block number, then id (ids only differ between branches). */
export function compareBlockRefs(a: BlockRef, b: BlockRef): number {
  return a.blockNum - b.blockNum || (a.blockId < b.blockId ? -1 : a.blockId > b.blockId ? 1 : 0)
}
