import { AntlerError } from '../antelope/index.ts'

/** A block handed to the store does not link to its head (the caller must undo first). */
export function StoreLinkError(args: {
  blockNum: number
  previous: string
  head: number
  headId: string
}): AntlerError {
  return new AntlerError({
    code: 'store_block_does_not_link_error',
    message: `store: block ${args.blockNum} (previous ${args.previous}) does not link to head ${args.head} (${args.headId})`,
    details: args,
  })
}

/** An undo would reach at or below LIB, which forks never do. */
export function StoreIrreversibleUndoError(args: { blockNum: number; lib: number }): AntlerError {
  return new AntlerError({
    code: 'store_irreversible_undo_error',
    message: `store: cannot undo block ${args.blockNum} at or below LIB ${args.lib}`,
    details: args,
  })
}

/** An API key with the same id or the same key hash is already stored. */
export function StoreApiKeyExistsError(args: { id: string }): AntlerError {
  return new AntlerError({
    code: 'store_api_key_exists_error',
    status: 409,
    message: `store: an API key with id ${JSON.stringify(args.id)} or the same key string is already stored`,
    details: args,
  })
}

/** A write was asked of a store opened read-only; the database was not touched. */
export function StoreReadOnlyError(args: { method: string }): AntlerError {
  return new AntlerError({
    code: 'store_read_only_error',
    message: `store: ${args.method}() refused: this store was opened read-only`,
    details: args,
  })
}

/** A read-only open found no store: nothing creates one but a writer (`antler dev`, `serve` or `index`). */
export function StoreNotFoundError(args: { store: string; reason: string }): AntlerError {
  return new AntlerError({
    code: 'store_not_found_error',
    message: `store: ${args.store} ${args.reason}; run antler dev, serve or index first`,
    details: args,
  })
}

/**
 * The store holds another schema version than this build reads. A writer upgrades `upgradable`
 * in place; anything else, or any store opened read-only, is refused.
 */
export function StoreSchemaVersionError(args: {
  store: string
  found: string
  expected: number
  upgradable: boolean
}): AntlerError {
  const todo = args.upgradable
    ? 'open it once with antler dev, serve or index to upgrade it'
    : 'run the antler build that wrote it, or index into a new store'
  return new AntlerError({
    code: 'store_schema_version_error',
    message: `store: ${args.store} has schema version ${args.found}, this build reads ${args.expected}; ${todo}`,
    details: args,
  })
}
