import type { BlockRef } from '../antelope/index.ts'
import { StoreLinkError } from './errors.ts'

/** A step a write records: a block applied (`new` or `redo`, decided by the store) or passed by LIB. */
export interface WriteStep {
  readonly type: 'apply' | 'irreversible'
  readonly num: number
  readonly id: string
}

/** A stored or applied block, by number and id. */
interface NumberedBlock {
  readonly num: number
  readonly id: string
}

/**
 * The steps a write of `applied` (consecutive blocks, ascending) leaves in the step log, in order:
 * each block's apply step, then the irreversible steps of the blocks LIB passes with it. LIB is
 * `lib` capped at each block as it is applied. `stored` are the blocks above `previousLib` stored
 * before the write, ascending; they are needed only when LIB moves (`libMoves`).
 */
export function writeSteps(
  applied: readonly NumberedBlock[],
  lib: number,
  previousLib: number,
  stored: readonly NumberedBlock[],
): { steps: WriteStep[]; lib: number } {
  const steps: WriteStep[] = []
  const reversible = [...stored]
  let currentLib = previousLib
  for (const b of applied) {
    steps.push({ type: 'apply', num: b.num, id: b.id })
    reversible.push(b)
    const newLib = Math.min(lib, b.num)
    if (newLib <= currentLib) continue
    let passed = 0
    while (passed < reversible.length && reversible[passed].num <= newLib)
      steps.push({ type: 'irreversible', num: reversible[passed].num, id: reversible[passed++].id })
    reversible.splice(0, passed)
    currentLib = newLib
  }
  return { steps, lib: currentLib }
}

/** Whether a write of `applied` moves LIB past `previousLib` (and so needs the stored reversible blocks). */
export const libMoves = (applied: readonly NumberedBlock[], lib: number, previousLib: number): boolean =>
  applied.length > 0 && Math.min(lib, applied[applied.length - 1].num) > previousLib

/** Throws a StoreLinkError unless `block` follows `head` (any block follows an empty store). */
export function assertLinks(head: BlockRef | undefined, block: { readonly num: number; readonly previous: string }) {
  if (head && (block.num !== head.blockNum + 1 || block.previous !== head.blockId))
    throw StoreLinkError({ blockNum: block.num, previous: block.previous, head: head.blockNum, headId: head.blockId })
}
