import { AntlerError } from '../antelope/index.ts'

/** The body is not a nodeos packed transaction (`details.reason` says what is wrong); nothing was sent to the chain. */
export function PushInvalidTransactionError(args: { reason: string }): AntlerError {
  return new AntlerError('push_invalid_transaction_error', args)
}

/**
 * The chain refused the transaction: `details.status` is its HTTP status and `details.body` its
 * answer exactly as sent (JSON, or the text when it was not JSON). The API answers both verbatim,
 * as a nodeos error on the passthrough would be.
 */
export function PushChainError(args: { status: number; body: unknown }): AntlerError {
  return new AntlerError('push_chain_error', args)
}

/** The chain API could not be reached or did not answer in time (`details.reason`). */
export function PushChainUnavailableError(args: { reason: string }): AntlerError {
  return new AntlerError('push_chain_unavailable_error', args)
}

/**
 * The transaction's expiration passed (in chain time, by the store's head block) while it was in no stored block: it
 * can no longer be included.
 */
export function PushTransactionExpiredError(args: {
  transaction_id: string
  expiration: string
  head_block_num: number
  head_block_time: string
}): AntlerError {
  return new AntlerError('push_transaction_expired_error', args)
}

/**
 * A stored block ended the transaction without executing it (a delayed transaction that hard-failed, expired or was
 * canceled).
 */
export function PushTransactionFailedError(args: {
  transaction_id: string
  status: string
  block_num: number
}): AntlerError {
  return new AntlerError('push_transaction_failed_error', args)
}

/** The guarantee was not met within its time limit; the transaction may still be included later. */
export function PushTimeoutError(args: { transaction_id: string; guarantee: string; waited_ms: number }): AntlerError {
  return new AntlerError('push_timeout_error', args)
}
