import type { AntlerError } from '../antelope/index.ts'
import { PushChainError, PushChainUnavailableError } from './errors.ts'

/** nodeos's `tx_duplicate`: the chain already holds a transaction with this id. */
const TX_DUPLICATE_CODE = 3040008
/** How long one call to the chain API may take. */
const CHAIN_CALL_TIMEOUT_MS = 30_000

/**
 * POSTs JSON to the chain API and returns the parsed 2xx answer. A non-2xx answer throws
 * `push_chain_error` carrying the chain's status and body as sent; no answer (connection refused,
 * reset, timeout) throws `push_chain_unavailable_error`. An abort of `signal` throws its reason.
 */
export async function postToChain(url: string, body: unknown, signal: AbortSignal | undefined): Promise<unknown> {
  const timeout = AbortSignal.timeout(CHAIN_CALL_TIMEOUT_MS)
  let response: Response
  let text: string
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    })
    text = await response.text()
  } catch (error) {
    if (signal?.aborted) throw signal.reason
    throw PushChainUnavailableError({
      reason: timeout.aborted ? `no answer within ${CHAIN_CALL_TIMEOUT_MS} ms` : describe(error),
    })
  }
  let parsed: unknown = text
  try {
    parsed = JSON.parse(text)
  } catch {
    // Kept as text: the caller answers it verbatim.
  }
  if (response.status < 200 || response.status > 299) throw PushChainError({ status: response.status, body: parsed })
  return parsed
}

/** Whether a chain refusal says the chain already has the transaction (`tx_duplicate`). */
export function isDuplicateRefusal(error: AntlerError): boolean {
  if (error.code !== 'push_chain_error') return false
  const body = error.details.body as { error?: { code?: unknown; name?: unknown } } | undefined
  return body?.error?.code === TX_DUPLICATE_CODE || body?.error?.name === 'tx_duplicate'
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause
  if (cause && typeof cause.code === 'string') return cause.code
  if (cause && typeof cause.message === 'string') return cause.message
  return error instanceof Error ? error.message : String(error)
}
