import { AntlerError } from '../antelope/index.ts'

/**
 * The SHiP server sent something the protocol does not allow (bad frame, unknown variant, bad
 * ABI), or its ABI describes a type the decoders do not know (`types` names them).
 */
export function ShipProtocolError(
  message: string,
  cause?: unknown,
  details?: { readonly types: readonly string[] },
): AntlerError {
  return new AntlerError('ship_protocol_error', { reason: message, types: details?.types }, { cause })
}

/** The SHiP server could not be reached within the allowed attempts. */
export function ShipUnavailableError(url: string, attempts: number, cause?: unknown): AntlerError {
  return new AntlerError('ship_unavailable_error', { url, attempts }, { cause })
}

/**
 * The node no longer has (or never had) the block the store needs next: its retained state
 * history starts above it. `storeHead` is undefined for an empty store (`needed` is then its start
 * block). Retrying cannot help; the message says what can.
 */
export function ShipHistoryGapError(args: {
  readonly needed: number
  readonly available: number
  readonly storeHead: number | undefined
  readonly source: 'status' | 'results'
}): AntlerError {
  return new AntlerError('ship_history_gap_error', {
    needed: args.needed,
    available: args.available,
    storeHead: args.storeHead ?? null,
    source: args.source,
  })
}

/** The SHiP reader was closed before it was ready (shutdown). */
export function ShipReaderClosedError(): AntlerError {
  return new AntlerError('ship_reader_closed_error')
}
