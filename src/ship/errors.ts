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
  return new AntlerError({
    code: 'ship_protocol_error',
    status: 502,
    message: `ship: ${message}`,
    details: details ? { types: [...details.types] } : undefined,
    cause,
  })
}

/** The SHiP server could not be reached within the allowed attempts. */
export function ShipUnavailableError(url: string, attempts: number, cause?: unknown): AntlerError {
  return new AntlerError({
    code: 'ship_unavailable_error',
    status: 503,
    message: `ship: ${url} unreachable after ${attempts} attempts`,
    details: { url, attempts },
    retryable: true,
    cause,
  })
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
  const { needed, available, storeHead } = args
  const seen = args.source === 'status' ? 'the node reports its retained history starting at' : 'the node skipped to'
  const message =
    storeHead === undefined
      ? `history gap: the store is empty and starts at block ${needed}, but ${seen} block ${available}. ` +
        `Start this fresh store at the node's history with --start-block ${available}, or connect --ship to a node whose state history still holds block ${needed}`
      : `history gap: the store's head is block ${storeHead} and needs block ${needed} next, but ${seen} block ${available}. ` +
        `Connect --ship to a node whose state history still holds block ${needed} (a node with older history), or index into a fresh store with --start-block ${available}`
  return new AntlerError({
    code: 'ship_history_gap_error',
    status: 502,
    message: `ship: ${message}`,
    details: { needed, available, storeHead: storeHead ?? null, source: args.source },
  })
}
