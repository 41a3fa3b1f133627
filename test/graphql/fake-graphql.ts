import type { TestContext } from 'node:test'
import * as grpc from '@grpc/grpc-js'
import { loadSync } from '@grpc/proto-loader'
import websocket from '@fastify/websocket'
import Fastify from 'fastify'
import { buildSchema, type GraphQLFieldConfig, type GraphQLObjectType } from 'graphql'
import { AuthInvalidTokenError, RateLimitExceededError } from '../../src/auth/index.ts'
import { graphqlRoutes } from '../../src/api/routes/graphql.ts'
import {
  addGraphqlGrpcService,
  createGraphqlExecution,
  GRAPHQL_PROTO_PATH,
  type GraphqlAdmit,
  type GraphqlRuntime,
  type GraphqlUsageOutcome,
} from '../../src/graphql/index.ts'
import { onCleanup } from '../_helpers/cleanup.ts'

// The GraphQL transports (routes/graphql.ts over HTTP and WebSocket, the gRPC service) on a runtime of a schema of
// their own, for the tests of this folder: what the meter and the error log were told.

export type Counted = { keyId: string; outcome: GraphqlUsageOutcome | 'documents'; documents: number }

/** Query { hello, page { results }, crash }; Subscription { ticks(count, everyMs) }: `count` ticks, then the end. */
function fakeSchema() {
  const schema = buildSchema(`
    type Page { results: [Int!]! }
    type Query { hello: String, page: Page, crash: String }
    type Subscription { ticks(count: Int!, everyMs: Int): Int }
  `)
  const set = (
    type: GraphQLObjectType | null | undefined,
    field: string,
    config: Partial<GraphQLFieldConfig<unknown, never>>,
  ) => Object.assign(type!.getFields()[field], config)
  set(schema.getQueryType(), 'hello', { resolve: () => 'hello' })
  set(schema.getQueryType(), 'page', { resolve: () => ({ results: [1, 2, 3] }) })
  set(schema.getQueryType(), 'crash', {
    resolve: () => {
      throw new Error('a bug')
    },
  })
  set(schema.getSubscriptionType(), 'ticks', {
    subscribe: async function* (_: unknown, args: { count: number; everyMs?: number }) {
      for (let i = 1; i <= args.count; i++) {
        if (args.everyMs) await new Promise((resolve) => setTimeout(resolve, args.everyMs))
        yield i
      }
    } as never,
    resolve: (value: unknown) => value,
  })
  return schema
}

/** Tokens: `good` is key k1's; `limited` and `revoked` are refusals naming k1; anything else names no key. */
export const admit: GraphqlAdmit = async ({ token }) => {
  if (token === 'good') return { claims: { aki: 'k1' }, rate: { allowed: true, limit: 9, remaining: 8, resetAtMs: 0 } }
  const refusal =
    token === 'limited'
      ? RateLimitExceededError({ scope: 'calls', limit: 1, retryAfterSeconds: 1 })
      : AuthInvalidTokenError({ reason: token ? 'revoked' : 'missing' })
  throw token === 'limited' || token === 'revoked' ? Object.assign(refusal, { keyId: 'k1' }) : refusal
}

/** The app (HTTP, WebSocket) and the gRPC service over one fake runtime, closed after the test. */
export async function serveFakeGraphql(t: TestContext) {
  const counted: Counted[] = []
  const unexpected: unknown[] = []
  const runtime = {
    ...createGraphqlExecution({
      schema: fakeSchema(),
      services: {} as never,
      admit,
      usage: {
        request: (keyId, outcome, documents) => void counted.push({ keyId, outcome, documents }),
        documents: (keyId, documents) => void counted.push({ keyId, outcome: 'documents', documents }),
      },
      onUnexpected: (error) => void unexpected.push(error),
    }),
    services: {} as never,
  } satisfies GraphqlRuntime
  const app = Fastify()
  app.decorateRequest('usageCounted', false)
  await app.register(websocket)
  await app.register(graphqlRoutes, { runtime })
  const api = await app.listen({ host: '127.0.0.1', port: 0 })
  onCleanup(t, () => app.close())
  const server = new grpc.Server()
  addGraphqlGrpcService(server, { execution: runtime })
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  )
  onCleanup(t, () => server.forceShutdown())
  const loaded = grpc.loadPackageDefinition(loadSync(GRAPHQL_PROTO_PATH, { keepCase: true })) as unknown as {
    antler: { graphql: { v1: { GraphQL: grpc.ServiceClientConstructor } } }
  }
  const client = new loaded.antler.graphql.v1.GraphQL(`127.0.0.1:${port}`, grpc.credentials.createInsecure())
  onCleanup(t, () => client.close())
  return { api, client, counted, unexpected }
}
