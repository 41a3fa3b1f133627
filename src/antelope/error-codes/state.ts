import { defineError, type NoDetails } from '../error-definition.ts'

/** The codes of the state reads (`/v0/state/*`, `/v0/block_id/by_time`) and of transaction lookups; dfuse's. */
export const STATE_ERRORS = {
  app_not_ready_error: defineError<NoDetails>({
    status: 503,
    retryable: true,
    message: () => 'The store holds no block yet.',
  }),
  app_block_num_higher_than_head_block_error: defineError<{
    request_block_num: number
    head_block_num: number
    last_written_block_num: number
  }>({
    status: 400,
    message: (d) => `block_num ${d.request_block_num} is above the head block ${d.head_block_num}.`,
  }),
  app_block_num_higher_than_lib_error: defineError<{ request_block_num: number; last_written_block_num: number }>({
    status: 400,
    message: (d) =>
      `block_num ${d.request_block_num} is above the last irreversible block ${d.last_written_block_num} ` +
      '(irreversible_only).',
  }),
  app_block_num_not_covered_error: defineError<{
    request_block_num: number
    first_block_num: number
    head_block_num: number
  }>({
    status: 400,
    message: (d) =>
      `block_num ${d.request_block_num} is below the stored history, which covers blocks ` +
      `${d.first_block_num} to ${d.head_block_num}.`,
  }),
  data_abi_not_found_error: defineError<{ account: string; block_num: number }>({
    status: 400,
    message: (d) => `No ABI is set on ${d.account} at block ${d.block_num}.`,
  }),
  data_table_not_found_error: defineError<{ account: string; table: string }>({
    status: 400,
    message: (d) => `Table ${d.table} of ${d.account} is not found.`,
  }),
  data_row_not_found_error: defineError<{ account: string; scope: string; table: string; primary_key: string }>({
    status: 400,
    message: (d) => `No row ${d.primary_key} in ${d.account}/${d.scope}/${d.table}.`,
  }),
  data_public_key_not_found_error: defineError<{ public_key: string }>({
    status: 400,
    message: (d) => `No account is controlled by ${d.public_key}.`,
  }),
  data_decoding_table_row_error: defineError<{ data: string; reason: string }>({
    status: 400,
    message: (d) => `A row does not decode: ${d.reason}`,
  }),
  block_time_not_found: defineError<{ time: string; comparator: string }>({
    status: 404,
    message: (d) => `No stored block is ${d.comparator} ${d.time}.`,
  }),
  data_account_creation_not_found_error: defineError<{ account: string }>({
    status: 404,
    message: (d) => `No stored block created the account ${d.account}.`,
  }),
  data_trx_not_found_error: defineError<{ trx_id: string }>({
    status: 400,
    message: (d) => `Transaction ${d.trx_id} was not found.`,
  }),
} as const
