import { fileURLToPath } from 'node:url'
import { createBlockDecoderSource, createDecoderSource } from '../lifecycle/index.ts'
import { createPayloadMemo, type LiveHub } from '../live/index.ts'
import { createCursorCodec, type SearchService } from '../search/index.ts'
import type { GraphqlServices, GraphqlStore, GraphqlUsage, OnUnexpected } from './context.ts'
import { createGraphqlExecution, type GraphqlAdmit, type GraphqlExecution } from './execute.ts'
import { graphqlFailpoint } from './failpoints.ts'
import { createLiveMatcher } from './live-match.ts'
import { createGraphqlSchema } from './schema.ts'

export { GRAPHQL_MAX_BUFFERED_BYTES } from './context.ts'
export type {
  GraphqlContext,
  GraphqlServices,
  GraphqlStore,
  GraphqlUsage,
  GraphqlUsageOutcome,
  OnUnexpected,
  TransportBacklog,
} from './context.ts'
export { graphqlWireError, grpcCodeName, type GraphqlWireError, type GrpcCodeName } from './errors.ts'
export {
  createGraphqlExecution,
  type Admitted,
  type GraphqlAdmit,
  type GraphqlExecution,
  type PayloadEncoding,
  type SharedSubscription,
} from './execute.ts'
export {
  parseQuery,
  GraphqlRequestError,
  GRAPHQL_QUERY_LIMITS,
  MAX_QUERY_DEPTH,
  type GraphqlRequest,
  type OperationKind,
  type PreparedOperation,
} from './operations.ts'
export { answerDocuments, countRequest, refusalOutcome, usageOutcome } from './usage.ts'
export { SCHEMA_SDL } from './schema-sdl.ts'
export {
  addGraphqlGrpcService,
  GRAPHQL_GRPC_SERVICE,
  GRAPHQL_GRPC_EARLIER_SERVICES,
  type GraphqlGrpcService,
} from './grpc.ts'

/** The gRPC service's proto file (served at `/graphql/graphql.proto`, loaded by the gRPC server). */
export const GRAPHQL_PROTO_PATH = fileURLToPath(new URL('./graphql.proto', import.meta.url))

/** The GraphQL surface every transport serves: one schema, its services and the one execution layer over them. */
export interface GraphqlRuntime extends GraphqlExecution {
  readonly services: GraphqlServices
}

export function createGraphqlRuntime(deps: {
  search: SearchService
  store: GraphqlStore & Parameters<typeof createDecoderSource>[0]
  live: Pick<LiveHub, 'subscribe'>
  cursorKey: Uint8Array
  /** Token admission (AuthService.admit); undefined with `--no-auth`. */
  admit?: GraphqlAdmit
  /** The usage meter every transport reports to. */
  usage?: GraphqlUsage
  /** Where errors no one expected are logged, once each, with the trace id the client got. */
  onUnexpected?: OnUnexpected
}): GraphqlRuntime {
  const decoders = createDecoderSource(deps.store)
  const stepResults = createPayloadMemo<unknown>()
  const services: GraphqlServices = {
    search: deps.search,
    store: deps.store,
    live: deps.live,
    decoders,
    blockDecoders: createBlockDecoderSource(deps.store),
    cursors: createCursorCodec(deps.cursorKey),
    matcher: createLiveMatcher({ decoders, store: deps.store }),
    stepResults: stepResults as GraphqlServices['stepResults'],
  }
  const schema = createGraphqlSchema(graphqlFailpoint())
  return {
    ...createGraphqlExecution({
      schema,
      services,
      admit: deps.admit,
      usage: deps.usage,
      onUnexpected: deps.onUnexpected,
    }),
    services,
  }
}
