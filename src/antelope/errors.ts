/**
 * The root of every error Antler raises on purpose. It lives in the lowest layer so every area can
 * derive from it; only `api/` maps it to the wire error object.
 */
export class AntlerError extends Error {
  /** snake_case error code, e.g. `data_abi_not_found_error`. */
  readonly code: string
  /** HTTP status the API answers with. */
  readonly status: number
  /** Machine-readable context for the error object's `details`. */
  readonly details: Record<string, unknown>
  /** Whether retrying the same operation may succeed (ingest decides by this, never by message). */
  readonly retryable: boolean

  constructor(args: {
    code: string
    message: string
    status?: number
    details?: Record<string, unknown>
    retryable?: boolean
    cause?: unknown
  }) {
    super(args.message, args.cause === undefined ? undefined : { cause: args.cause })
    this.name = 'AntlerError'
    this.code = args.code
    this.status = args.status ?? 500
    this.details = args.details ?? {}
    this.retryable = args.retryable ?? false
  }
}

/** A value given to a chain primitive (name, key, id, time) is not in a form it accepts. */
export function InvalidChainValueError(args: { kind: string; value: string; reason: string }): AntlerError {
  return new AntlerError({
    code: 'invalid_chain_value_error',
    status: 400,
    message: `invalid ${args.kind} ${JSON.stringify(args.value)}: ${args.reason}`,
    details: { kind: args.kind, value: args.value, reason: args.reason },
  })
}
