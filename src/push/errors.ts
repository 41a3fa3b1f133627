import { AntlerError } from '../antelope/index.ts'

/** The body is not a nodeos packed transaction (`details.reason` says what is wrong); nothing was sent to the chain. */
export function PushInvalidTransactionError(args: { reason: string }): AntlerError {
  return new AntlerError({
    code: 'push_invalid_transaction_error',
    status: 400,
    message: `push: not a packed transaction: ${args.reason}`,
    details: args,
  })
}

/**
 * The chain refused the transaction: `details.status` is its HTTP status and `details.body` its
 * answer exactly as sent (JSON, or the text when it was not JSON). The API answers both verbatim,
 * as a nodeos error on the passthrough would be.
 */
export function PushChainError(args: { status: number; body: unknown }): AntlerError {
  const what = chainErrorName(args.body)
  return new AntlerError({
    code: 'push_chain_error',
    status: args.status,
    message: `push: the chain refused the transaction (HTTP ${args.status}${what ? `, ${what}` : ''})`,
    details: args,
  })
}

/** The chain API could not be reached or did not answer in time (`details.reason`). */
export function PushChainUnavailableError(args: { reason: string }): AntlerError {
  return new AntlerError({
    code: 'push_chain_unavailable_error',
    status: 502,
    message: `push: the chain API did not answer: ${args.reason}`,
    details: args,
    retryable: true,
  })
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
  return new AntlerError({
    code: 'push_transaction_expired_error',
    status: 400,
    message: `push: transaction ${args.transaction_id} expired at ${args.expiration} without being included (store head ${args.head_block_num} at ${args.head_block_time})`,
    details: args,
  })
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
  return new AntlerError({
    code: 'push_transaction_failed_error',
    status: 400,
    message: `push: transaction ${args.transaction_id} ended as ${args.status} in block ${args.block_num}`,
    details: args,
  })
}

/** The guarantee was not met within its time limit; the transaction may still be included later. */
export function PushTimeoutError(args: { transaction_id: string; guarantee: string; waited_ms: number }): AntlerError {
  return new AntlerError({
    code: 'push_timeout_error',
    status: 504,
    message: `push: too long waiting for ${args.guarantee} of transaction ${args.transaction_id} (${args.waited_ms} ms)`,
    details: args,
    retryable: true,
  })
}

/** `error.name` of a nodeos error body, when it has one. */
function chainErrorName(body: unknown): string | undefined {
  const error = typeof body === 'object' && body !== null ? (body as { error?: unknown }).error : undefined
  const name = typeof error === 'object' && error !== null ? (error as { name?: unknown }).name : undefined
  return typeof name === 'string' ? name : undefined
}
