import { AntlerError } from '../antelope/index.ts'

/** No record of this transaction id in the store (dfuse's code and status). */
export function DataTrxNotFoundError(args: { trxId: string }): AntlerError {
  return new AntlerError({ code: 'data_trx_not_found_error', status: 400, message: `Transaction ${args.trxId} was not found.`, details: { trx_id: args.trxId } })
}
