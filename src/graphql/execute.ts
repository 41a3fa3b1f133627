import {
  execute,
  getOperationAST,
  GraphQLError,
  parse,
  subscribe,
  validate,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
} from 'graphql'
import type { GraphqlContext } from './context.ts'

/** One GraphQL request as a transport received it. */
export interface GraphqlRequest {
  readonly query: string
  readonly variables?: Record<string, unknown>
  readonly operationName?: string
}

/** Why a request was refused before it ran: the transport's "bad input" (gRPC `InvalidArgument`). */
export class GraphqlRequestError extends Error {
  constructor(readonly errors: readonly GraphQLError[]) {
    super(errors.map((e) => e.message).join('; '))
    this.name = 'GraphqlRequestError'
  }
}

/** The most a query text may hold, in characters, and the most tokens graphql-js parses (a hostile query's cost). */
export const GRAPHQL_QUERY_LIMITS = { maxQueryLength: 100_000, maxTokens: 5_000 } as const

/**
 * Parses a query text within the limits: the document, or the GraphQL error refusing it (too long, too many tokens,
 * nested too deeply for the parser, a syntax error). Every transport checks a query with it before running it.
 */
export function parseQuery(query: string): DocumentNode | GraphQLError {
  if (query.length > GRAPHQL_QUERY_LIMITS.maxQueryLength)
    return new GraphQLError(`query is longer than ${GRAPHQL_QUERY_LIMITS.maxQueryLength} characters`)
  try {
    return parse(query, { maxTokens: GRAPHQL_QUERY_LIMITS.maxTokens })
  } catch (error) {
    if (error instanceof GraphQLError) return error
    // graphql-js recurses per nesting level: thousands of levels overflow the stack.
    if (error instanceof RangeError) return new GraphQLError('query is nested too deeply')
    throw error
  }
}

/** Parses and validates a request; throws GraphqlRequestError with the reasons. */
export function prepare(schema: GraphQLSchema, request: GraphqlRequest): DocumentNode {
  if (typeof request.query !== 'string' || request.query.length === 0)
    throw new GraphqlRequestError([new GraphQLError('query is required')])
  const document = parseQuery(request.query)
  if (document instanceof GraphQLError) throw new GraphqlRequestError([document])
  const errors = validate(schema, document)
  if (errors.length) throw new GraphqlRequestError(errors)
  if (!getOperationAST(document, request.operationName))
    throw new GraphqlRequestError([new GraphQLError('the operation to run is unknown or ambiguous (operationName)')])
  return document
}

/**
 * Runs a request outside mercurius (gRPC): a query answers one result, a subscription an async iterator of results;
 * variable errors come back as a result with `errors`, as graphql-js gives them.
 */
export async function runGraphql(
  schema: GraphQLSchema,
  request: GraphqlRequest,
  context: GraphqlContext,
): Promise<ExecutionResult | AsyncGenerator<ExecutionResult>> {
  const document = prepare(schema, request)
  const operation = getOperationAST(document, request.operationName)
  const args = {
    schema,
    document,
    contextValue: context,
    variableValues: request.variables,
    operationName: request.operationName,
  }
  if (operation?.operation === 'subscription') return subscribe(args) as Promise<AsyncGenerator<ExecutionResult>>
  return execute(args) as Promise<ExecutionResult>
}
