import type { ErrorDefinition } from './error-definition.ts'
import { ERROR_REGISTRY, type ErrorArgs, type ErrorCode, type ErrorDetails } from './error-registry.ts'

/** The arguments after the code: optional when the code needs none. */
type ErrorParams<C extends ErrorCode> =
  Record<never, never> extends ErrorArgs<C>
    ? [args?: ErrorArgs<C>, options?: { cause?: unknown }]
    : [args: ErrorArgs<C>, options?: { cause?: unknown }]

/**
 * The root of every error Antler raises on purpose: a registry code (error-registry.ts) and its arguments, from which
 * the status, message and details follow. It lives in the lowest layer so every area can raise it; only `api/` maps
 * it to the wire error object.
 */
export class AntlerError<C extends ErrorCode = ErrorCode> extends Error {
  /** snake_case error code, e.g. `data_abi_not_found_error`. */
  readonly code: C
  /** HTTP status the API answers with. */
  readonly status: number
  /** Machine-readable context for the error object's `details`. */
  readonly details: ErrorDetails<C> & Readonly<Record<string, unknown>>
  /** Whether retrying the same operation may succeed (ingest decides by this, never by message). */
  readonly retryable: boolean

  constructor(code: C, ...[args, options]: ErrorParams<C>) {
    const definition = ERROR_REGISTRY[code] as unknown as ErrorDefinition<ErrorArgs<C>, ErrorDetails<C>>
    const given = (args ?? {}) as ErrorArgs<C>
    super(definition.message(given), options?.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'AntlerError'
    this.code = code
    this.status = typeof definition.status === 'number' ? definition.status : definition.status(given)
    this.details = definition.details(given) as ErrorDetails<C> & Readonly<Record<string, unknown>>
    this.retryable = definition.retryable
  }
}

/** A value given to a chain primitive (name, key, id, time) is not in a form it accepts. */
export function InvalidChainValueError(args: { kind: string; value: string; reason: string }): AntlerError {
  return new AntlerError('invalid_chain_value_error', args)
}
