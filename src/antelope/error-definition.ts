/**
 * How one error code is answered: its HTTP status, whether a retry may succeed, and its message and `details` made
 * from the arguments the code is raised with. The registry (error-registry.ts) holds one per code.
 */
export interface ErrorDefinition<Args, Details extends object> {
  /** The HTTP status; a function only where the status is someone else's (the chain's answer to a push). */
  readonly status: number | ((args: Args) => number)
  /** Every status the code can carry, for docs/ERRORS.md (the fixed status, or the list a function may give). */
  readonly statuses: readonly number[]
  /** Whether retrying the same operation may succeed (ingest decides by this, never by message). */
  readonly retryable: boolean
  /** The sentence for people (the wire's `message`). */
  readonly message: (args: Args) => string
  /** The machine-readable context (the wire's `details`). */
  readonly details: (args: Args) => Details
}

/** The `details` of a code that carries none. */
export type NoDetails = Record<string, never>

interface Common {
  readonly status: number
  readonly retryable?: boolean
}

interface Computed<Args> {
  readonly status: (args: Args) => number
  readonly statuses: readonly number[]
  readonly retryable?: boolean
}

/** A code whose arguments are its details. */
export function defineError<Details extends object>(
  definition: (Common | Computed<Details>) & { readonly message: (details: Details) => string },
): ErrorDefinition<Details, Details>
/** A code whose message needs more than its details (or other names): `details` picks what goes on the wire. */
export function defineError<Details extends object, Args>(
  definition: (Common | Computed<Args>) & {
    readonly message: (args: Args) => string
    readonly details: (args: Args) => Details
  },
): ErrorDefinition<Args, Details>
export function defineError(
  definition: (Common | Computed<object>) & {
    readonly message: (args: object) => string
    readonly details?: (args: object) => object
  },
): ErrorDefinition<object, object> {
  return {
    status: definition.status,
    statuses: typeof definition.status === 'number' ? [definition.status] : (definition as Computed<object>).statuses,
    retryable: definition.retryable ?? false,
    message: definition.message,
    details: definition.details ?? ((args) => ({ ...args })),
  }
}
