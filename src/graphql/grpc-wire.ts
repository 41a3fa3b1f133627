import { Metadata, status as Status } from '@grpc/grpc-js'
import type { ExecutionResult, GraphQLError } from 'graphql'
import { AntlerError } from '../antelope/index.ts'
import { graphqlWireError, type GrpcCodeName } from './errors.ts'
import type { GraphqlRequest } from './execute.ts'

/** `antler.graphql.v1.Request` as proto-loader decodes it (proto3: an absent string is ""). */
export interface GrpcGraphqlRequest {
  readonly query?: string
  readonly variables?: string
  readonly operationName?: string
}

/** `antler.graphql.v1.Response`: `data` and each error's `path` and `extensions` are JSON text. */
export interface GrpcGraphqlResponse {
  readonly data: string
  readonly errors: readonly {
    readonly message: string
    readonly locations: readonly { readonly line: number; readonly column: number }[]
    readonly path: string
    readonly extensions: string
  }[]
}

/** Logs an error no one expected (a bug), under the trace id sent to the client. */
export type OnUnexpected = (error: unknown, traceId: string) => void

/** What a call ends with when it fails: a gRPC status, its details and trailing metadata (`retry-after` on 429). */
export class GrpcCallError extends Error {
  constructor(
    readonly code: Status,
    readonly details: string,
    readonly metadata: Metadata = new Metadata(),
  ) {
    super(details)
    this.name = 'GrpcCallError'
  }
}

const STATUS_OF: Record<GrpcCodeName, Status> = {
  InvalidArgument: Status.INVALID_ARGUMENT,
  Unauthenticated: Status.UNAUTHENTICATED,
  PermissionDenied: Status.PERMISSION_DENIED,
  NotFound: Status.NOT_FOUND,
  ResourceExhausted: Status.RESOURCE_EXHAUSTED,
  Unavailable: Status.UNAVAILABLE,
  FailedPrecondition: Status.FAILED_PRECONDITION,
  Internal: Status.INTERNAL,
}

/** The status a thrown error ends a call with: Antler's by its HTTP status, anything unexpected `INTERNAL`. */
export function grpcStatusOf(error: unknown, onUnexpected?: OnUnexpected): GrpcCallError {
  if (error instanceof GrpcCallError) return error
  const wire = graphqlWireError(error, onUnexpected)
  const metadata = new Metadata()
  const retryAfter = error instanceof AntlerError ? error.details.retry_after_seconds : undefined
  if (typeof retryAfter === 'number') metadata.set('retry-after', String(retryAfter))
  return new GrpcCallError(STATUS_OF[wire.extensions.code] ?? Status.INTERNAL, wire.message, metadata)
}

/** GraphQL's refusals (syntax, validation, operation name) as one status message, each with where it is. */
export function refusalDetails(errors: readonly GraphQLError[]): string {
  return errors
    .map((e) => {
      const at = e.locations?.[0]
      return at ? `${e.message} (line ${at.line}, column ${at.column})` : e.message
    })
    .join('; ')
}

/** A Request as runGraphql takes it; `variables` must be JSON text of an object ("" for none). */
export function graphqlRequestOf(request: GrpcGraphqlRequest): GraphqlRequest {
  const text = typeof request.variables === 'string' ? request.variables : ''
  let variables: unknown
  if (text.trim() !== '') {
    try {
      variables = JSON.parse(text)
    } catch {
      throw new GrpcCallError(Status.INVALID_ARGUMENT, 'variables is not JSON text')
    }
    if (typeof variables !== 'object' || variables === null || Array.isArray(variables))
      throw new GrpcCallError(Status.INVALID_ARGUMENT, 'variables must be JSON text of an object')
  }
  const operationName = request.operationName || undefined
  return {
    query: typeof request.query === 'string' ? request.query : '',
    ...(variables ? { variables: variables as Record<string, unknown> } : {}),
    ...(operationName ? { operationName } : {}),
  }
}

/** A result as a Response: `data` as JSON text ("" when the result has none), errors in wire form. */
export function grpcResponseOf(
  result: Pick<ExecutionResult, 'data' | 'errors'>,
  onUnexpected?: OnUnexpected,
): GrpcGraphqlResponse {
  return {
    data: result.data === undefined ? '' : JSON.stringify(result.data),
    errors: (result.errors ?? []).map((error) => grpcErrorOf(error, onUnexpected)),
  }
}

/** One error of a Response (any thrown error, in its wire form: graphqlWireError). */
export function grpcErrorOf(error: unknown, onUnexpected?: OnUnexpected): GrpcGraphqlResponse['errors'][number] {
  const wire = graphqlWireError(error, onUnexpected)
  return {
    message: wire.message,
    locations: (wire.locations ?? []).map(({ line, column }) => ({ line, column })),
    path: wire.path ? JSON.stringify(wire.path) : '',
    extensions: JSON.stringify(wire.extensions),
  }
}

/** Bytes a Response takes on the wire, about (for the call's backlog). */
export function responseBytes(response: GrpcGraphqlResponse): number {
  let bytes = Buffer.byteLength(response.data)
  for (const e of response.errors) bytes += Buffer.byteLength(e.message) + e.path.length + e.extensions.length + 16
  return bytes
}

/**
 * The token of a call's `authorization` metadata: `Bearer <jwt>` or the bare token. More than one value, or a value
 * of another shape, is malformed (the token check refuses it), as on HTTP.
 */
export function presentedGrpcToken(metadata: Metadata): string | undefined {
  const values = metadata.get('authorization')
  if (values.length === 0) return undefined
  if (values.length > 1 || typeof values[0] !== 'string') return 'malformed'
  const words = values[0].trim().split(/\s+/)
  if (words.length === 1) return words[0] === '' ? undefined : words[0]
  return words.length === 2 && words[0].toLowerCase() === 'bearer' ? words[1] : 'malformed'
}

/** The caller of a call: its peer's address without the port, and the `origin` metadata (a grpc-web proxy's). */
export function grpcCaller(peer: string, metadata: Metadata): { ip: string; origin?: string } {
  // grpc-js names a peer `<address>:<port>` (an IPv6 address unbracketed).
  const address = peer.replace(/^(ipv4|ipv6):/, '')
  const bracketed = /^\[(.*)\](?::\d+)?$/.exec(address)
  const ip = bracketed ? bracketed[1] : address.replace(/:\d+$/, '')
  const origin = metadata.get('origin')
  return { ip, ...(origin.length === 1 && typeof origin[0] === 'string' ? { origin: origin[0] } : {}) }
}
