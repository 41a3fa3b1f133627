import { AntlerError } from '../antelope/index.ts'

/** A block handed to the store does not link to its head (the caller must undo first). */
export function StoreLinkError(args: {
  blockNum: number
  previous: string
  head: number
  headId: string
}): AntlerError {
  return new AntlerError('store_block_does_not_link_error', args)
}

/** An undo would reach at or below LIB, which forks never do. */
export function StoreIrreversibleUndoError(args: { blockNum: number; lib: number }): AntlerError {
  return new AntlerError('store_irreversible_undo_error', args)
}

/** An API key with the same id or the same key hash is already stored. */
export function StoreApiKeyExistsError(args: { id: string }): AntlerError {
  return new AntlerError('store_api_key_exists_error', args)
}

/** A write was asked of a store opened read-only; the database was not touched. */
export function StoreReadOnlyError(args: { method: string }): AntlerError {
  return new AntlerError('store_read_only_error', args)
}

/** A read-only open found no store: nothing creates one but a writer (`antler dev`, `serve` or `index`). */
export function StoreNotFoundError(args: { store: string; reason: string }): AntlerError {
  return new AntlerError('store_not_found_error', args)
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
  return new AntlerError('store_schema_version_error', args)
}
