import { fileURLToPath } from 'node:url'
import { status as Status, type Server, type ServerWritableStream, type ServiceDefinition } from '@grpc/grpc-js'
import { loadSync } from '@grpc/proto-loader'
import { ReflectionService } from '@grpc/reflection'
import { GRAPHQL_MAX_BUFFERED_BYTES } from './context.ts'
import type { GraphqlExecution } from './execute.ts'
import { GraphqlGrpcCall, grpcEncoding, type GraphqlGrpcDeps } from './grpc-call.ts'
import { GrpcCallError, type GrpcGraphqlRequest, type GrpcGraphqlResponse } from './grpc-wire.ts'

/** The service's name; reflection lists this one only. */
export const GRAPHQL_GRPC_SERVICE = 'antler.graphql.v1.GraphQL'
/** dfuse's names of the same service, answered by the same implementation (clients built on dfuse's protos). */
export const GRAPHQL_GRPC_EARLIER_SERVICES: readonly string[] = ['dfuse.graphql.v1.GraphQL', 'dfuse.eosio.v1.GraphQL']

const PROTO_PATH = fileURLToPath(new URL('./graphql.proto', import.meta.url))
const PROTO_OPTIONS = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true } as const

/** The GraphQL service on a gRPC server: close() ends its open calls (a server waits for them before it stops). */
export interface GraphqlGrpcService {
  /** Ends every open call with `UNAVAILABLE`, releasing their subscriptions. */
  close(): void
}

/** A service definition answering under another service name (each method's path renamed). */
function renamed(service: ServiceDefinition, name: string): ServiceDefinition {
  return Object.fromEntries(
    Object.entries(service).map(([method, definition]) => [
      method,
      { ...definition, path: definition.path.replace(/^\/[^/]+\//, `/${name}/`) },
    ]),
  )
}

/**
 * Adds GraphQL over gRPC to `server`: `antler.graphql.v1.GraphQL/Execute` (graphql.proto, loaded once here) and the
 * same implementation under dfuse's names (GRAPHQL_GRPC_EARLIER_SERVICES), plus server reflection over graphql.proto
 * and `reflectedProtos` (e.g. the health service's), which lists the earlier names nowhere. How a call is admitted,
 * run and ended: grpc-call.ts, on the runtime's execution layer (its admission, usage meter and error log).
 */
export function addGraphqlGrpcService(
  server: Pick<Server, 'addService'>,
  options: {
    execution: GraphqlExecution
    /** Bytes one call may hold unsent before its subscription ends as too slow (as a GraphQL WebSocket). */
    maxBufferedBytes?: number
    reflectedProtos?: readonly string[]
  },
): GraphqlGrpcService {
  const definition = loadSync([PROTO_PATH, ...(options.reflectedProtos ?? [])], PROTO_OPTIONS)
  const service = definition[GRAPHQL_GRPC_SERVICE] as ServiceDefinition
  const deps: GraphqlGrpcDeps = {
    execution: options.execution,
    maxBufferedBytes: options.maxBufferedBytes ?? GRAPHQL_MAX_BUFFERED_BYTES,
    encoding: grpcEncoding(options.execution),
  }
  const calls = new Set<GraphqlGrpcCall>()
  const implementation = {
    Execute(call: ServerWritableStream<GrpcGraphqlRequest, GrpcGraphqlResponse>) {
      const served = new GraphqlGrpcCall(call, deps)
      calls.add(served)
      void served.serve().finally(() => calls.delete(served))
    },
  }
  for (const name of [GRAPHQL_GRPC_SERVICE, ...GRAPHQL_GRPC_EARLIER_SERVICES])
    server.addService(name === GRAPHQL_GRPC_SERVICE ? service : renamed(service, name), implementation)
  new ReflectionService(definition).addToServer(server)
  return {
    close() {
      for (const call of calls) call.shutdown(new GrpcCallError(Status.UNAVAILABLE, 'the server is shutting down'))
    },
  }
}
