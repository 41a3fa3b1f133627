import { defineError } from '../error-definition.ts'

/** `error.name` of a nodeos error body, when it has one. */
function chainErrorName(body: unknown): string | undefined {
  const error = typeof body === 'object' && body !== null ? (body as { error?: unknown }).error : undefined
  const name = typeof error === 'object' && error !== null ? (error as { name?: unknown }).name : undefined
  return typeof name === 'string' ? name : undefined
}

/** The codes of the `/v1/chain/*` passthrough and of guaranteed pushes. */
export const PUSH_ERRORS = {
  chain_unavailable_error: defineError<{ reason: string }>({
    status: 502,
    retryable: true,
    message: () => 'The chain API is unavailable.',
  }),
  chain_timeout_error: defineError<{ timeout_ms: number }>({
    status: 504,
    retryable: true,
    message: (d) => `The chain API did not answer within ${d.timeout_ms} ms.`,
  }),
  push_invalid_guarantee_error: defineError<{ value: string }>({
    status: 400,
    message: () => 'X-Eos-Push-Guarantee must be in-block, handoff:1, handoffs:1..3 or irreversible.',
  }),
  push_invalid_transaction_error: defineError<{ reason: string }>({
    status: 400,
    message: (d) => `push: not a packed transaction: ${d.reason}`,
  }),
  // The API answers the chain's status and body verbatim, as a nodeos error on the passthrough would be.
  push_chain_error: defineError<{ status: number; body: unknown }>({
    status: (d) => d.status,
    statuses: [],
    message: (d) => {
      const what = chainErrorName(d.body)
      return `push: the chain refused the transaction (HTTP ${d.status}${what ? `, ${what}` : ''})`
    },
  }),
  push_chain_unavailable_error: defineError<{ reason: string }>({
    status: 502,
    retryable: true,
    message: (d) => `push: the chain API did not answer: ${d.reason}`,
  }),
  push_transaction_expired_error: defineError<{
    transaction_id: string
    expiration: string
    head_block_num: number
    head_block_time: string
  }>({
    status: 400,
    message: (d) =>
      `push: transaction ${d.transaction_id} expired at ${d.expiration} without being included ` +
      `(store head ${d.head_block_num} at ${d.head_block_time})`,
  }),
  push_transaction_failed_error: defineError<{ transaction_id: string; status: string; block_num: number }>({
    status: 400,
    message: (d) => `push: transaction ${d.transaction_id} ended as ${d.status} in block ${d.block_num}`,
  }),
  push_timeout_error: defineError<{ transaction_id: string; guarantee: string; waited_ms: number }>({
    status: 504,
    retryable: true,
    message: (d) => `push: too long waiting for ${d.guarantee} of transaction ${d.transaction_id} (${d.waited_ms} ms)`,
  }),
} as const
