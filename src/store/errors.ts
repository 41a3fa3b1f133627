import { AntlerError } from '../antelope/index.ts'

/** A block handed to the store does not link to its head (the caller must undo first). */
export function StoreLinkError(args: { blockNum: number; previous: string; head: number; headId: string }): AntlerError {
  return new AntlerError({
    code: 'store_block_does_not_link_error',
    message: `store: block ${args.blockNum} (previous ${args.previous}) does not link to head ${args.head} (${args.headId})`,
    details: args,
  })
}

/** An undo would reach at or below LIB, which forks never do. */
export function StoreIrreversibleUndoError(args: { blockNum: number; lib: number }): AntlerError {
  return new AntlerError({ code: 'store_irreversible_undo_error', message: `store: cannot undo block ${args.blockNum} at or below LIB ${args.lib}`, details: args })
}
