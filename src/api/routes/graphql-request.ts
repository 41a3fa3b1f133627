import type { FastifyRequest } from 'fastify'
import { GraphQLError } from 'graphql'

/** A mercurius result's errors: validation errors carry the real ones inside. */
export interface MercuriusErrors {
  errors?: readonly (Error & { originalError?: Error & { errors?: readonly Error[] } })[]
  data?: unknown
}

/** The errors of a result, mercurius's validation wrappers opened. */
export const flattenErrors = (errors: MercuriusErrors['errors']): Error[] =>
  (errors ?? []).flatMap((e) => (Array.isArray(e.originalError?.errors) ? [...e.originalError.errors] : [e]))

/**
 * Fastify's and mercurius's refusals of a request (its body's schema, a missing query, a persisted-query lookup) are
 * the caller's mistake: a plain GraphQLError (InvalidArgument), not an unexpected error.
 */
export function asRefusal(error: Error & { originalError?: unknown }): Error {
  const original = (error.originalError ?? error) as Error & { code?: unknown; validation?: unknown }
  if (original instanceof GraphQLError) return error
  const code = typeof original.code === 'string' ? original.code : ''
  const refused = Array.isArray(original.validation) || code.startsWith('MER_ERR_') || code.startsWith('FST_ERR_')
  return refused ? new GraphQLError(original.message) : error
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
  if (params.operationName != null && typeof params.operationName !== 'string')
    throw new GraphQLError('operationName must be a string')
}
