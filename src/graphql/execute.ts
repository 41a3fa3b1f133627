import {
  createSourceEventStream,
  execute,
  getOperationAST,
  Kind,
  visit,
  GraphQLError,
  parse,
  subscribe,
  validate,
  type ASTNode,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
} from 'graphql'
import { createPayloadMemo } from '../live/index.ts'
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

/** What graphql-js's execute, subscribe and createSourceEventStream take for a prepared request. */
function executionArgs(
  schema: GraphQLSchema,
  document: DocumentNode,
  request: GraphqlRequest,
  context: GraphqlContext,
) {
  return {
    schema,
    document,
    contextValue: context,
    variableValues: request.variables,
    operationName: request.operationName,
  }
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
  const args = executionArgs(schema, document, request, context)
  if (operation?.operation === 'subscription') return subscribe(args) as Promise<AsyncGenerator<ExecutionResult>>
  return execute(args) as Promise<ExecutionResult>
}

/**
 * The variables the results of a subscription's events depend on: all but those used only in the arguments of the
 * subscription field itself (where the stream starts, its cursor, its limit), which only choose the events: the root
 * field resolves to its event as it is (schema.ts).
 */
function resultVariables(document: DocumentNode, request: GraphqlRequest): Record<string, unknown> {
  const operation = getOperationAST(document, request.operationName)
  const rootArguments = new Set<ASTNode>()
  for (const selection of operation?.selectionSet.selections ?? [])
    if (selection.kind === Kind.FIELD) for (const argument of selection.arguments ?? []) rootArguments.add(argument)
  const used = new Set<string>()
  visit(document, {
    Variable(node, _key, _parent, _path, ancestors) {
      const within = ancestors as readonly (ASTNode | readonly ASTNode[])[]
      if (
        within.some(
          (a) =>
            !Array.isArray(a) && ((a as ASTNode).kind === Kind.VARIABLE_DEFINITION || rootArguments.has(a as ASTNode)),
        )
      )
        return
      used.add(node.name.value)
    },
  })
  return Object.fromEntries(Object.entries(request.variables ?? {}).filter(([name]) => used.has(name)))
}

/** A started subscription: its events, and each event's payload as the transport sends it (JSON text by default). */
export interface SharedSubscription<T = string> {
  readonly events: AsyncIterator<unknown>
  payload(event: unknown): Promise<T>
}

/**
 * Subscriptions whose events are executed and serialized once per event and shape, not once per subscriber: a live
 * step's results are the same objects for every subscription of one query (forward-stream.ts), so the payload is kept
 * by the event (weakly) and by the shape (query text, operation, the variables results depend on). Events a
 * subscription made alone (history pages, catch-up) are its own objects: nothing is shared with them. `format` turns a
 * result into the payload sent (errors in the documented shape), `encode` the payload into what the transport writes
 * (JSON text; gRPC's Response).
 */
export function createSharedSubscriptions<T = string>(
  schema: GraphQLSchema,
  format: (result: ExecutionResult) => unknown,
  encode: (formatted: unknown) => T = (formatted) => JSON.stringify(formatted) as T,
) {
  const memo = createPayloadMemo<T>()
  return {
    /** Starts a subscription (a prepared document): its events, or the result refusing it (variables, arguments). */
    async subscribe(
      document: DocumentNode,
      request: GraphqlRequest,
      context: GraphqlContext,
    ): Promise<SharedSubscription<T> | ExecutionResult> {
      const args = executionArgs(schema, document, request, context)
      const events = await createSourceEventStream(args)
      if (!(Symbol.asyncIterator in events)) return events as ExecutionResult
      const shape = JSON.stringify([request.query, request.operationName ?? null, resultVariables(document, request)])
      return {
        events: (events as AsyncIterable<unknown>)[Symbol.asyncIterator](),
        payload: (event) => {
          const run = async () => encode(format(await execute({ ...args, rootValue: event })))
          return event !== null && typeof event === 'object' ? memo(event, shape, run) : run()
        },
      }
    },
  }
}

export type SharedSubscriptions<T = string> = ReturnType<typeof createSharedSubscriptions<T>>
