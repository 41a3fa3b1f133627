import { AntlerError } from '../antelope/index.ts'

/** The store holds no block yet: nothing to answer from. */
export function AppNotReadyError(): AntlerError {
  return new AntlerError({
    code: 'app_not_ready_error',
    status: 503,
    message: 'The store holds no block yet.',
    retryable: true,
  })
}

/** `block_num` is above the store's head (dfuse's code and detail keys). */
export function BlockNumAboveHeadError(args: { requested: number; head: number }): AntlerError {
  return new AntlerError({
    code: 'app_block_num_higher_than_head_block_error',
    status: 400,
    message: `block_num ${args.requested} is above the head block ${args.head}.`,
    details: { request_block_num: args.requested, head_block_num: args.head, last_written_block_num: args.head },
  })
}

/** `block_num` is above LIB while `irreversible_only` was asked. */
export function BlockNumAboveLibError(args: { requested: number; lib: number }): AntlerError {
  return new AntlerError({
    code: 'app_block_num_higher_than_lib_error',
    status: 400,
    message: `block_num ${args.requested} is above the last irreversible block ${args.lib} (irreversible_only).`,
    details: { request_block_num: args.requested, last_written_block_num: args.lib },
  })
}

/** `block_num` is below the first block the store holds (it was indexed from a later block, or history was pruned). */
export function BlockNumNotCoveredError(args: { requested: number; first: number; head: number }): AntlerError {
  return new AntlerError({
    code: 'app_block_num_not_covered_error',
    status: 400,
    message: `block_num ${args.requested} is below the stored history, which covers blocks ${args.first} to ${args.head}.`,
    details: { request_block_num: args.requested, first_block_num: args.first, head_block_num: args.head },
  })
}

/** No ABI is set on the account at that height (json decoding asked). */
export function AbiNotFoundError(args: { account: string; blockNum: number }): AntlerError {
  return new AntlerError({
    code: 'data_abi_not_found_error',
    status: 400,
    message: `No ABI is set on ${args.account} at block ${args.blockNum}.`,
    details: { account: args.account, block_num: args.blockNum },
  })
}

/** The table is not in the account's ABI at that height, or never held a row. */
export function TableNotFoundError(args: { account: string; table: string }): AntlerError {
  return new AntlerError({
    code: 'data_table_not_found_error',
    status: 400,
    message: `Table ${args.table} of ${args.account} is not found.`,
    details: { account: args.account, table: args.table },
  })
}

/** No row with that primary key at that height. */
export function RowNotFoundError(args: {
  account: string
  scope: string
  table: string
  primaryKey: string
}): AntlerError {
  return new AntlerError({
    code: 'data_row_not_found_error',
    status: 400,
    message: `No row ${args.primaryKey} in ${args.account}/${args.scope}/${args.table}.`,
    details: { account: args.account, scope: args.scope, table: args.table, primary_key: args.primaryKey },
  })
}

/** No account's authority held the key at that height. */
export function PublicKeyNotFoundError(args: { publicKey: string }): AntlerError {
  return new AntlerError({
    code: 'data_public_key_not_found_error',
    status: 400,
    message: `No account is controlled by ${args.publicKey}.`,
    details: { public_key: args.publicKey },
  })
}

/** A hex row of bin_to_json does not decode with the table's type. */
export function DecodingTableRowError(args: { data: string; reason: string }): AntlerError {
  return new AntlerError({
    code: 'data_decoding_table_row_error',
    status: 400,
    message: `A row does not decode: ${args.reason}`,
    details: { data: args.data, reason: args.reason },
  })
}

/** No block on the asked side of the time (dfuse's code, without the `_error` suffix). */
export function BlockTimeNotFoundError(args: { time: string; comparator: string }): AntlerError {
  return new AntlerError({
    code: 'block_time_not_found',
    status: 404,
    message: `No stored block is ${args.comparator} ${args.time}.`,
    details: { time: args.time, comparator: args.comparator },
  })
}
