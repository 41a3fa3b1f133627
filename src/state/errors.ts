import { AntlerError } from '../antelope/index.ts'

/** The store holds no block yet: nothing to answer from. */
export function AppNotReadyError(): AntlerError {
  return new AntlerError('app_not_ready_error')
}

/** `block_num` is above the store's head (dfuse's code and detail keys). */
export function BlockNumAboveHeadError(args: { requested: number; head: number }): AntlerError {
  return new AntlerError('app_block_num_higher_than_head_block_error', {
    request_block_num: args.requested,
    head_block_num: args.head,
    last_written_block_num: args.head,
  })
}

/** `block_num` is above LIB while `irreversible_only` was asked. */
export function BlockNumAboveLibError(args: { requested: number; lib: number }): AntlerError {
  return new AntlerError('app_block_num_higher_than_lib_error', {
    request_block_num: args.requested,
    last_written_block_num: args.lib,
  })
}

/** `block_num` is below the first block the store holds (it was indexed from a later block, or history was pruned). */
export function BlockNumNotCoveredError(args: { requested: number; first: number; head: number }): AntlerError {
  return new AntlerError('app_block_num_not_covered_error', {
    request_block_num: args.requested,
    first_block_num: args.first,
    head_block_num: args.head,
  })
}

/** No ABI is set on the account at that height (json decoding asked). */
export function AbiNotFoundError(args: { account: string; blockNum: number }): AntlerError {
  return new AntlerError('data_abi_not_found_error', { account: args.account, block_num: args.blockNum })
}

/** The table is not in the account's ABI at that height, or never held a row. */
export function TableNotFoundError(args: { account: string; table: string }): AntlerError {
  return new AntlerError('data_table_not_found_error', { account: args.account, table: args.table })
}

/** No row with that primary key at that height. */
export function RowNotFoundError(args: {
  account: string
  scope: string
  table: string
  primaryKey: string
}): AntlerError {
  return new AntlerError('data_row_not_found_error', {
    account: args.account,
    scope: args.scope,
    table: args.table,
    primary_key: args.primaryKey,
  })
}

/** No account's authority held the key at that height. */
export function PublicKeyNotFoundError(args: { publicKey: string }): AntlerError {
  return new AntlerError('data_public_key_not_found_error', { public_key: args.publicKey })
}

/** A hex row of bin_to_json does not decode with the table's type. */
export function DecodingTableRowError(args: { data: string; reason: string }): AntlerError {
  return new AntlerError('data_decoding_table_row_error', { data: args.data, reason: args.reason })
}

/** No block on the asked side of the time (dfuse's code, without the `_error` suffix). */
export function BlockTimeNotFoundError(args: { time: string; comparator: string }): AntlerError {
  return new AntlerError('block_time_not_found', { time: args.time, comparator: args.comparator })
}
