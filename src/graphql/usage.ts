import type { ExecutionResult } from 'graphql'
import { AntlerError } from '../antelope/index.ts'
import type { GraphqlUsage, GraphqlUsageOutcome } from './context.ts'
import { grpcCodeName, type GraphqlWireError, type GrpcCodeName } from './errors.ts'

/** How an error's gRPC code counts in a key's usage; undefined: not the caller's doing (not counted). */
const OUTCOME_OF: Record<GrpcCodeName, GraphqlUsageOutcome | undefined> = {
  InvalidArgument: 'clientErrors',
  NotFound: 'clientErrors',
  FailedPrecondition: 'clientErrors',
  Unauthenticated: 'authFailures',
  PermissionDenied: 'authFailures',
  ResourceExhausted: 'rateLimited',
  Unavailable: undefined,
  Internal: undefined,
}

/**
 * The usage outcome of an operation by the errors it answered: `ok` without any; else the first error's (an
 * `Internal` or `Unavailable` one anywhere: not counted, the server's doing).
 */
export function usageOutcome(errors: readonly Pick<GraphqlWireError, 'extensions'>[]): GraphqlUsageOutcome | undefined {
  if (errors.length === 0) return 'ok'
  if (errors.some((e) => OUTCOME_OF[e.extensions.code] === undefined)) return undefined
  return OUTCOME_OF[errors[0].extensions.code]
}

/** The usage outcome of a thrown refusal (an admission's): Antler's by its status; anything else not counted. */
export const refusalOutcome = (error: unknown): GraphqlUsageOutcome | undefined =>
  error instanceof AntlerError ? OUTCOME_OF[grpcCodeName(error.status)] : undefined

/**
 * Documents a query's answer served, as the REST routes count them: a search page's results, 1 for any other answer
 * (at least 1 per answer).
 */
export function answerDocuments(result: Pick<ExecutionResult, 'data'>): number {
  let count = 0
  for (const value of Object.values(result.data ?? {})) {
    const results = (value as { results?: unknown } | null)?.results
    count += Array.isArray(results) ? results.length : 1
  }
  return Math.max(1, count)
}

/** A meter counting nothing (no meter given: a test, a tool). */
export const NO_USAGE: GraphqlUsage = { request: () => undefined, documents: () => undefined }

/** Counts one request of `keyId` (when known) by its outcome (when counted). */
export function countRequest(
  usage: GraphqlUsage,
  keyId: string | undefined,
  outcome: GraphqlUsageOutcome | undefined,
  documents: number,
): void {
  if (keyId !== undefined && outcome !== undefined) usage.request(keyId, outcome, outcome === 'ok' ? documents : 0)
}
