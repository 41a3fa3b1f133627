import { AntlerError } from '../antelope/index.ts'
import { buildSchema, GraphQLObjectType, GraphQLScalarType, type GraphQLSchema } from 'graphql'
import type { SearchResult } from './results.ts'
import { accountHistoryActions } from './account-history.ts'
import { searchBackwardStream, type BackwardStreamArgs } from './backward-stream.ts'
import { blockQuery } from './block-query.ts'
import type { GraphqlContext } from './context.ts'
import { formattedGraphqlError, withFormattedErrors } from './errors.ts'
import { failpointError, type GraphqlFailpoint } from './failpoints.ts'
import { ForwardStream, type ForwardStreamArgs } from './forward-stream.ts'
import { searchQueryResolvers } from './query-resolvers.ts'
import { Int64, JSONScalar, Time, Uint32, Uint64 } from './scalars.ts'
import { SCHEMA_SDL } from './schema-sdl.ts'

const SCALARS: readonly GraphQLScalarType[] = [Int64, Uint64, Uint32, JSONScalar, Time]

type Resolver = (source: unknown, args: never, ctx: GraphqlContext) => unknown

const QUERY: Record<string, Resolver> = {
  ...searchQueryResolvers,
  getAccountHistoryActions: accountHistoryActions,
  block: blockQuery,
}

/** Subscriptions: `subscribe` makes the stream, each value is the field's result as it is. */
const SUBSCRIPTION: Record<string, (source: unknown, args: never, ctx: GraphqlContext) => AsyncIterable<SearchResult>> =
  {
    searchTransactionsForward: (_: unknown, args: ForwardStreamArgs, ctx: GraphqlContext) =>
      withFormattedErrors(new ForwardStream(ctx.services, args, ctx.backlog), ctx.onUnexpected),
    searchTransactionsBackward: (_: unknown, args: BackwardStreamArgs, ctx: GraphqlContext) =>
      withFormattedErrors(searchBackwardStream(args, ctx), ctx.onUnexpected),
  }

/**
 * A resolver whose Antler errors come out already formatted (code, details, trace id), so every transport sends them
 * alike, queries over a WebSocket included; other errors stay as they are (the transport logs them as unexpected).
 */
function withAntlerErrors(resolve: Resolver): Resolver {
  return async (source, args, ctx) => {
    try {
      return await resolve(source, args, ctx)
    } catch (error) {
      throw error instanceof AntlerError ? formattedGraphqlError(error, undefined, ctx.traceId) : error
    }
  }
}

/** A stream failing at its first event (the `resolver` failpoint). */
async function* failingStream(): AsyncGenerator<never> {
  yield* []
  throw failpointError()
}

/**
 * The executable schema: the SDL (schema-sdl.ts) with the scalars' implementations and the root resolvers; every
 * other field is read from the objects the resolvers return (trace-model.ts: methods take the field's arguments).
 * `failpoint` (tests only, failpoints.ts) makes every root resolver and stream fail unexpectedly.
 */
export function createGraphqlSchema(failpoint?: GraphqlFailpoint): GraphQLSchema {
  const schema = buildSchema(SCHEMA_SDL)
  for (const scalar of SCALARS) {
    const declared = schema.getType(scalar.name)
    if (!(declared instanceof GraphQLScalarType)) throw new Error(`schema: scalar ${scalar.name} is not declared`)
    Object.assign(declared, {
      description: scalar.description,
      serialize: scalar.serialize,
      parseValue: scalar.parseValue,
      parseLiteral: scalar.parseLiteral,
    })
  }
  const fields = (type: GraphQLObjectType | null | undefined) => {
    if (!type) throw new Error('schema: a root type is missing')
    return type.getFields()
  }
  const query = fields(schema.getQueryType())
  const failing = () => {
    throw failpointError()
  }
  for (const [name, resolve] of Object.entries(QUERY))
    query[name].resolve = withAntlerErrors(failpoint ? failing : resolve) as never
  const subscription = fields(schema.getSubscriptionType())
  for (const [name, subscribe] of Object.entries(SUBSCRIPTION)) {
    subscription[name].subscribe = (
      failpoint
        ? (_: unknown, _args: never, ctx: GraphqlContext) => withFormattedErrors(failingStream(), ctx.onUnexpected)
        : subscribe
    ) as never
    subscription[name].resolve = (value: unknown) => value
  }
  return schema
}
