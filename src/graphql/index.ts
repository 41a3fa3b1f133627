import { fileURLToPath } from 'node:url'
import type { GraphQLSchema } from 'graphql'
import { createBlockDecoderSource, createDecoderSource } from '../lifecycle/index.ts'
import type { LiveHub } from '../live/index.ts'
import { createCursorCodec, type SearchService } from '../search/index.ts'
import type { GraphqlContext, GraphqlServices, GraphqlStore, TransportBacklog } from './context.ts'
import { createLiveMatcher } from './live-match.ts'
import { createGraphqlSchema } from './schema.ts'

export type { GraphqlContext, GraphqlServices, GraphqlStore, TransportBacklog } from './context.ts'
export { graphqlWireError, grpcCodeName, type GraphqlWireError } from './errors.ts'
export {
  parseQuery,
  prepare,
  runGraphql,
  createSharedSubscriptions,
  GraphqlRequestError,
  type SharedSubscription,
  type SharedSubscriptions,
  GRAPHQL_QUERY_LIMITS,
  type GraphqlRequest,
} from './execute.ts'
export { SCHEMA_SDL } from './schema-sdl.ts'
export {
  addGraphqlGrpcService,
  GRAPHQL_GRPC_SERVICE,
  GRAPHQL_GRPC_EARLIER_SERVICES,
  type GraphqlGrpcService,
  type GrpcAdmit,
} from './grpc.ts'

/** The gRPC service's proto file (served at `/graphql/graphql.proto`, loaded by the gRPC server). */
export const GRAPHQL_PROTO_PATH = fileURLToPath(new URL('./graphql.proto', import.meta.url))

/** The GraphQL surface every transport serves: one schema and the services its resolvers use. */
export interface GraphqlRuntime {
  readonly schema: GraphQLSchema
  readonly services: GraphqlServices
  /** The context of one operation (or one WebSocket connection's operations). */
  context(backlog?: TransportBacklog): GraphqlContext
}

export function createGraphqlRuntime(deps: {
  search: SearchService
  store: GraphqlStore & Parameters<typeof createDecoderSource>[0]
  live: Pick<LiveHub, 'subscribe'>
  cursorKey: Uint8Array
}): GraphqlRuntime {
  const decoders = createDecoderSource(deps.store)
  const services: GraphqlServices = {
    search: deps.search,
    store: deps.store,
    live: deps.live,
    decoders,
    blockDecoders: createBlockDecoderSource(deps.store),
    cursors: createCursorCodec(deps.cursorKey),
    matcher: createLiveMatcher({ decoders, store: deps.store }),
  }
  const schema = createGraphqlSchema()
  return { schema, services, context: (backlog) => ({ services, backlog }) }
}
