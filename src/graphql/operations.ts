import {
  getOperationAST,
  GraphQLError,
  Kind,
  parse,
  validate,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql'

/** One GraphQL request as a transport received it. */
export interface GraphqlRequest {
  readonly query: string
  readonly variables?: Record<string, unknown>
  readonly operationName?: string
}

/** The kinds of operation (a transport serves some of them). */
export type OperationKind = 'query' | 'mutation' | 'subscription'

/** A request parsed and validated: ready to execute or subscribe. */
export interface PreparedOperation {
  readonly request: GraphqlRequest
  readonly document: DocumentNode
  readonly operation: OperationDefinitionNode
}

/** Why a request was refused before it ran: the transport's "bad input" (gRPC `InvalidArgument`). */
export class GraphqlRequestError extends Error {
  constructor(readonly errors: readonly GraphQLError[]) {
    super(errors.map((e) => e.message).join('; '))
    this.name = 'GraphqlRequestError'
  }
}

const refuse = (message: string): never => {
  throw new GraphqlRequestError([new GraphQLError(message)])
}

/** The most a query text may hold, in characters, and the most tokens graphql-js parses (a hostile query's cost). */
export const GRAPHQL_QUERY_LIMITS = { maxQueryLength: 100_000, maxTokens: 5_000 } as const

/** Nesting an operation may reach, fragments followed (createdActions and creatorAction recurse). */
export const MAX_QUERY_DEPTH = 16

/**
 * Parses a query text within the limits: the document, or the GraphQL error refusing it (too long, too many tokens,
 * nested too deeply for the parser, a syntax error).
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

/** `variables` given as JSON text (GET's query string, gRPC): an object, "" for none. */
function variablesOfText(text: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return refuse('variables is not JSON text')
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return refuse('variables must be JSON text of an object')
  return value as Record<string, unknown>
}

/**
 * A request's parameters as any transport received them (a JSON body, a query string, a WebSocket payload, a gRPC
 * Request) checked for shape: `query` a non-empty string, `variables` an object or JSON text of one, `operationName`
 * a string ("" is none). Throws GraphqlRequestError.
 */
export function readGraphqlRequest(params: unknown): GraphqlRequest {
  if (!params || typeof params !== 'object' || Array.isArray(params))
    return refuse('the request must be a JSON object {query, variables?, operationName?}')
  const { query, variables, operationName } = params as Record<string, unknown>
  if (query === undefined || query === null || query === '') return refuse('query is required')
  if (typeof query !== 'string' || query.trim() === '') return refuse('query is required (a non-empty string)')
  if (operationName != null && typeof operationName !== 'string') return refuse('operationName must be a string')
  let vars: Record<string, unknown> | undefined
  if (typeof variables === 'string') vars = variablesOfText(variables)
  else if (variables != null) {
    if (typeof variables !== 'object' || Array.isArray(variables)) return refuse('variables must be a JSON object')
    vars = variables as Record<string, unknown>
  }
  return { query, ...(vars ? { variables: vars } : {}), ...(operationName ? { operationName } : {}) }
}

/** How deep a selection set nests, fragments followed (an inline fragment counts as a level too). */
function selectionDepth(document: DocumentNode, set: SelectionSetNode | undefined, seen = new Set<string>()): number {
  if (!set) return 0
  let deepest = 0
  for (const selection of set.selections) {
    if (selection.kind === Kind.FRAGMENT_SPREAD) {
      const name = selection.name.value
      if (seen.has(name)) continue
      const fragment = document.definitions.find(
        (d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === name,
      )
      deepest = Math.max(deepest, selectionDepth(document, fragment?.selectionSet, new Set(seen).add(name)))
    } else deepest = Math.max(deepest, selectionDepth(document, selection.selectionSet, seen))
  }
  return deepest + 1
}

/**
 * The one check of a request before it runs, on every transport: parsed within the limits, valid against the
 * schema, nested at most MAX_QUERY_DEPTH deep, one operation to run (operationName), of a kind the transport serves
 * (`refusedKind` says why another is not). Throws GraphqlRequestError.
 */
export function prepareOperation(
  schema: GraphQLSchema,
  request: GraphqlRequest,
  kinds: readonly OperationKind[],
  refusedKind: (kind: OperationKind) => string = (kind) => `a ${kind} is not served here`,
): PreparedOperation {
  if (typeof request.query !== 'string' || request.query.length === 0) refuse('query is required')
  const document = parseQuery(request.query)
  if (document instanceof GraphQLError) throw new GraphqlRequestError([document])
  const errors = validate(schema, document)
  if (errors.length) throw new GraphqlRequestError(errors)
  const operation = getOperationAST(document, request.operationName)
  if (!operation) return refuse('the operation to run is unknown or ambiguous (operationName)')
  const kind = operation.operation as OperationKind
  if (!kinds.includes(kind)) refuse(refusedKind(kind))
  const depth = selectionDepth(document, operation.selectionSet)
  if (depth > MAX_QUERY_DEPTH) refuse(`the operation nests ${depth} levels deep, more than ${MAX_QUERY_DEPTH}`)
  return { request, document, operation }
}
