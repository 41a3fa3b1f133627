import { Metadata, status as Status } from '@grpc/grpc-js'
import type { ExecutionResult, GraphQLError } from 'graphql'
import { AntlerError } from '../antelope/index.ts'
import { authorizationToken } from '../auth/index.ts'
import type { GraphqlUsageOutcome, OnUnexpected } from './context.ts'
import { graphqlWireError, type GraphqlWireError, type GrpcCodeName } from './errors.ts'
import { usageOutcome } from './usage.ts'

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

/** What a call ends with when it fails: a gRPC status, its details and trailing metadata (`retry-after` on 429). */
export class GrpcCallError extends Error {
  constructor(
    readonly code: Status,
    readonly details: string,
    readonly metadata: Metadata = new Metadata(),
    /** How the call counts in its key's usage (a refused request is the caller's mistake). */
    readonly outcome: GraphqlUsageOutcome | undefined = code === Status.INVALID_ARGUMENT ? 'clientErrors' : undefined,
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
  return new GrpcCallError(
    STATUS_OF[wire.extensions.code] ?? Status.INTERNAL,
    wire.message,
    metadata,
    usageOutcome([wire]),
  )
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

/** A Request's fields as the execution layer reads any transport's parameters (`variables` JSON text, "" for none). */
export const grpcRequestParams = (request: GrpcGraphqlRequest): Record<string, unknown> => ({
  query: request.query ?? '',
  variables: request.variables ?? '',
  operationName: request.operationName ?? '',
})

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
export const grpcErrorOf = (error: unknown, onUnexpected?: OnUnexpected): GrpcGraphqlResponse['errors'][number] =>
  grpcErrorOfWire(graphqlWireError(error, onUnexpected))

/** An error in wire form as one error of a Response (`path` and `extensions` as JSON text). */
export function grpcErrorOfWire(wire: GraphqlWireError): GrpcGraphqlResponse['errors'][number] {
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

/** The token of a call's `authorization` metadata (the one Bearer rule: src/auth/presented-token.ts). */
export const presentedGrpcToken = (metadata: Metadata): string | undefined =>
  authorizationToken(metadata.get('authorization'))

/** The caller of a call: its peer's address without the port, and the `origin` metadata (a grpc-web proxy's). */
export function grpcCaller(peer: string, metadata: Metadata): { ip: string; origin?: string } {
  // grpc-js names a peer `<address>:<port>` (an IPv6 address unbracketed).
  const address = peer.replace(/^(ipv4|ipv6):/, '')
  const bracketed = /^\[(.*)\](?::\d+)?$/.exec(address)
  const ip = bracketed ? bracketed[1] : address.replace(/:\d+$/, '')
  const origin = metadata.get('origin')
  return { ip, ...(origin.length === 1 && typeof origin[0] === 'string' ? { origin: origin[0] } : {}) }
}
