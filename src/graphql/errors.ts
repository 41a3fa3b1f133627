import { GraphQLError } from 'graphql'
import { AntlerError, newTraceId } from '../antelope/index.ts'
import type { OnUnexpected } from './context.ts'

/** gRPC status names, as dfuse put them in `extensions.code`. */
export type GrpcCodeName =
  | 'InvalidArgument'
  | 'Unauthenticated'
  | 'PermissionDenied'
  | 'NotFound'
  | 'ResourceExhausted'
  | 'Unavailable'
  | 'FailedPrecondition'
  | 'Internal'

/** The gRPC status name of an error's HTTP status. */
export function grpcCodeName(status: number): GrpcCodeName {
  if (status === 401) return 'Unauthenticated'
  if (status === 403) return 'PermissionDenied'
  if (status === 404) return 'NotFound'
  if (status === 429) return 'ResourceExhausted'
  if (status === 503 || status === 504) return 'Unavailable'
  if (status === 409 || status === 423) return 'FailedPrecondition'
  if (status >= 400 && status < 500) return 'InvalidArgument'
  return 'Internal'
}

/** A GraphQL error as every transport sends it (`errors[]` of a response). */
export interface GraphqlWireError {
  message: string
  locations?: readonly { line: number; column: number }[]
  path?: readonly (string | number)[]
  extensions: {
    /** dfuse's: the gRPC status name. */
    code: GrpcCodeName
    /** True when the operation stops with this error (a subscription ends). */
    terminal: boolean
    /** Antler's registry code (docs/ERRORS.md) and its details, when the error is one of Antler's. */
    error_code?: string
    details?: Record<string, unknown>
    trace_id: string
  }
}

/**
 * A thrown error → its wire form. Antler's errors keep their message and code (as `error_code`, the gRPC name of its
 * status as `code`); GraphQL's own (syntax, validation, variables) are `InvalidArgument`; anything else is
 * `Internal` with a fixed message (`onUnexpected` logs it, once: an error already in wire form is not logged again).
 * `traceId` is the one the client is told (GraphQL over HTTP: the response's `X-Trace-Id`), else a new one.
 */
export function graphqlWireError(
  error: unknown,
  onUnexpected?: OnUnexpected,
  traceId: string = newTraceId(),
): GraphqlWireError {
  const graphqlError = error instanceof GraphQLError ? error : undefined
  const original = graphqlError ? graphqlError.originalError : error
  const place = {
    ...(graphqlError?.locations ? { locations: graphqlError.locations } : {}),
    ...(graphqlError?.path ? { path: graphqlError.path } : {}),
  }
  // Already in wire form (formattedGraphqlError), possibly located by graphql-js around it: as it is.
  const formatted = [graphqlError, original].find(
    (e): e is GraphQLError => e instanceof GraphQLError && typeof e.extensions?.trace_id === 'string',
  )
  if (formatted)
    return { message: formatted.message, ...place, extensions: formatted.extensions as GraphqlWireError['extensions'] }
  if (original instanceof AntlerError) {
    const details = Object.keys(original.details).length ? { details: { ...original.details } } : {}
    return {
      message: `${original.message} (trace_id: ${traceId})`,
      ...place,
      extensions: {
        code: grpcCodeName(original.status),
        terminal: true,
        error_code: original.code,
        ...details,
        trace_id: traceId,
      },
    }
  }
  // GraphQL's own (syntax, validation, variables, a scalar refusing an input): the caller's mistake.
  if (graphqlError && (!original || original instanceof GraphQLError))
    return {
      message: graphqlError.message,
      ...place,
      extensions: { code: 'InvalidArgument', terminal: true, trace_id: traceId },
    }
  onUnexpected?.(original ?? error, traceId)
  return {
    message: `An unexpected error occurred (trace_id: ${traceId})`,
    ...place,
    extensions: { code: 'Internal', terminal: true, error_code: 'unexpected_error', trace_id: traceId },
  }
}

/** An error as a GraphQLError already in wire form: what a subscription throws, so every transport sends it as is. */
export function formattedGraphqlError(error: unknown, onUnexpected?: OnUnexpected, traceId?: string): GraphQLError {
  const wire = graphqlWireError(error, onUnexpected, traceId)
  return new GraphQLError(wire.message, { extensions: wire.extensions as unknown as Record<string, unknown> })
}

/**
 * A subscription's stream whose errors come out formatted (formattedGraphqlError), an unexpected one logged here with
 * the trace id the client gets; return() goes to the stream.
 */
export function withFormattedErrors<T>(
  stream: AsyncIterator<T>,
  onUnexpected?: OnUnexpected,
): AsyncIterableIterator<T> {
  return {
    [Symbol.asyncIterator]() {
      return this
    },
    async next() {
      try {
        return await stream.next()
      } catch (error) {
        await stream.return?.()
        throw formattedGraphqlError(error, onUnexpected)
      }
    },
    async return() {
      return (await stream.return?.()) ?? { done: true, value: undefined }
    },
  }
}
