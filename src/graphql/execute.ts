import {
  createSourceEventStream,
  execute,
  Kind,
  visit,
  type ASTNode,
  type ExecutionResult,
  type GraphQLSchema,
} from 'graphql'
import type { Caller, RateLimitDecision } from '../auth/index.ts'
import { createPayloadMemo } from '../live/index.ts'
import type { GraphqlContext, GraphqlServices, GraphqlUsage, OnUnexpected, TransportBacklog } from './context.ts'
import { graphqlWireError, type GraphqlWireError } from './errors.ts'
import { prepareOperation, readGraphqlRequest, type OperationKind, type PreparedOperation } from './operations.ts'
import { NO_USAGE } from './usage.ts'

/** Token admission (AuthService.admit's shape): it throws Antler's 401/403/429 errors (with the refused key's id). */
export type GraphqlAdmit = (args: { token: string | undefined; caller: Caller }) => Promise<unknown>

/** An admitted caller: the key it counts against and the limit decision (HTTP's `X-RateLimit-*`), when auth is on. */
export interface Admitted {
  readonly keyId: string | undefined
  readonly rate: RateLimitDecision | undefined
}

/** How a transport writes a subscription's results: `name` tells encodings apart in the shared memo. */
export interface PayloadEncoding<T> {
  readonly name: string
  encode(result: ExecutionResult): T
}

/** A started subscription: its events, and each event's payload as the encoding makes it (shared per shape). */
export interface SharedSubscription<T> {
  readonly events: AsyncIterator<unknown>
  payload(event: unknown): Promise<T>
}

/**
 * The one execution layer every transport (HTTP, both WebSocket subprotocols, gRPC, webhooks) adapts: it reads and
 * prepares a request (operations.ts), admits a token, executes a query, starts a subscription whose live events are
 * executed and encoded once per shape, and turns errors into their wire form (logging an unexpected one once).
 */
export interface GraphqlExecution {
  readonly schema: GraphQLSchema
  /** The context of one operation (or one WebSocket connection's operations). */
  context(options?: { backlog?: TransportBacklog; traceId?: string }): GraphqlContext
  /** A request's parameters read and checked, of a kind the transport serves; throws GraphqlRequestError. */
  prepare(
    params: unknown,
    kinds: readonly OperationKind[],
    refusedKind?: (kind: OperationKind) => string,
  ): PreparedOperation
  /** Admits a token (with auth off: anyone); throws the refusal (AntlerError: 401, 403, 429). */
  admit(token: string | undefined, caller: Caller): Promise<Admitted>
  /** Runs a prepared query: its result (errors of its execution inside). */
  execute(operation: PreparedOperation, context: GraphqlContext): Promise<ExecutionResult>
  /** Starts a prepared subscription: its events, or the result refusing it (variables, arguments). */
  subscribe<T>(
    operation: PreparedOperation,
    context: GraphqlContext,
    encoding: PayloadEncoding<T>,
  ): Promise<SharedSubscription<T> | ExecutionResult>
  /** An error in its wire form; one no one expected is logged here, once, under the trace id sent. */
  wireError(error: unknown, traceId?: string): GraphqlWireError
  readonly onUnexpected: OnUnexpected
  /** The usage meter (one that counts nothing when none was given). */
  readonly usage: GraphqlUsage
}

/**
 * The variables the results of a subscription's events depend on: all but those used only in the arguments of the
 * subscription field itself (where the stream starts, its cursor, its limit), which only choose the events: the root
 * field resolves to its event as it is (schema.ts).
 */
function resultVariables({ document, operation, request }: PreparedOperation): Record<string, unknown> {
  const rootArguments = new Set<ASTNode>()
  for (const selection of operation.selectionSet.selections)
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

const executionArgs = (schema: GraphQLSchema, { document, request }: PreparedOperation, context: GraphqlContext) => ({
  schema,
  document,
  contextValue: context,
  variableValues: request.variables,
  operationName: request.operationName,
})

/**
 * The execution layer over a schema and its services. Subscriptions' events are executed and encoded once per event,
 * shape (query text, operation, the variables results depend on) and encoding, not once per subscriber: a live step's
 * results are the same objects for every subscription of one query (forward-stream.ts), so the payload is kept by the
 * event (weakly) in the one memo of this execution layer. Events a subscription made alone (history pages, catch-up)
 * are its own objects: nothing is shared with them.
 */
export function createGraphqlExecution(deps: {
  schema: GraphQLSchema
  services: GraphqlServices
  /** Undefined: auth is off (`--no-auth`), no token is asked for. */
  admit?: GraphqlAdmit
  usage?: GraphqlUsage
  onUnexpected?: OnUnexpected
}): GraphqlExecution {
  const { schema, services } = deps
  const onUnexpected: OnUnexpected = deps.onUnexpected ?? (() => undefined)
  const memo = createPayloadMemo<unknown>()
  return {
    schema,
    onUnexpected,
    usage: deps.usage ?? NO_USAGE,
    context: (options = {}) => ({ services, onUnexpected, ...options }),
    prepare: (params, kinds, refusedKind) => prepareOperation(schema, readGraphqlRequest(params), kinds, refusedKind),
    async admit(token, caller) {
      if (!deps.admit) return { keyId: undefined, rate: undefined }
      const admission = (await deps.admit({ token, caller })) as
        { claims?: { aki?: unknown }; rate?: RateLimitDecision } | undefined
      const aki = admission?.claims?.aki
      return { keyId: typeof aki === 'string' ? aki : undefined, rate: admission?.rate }
    },
    async execute(operation, context) {
      return execute(executionArgs(schema, operation, context)) as ExecutionResult | Promise<ExecutionResult>
    },
    async subscribe<T>(operation: PreparedOperation, context: GraphqlContext, encoding: PayloadEncoding<T>) {
      const args = executionArgs(schema, operation, context)
      const events = await createSourceEventStream(args)
      if (!(Symbol.asyncIterator in events)) return events as ExecutionResult
      const { request } = operation
      const shape = JSON.stringify([
        encoding.name,
        request.query,
        request.operationName ?? null,
        resultVariables(operation),
      ])
      return {
        events: (events as AsyncIterable<unknown>)[Symbol.asyncIterator](),
        payload: (event: unknown) => {
          const run = async () => encoding.encode(await execute({ ...args, rootValue: event }))
          return (event !== null && typeof event === 'object' ? memo(event, shape, run) : run()) as Promise<T>
        },
      }
    },
    wireError: (error, traceId) => graphqlWireError(error, onUnexpected, traceId),
  }
}
