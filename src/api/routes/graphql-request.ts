import type { FastifyRequest } from 'fastify'
import { getOperationAST, GraphQLError } from 'graphql'
import { AntlerError } from '../../antelope/index.ts'
import { parseQuery } from '../../graphql/index.ts'
import { toAntlerError } from '../wire-error.ts'

/** A mercurius result's errors: validation errors carry the real ones inside. */
export interface MercuriusErrors {
  errors?: readonly (Error & { originalError?: Error & { errors?: readonly Error[] } })[]
  data?: unknown
}

/** The errors of a result, mercurius's validation wrappers opened. */
export const flattenErrors = (errors: MercuriusErrors['errors']): Error[] =>
  (errors ?? []).flatMap((e) => (Array.isArray(e.originalError?.errors) ? [...e.originalError.errors] : [e]))

/**
 * Fastify's and mercurius's refusals of a request (its body's schema or size, a missing query, a persisted-query
 * lookup) are the caller's mistake: the registry's error when there is one (a body too large), else a plain
 * GraphQLError (InvalidArgument), never an unexpected error.
 */
export function asRefusal(error: Error & { originalError?: unknown }): Error {
  const original = (error.originalError ?? error) as Error & { code?: unknown }
  if (original instanceof GraphQLError || original instanceof AntlerError) return error
  const known = toAntlerError(original)
  if (!known.unexpected) return known.error
  const code = typeof original.code === 'string' ? original.code : ''
  return code.startsWith('MER_ERR_') || code.startsWith('FST_ERR_') ? new GraphQLError(original.message) : error
}

/**
 * The shape of a GraphQL request before mercurius reads it (graphql-js throws on a query that is not text): a JSON
 * object with a non-empty `query` string, `variables` an object (POST; GET's is JSON text, mercurius parses it) and
 * `operationName` a string.
 */
export async function checkGraphqlRequest(request: FastifyRequest): Promise<void> {
  if (request.ws) return
  const params = (request.method === 'GET' ? request.query : request.body) as Record<string, unknown> | undefined
  if (!params || typeof params !== 'object' || Array.isArray(params))
    throw new GraphQLError('the request must be a JSON object {query, variables?, operationName?}')
  if (typeof params.query !== 'string' || params.query.trim() === '')
    throw new GraphQLError('query must be a non-empty string')
  const parsed = parseQuery(params.query)
  if (parsed instanceof GraphQLError) throw parsed
  if (params.operationName != null && typeof params.operationName !== 'string')
    throw new GraphQLError('operationName must be a string')
  const operation = getOperationAST(parsed, (params.operationName as string | undefined) ?? undefined)
  if (!operation) throw new GraphQLError('the operation to run is unknown or ambiguous (operationName)')
  if (operation.operation !== 'query')
    throw new GraphQLError(`a ${operation.operation} runs over the WebSocket /graphql or gRPC, not over HTTP`)
  const variables = params.variables
  if (request.method === 'GET' && variables !== undefined && typeof variables === 'string') {
    try {
      const parsed: unknown = JSON.parse(variables)
      if (parsed !== null && (typeof parsed !== 'object' || Array.isArray(parsed))) throw new Error('not an object')
    } catch {
      throw new GraphQLError('variables must be JSON text of an object')
    }
  } else if (variables != null && (typeof variables !== 'object' || Array.isArray(variables)))
    throw new GraphQLError('variables must be a JSON object')
}
