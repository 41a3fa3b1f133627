import { AntlerError } from '../antelope/index.ts'

/** No record of this transaction id in the store (dfuse's code and status). */
export function DataTrxNotFoundError(args: { trxId: string }): AntlerError {
  return new AntlerError('data_trx_not_found_error', { trx_id: args.trxId })
}

/** A listening lifecycle stream saw no change of its transaction within its wait (dfuse's code and status). */
export function DataTrxAppearanceTimeoutError(args: { trxId: string; lastSeenBlockId: string }): AntlerError {
  return new AntlerError('data_trx_appearance_timeout_error', {
    trx_id: args.trxId,
    last_seen_block_id: args.lastSeenBlockId,
  })
}
