import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import * as grpc from '@grpc/grpc-js'
import { loadSync } from '@grpc/proto-loader'
import websocket from '@fastify/websocket'
import Fastify from 'fastify'
import { buildSchema, type GraphQLFieldConfig, type GraphQLObjectType } from 'graphql'
import WebSocket from 'ws'
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
import { pollUntil } from '../_helpers/push.ts'

// How each GraphQL transport counts a key's usage through the runtime (the meter's calls), on a schema of its own:
// one request per HTTP request, WebSocket operation or gRPC call by its real outcome, each subscription message one
// document, an unexpected error not counted, a refusal for the key it names.

type Counted = { keyId: string; outcome: GraphqlUsageOutcome | 'documents'; documents: number }

function fakeSchema() {
  const schema = buildSchema(`
    type Page { results: [Int!]! }
    type Query { hello: String, page: Page, crash: String }
    type Subscription { ticks(count: Int!): Int }
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
    subscribe: async function* (_: unknown, args: { count: number }) {
      for (let i = 1; i <= args.count; i++) yield i
    } as never,
    resolve: (value: unknown) => value,
  })
  return schema
}

/** Tokens: `good` is key k1's; `limited` and `revoked` are refusals naming k1; anything else names no key. */
const admit: GraphqlAdmit = async ({ token }) => {
  if (token === 'good') return { claims: { aki: 'k1' }, rate: { allowed: true, limit: 9, remaining: 8, resetAtMs: 0 } }
  const refusal =
    token === 'limited'
      ? RateLimitExceededError({ scope: 'calls', limit: 1, retryAfterSeconds: 1 })
      : AuthInvalidTokenError({ reason: token ? 'revoked' : 'missing' })
  throw token === 'limited' || token === 'revoked' ? Object.assign(refusal, { keyId: 'k1' }) : refusal
}

async function serve(t: TestContext) {
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

/** The meter's calls made by `run`, once they stop changing for a moment (counting may follow the answer). */
async function countedBy(counted: Counted[], run: () => Promise<unknown>, expected: number): Promise<Counted[]> {
  const from = counted.length
  await run()
  await pollUntil(
    async () => counted.length - from,
    (n) => n >= expected,
    5_000,
  ).catch(() => undefined)
  return counted.slice(from)
}

test('usage per GraphQL transport: real outcomes, documents, refusals for their key, unexpected errors uncounted', async (t) => {
  const { api, client, counted } = await serve(t)
  const ok = (documents: number): Counted => ({ keyId: 'k1', outcome: 'ok', documents })
  const as = (outcome: GraphqlUsageOutcome): Counted => ({ keyId: 'k1', outcome, documents: 0 })
  const docs = (n: number): Counted[] =>
    Array.from({ length: n }, () => ({ keyId: 'k1', outcome: 'documents', documents: 1 }))

  // HTTP: always 200, counted by the operation's outcome.
  const post = (token: string | undefined, query: string) =>
    fetch(`${api}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query }),
    }).then((r) => r.json())
  assert.deepEqual(await countedBy(counted, () => post('good', '{ hello }'), 1), [ok(1)], 'http: a query')
  assert.deepEqual(await countedBy(counted, () => post('good', '{ page { results } }'), 1), [ok(3)], 'http: a page')
  assert.deepEqual(await countedBy(counted, () => post('good', '{ nope }'), 1), [as('clientErrors')], 'http: invalid')
  assert.deepEqual(await countedBy(counted, () => post('limited', '{ hello }'), 1), [as('rateLimited')], 'http: 429')
  assert.deepEqual(await countedBy(counted, () => post('revoked', '{ hello }'), 1), [as('authFailures')], 'http: 401')
  assert.deepEqual(await countedBy(counted, () => post(undefined, '{ hello }'), 0), [], 'http: no key, not counted')
  assert.deepEqual(await countedBy(counted, () => post('good', '{ crash }'), 0), [], 'http: Internal, not counted')

  // gRPC: one call, one count; a subscription's messages each a document.
  const call = (token: string, query: string) =>
    new Promise<void>((resolve) => {
      const metadata = new grpc.Metadata()
      metadata.set('authorization', token)
      const stream = (
        client as unknown as { Execute: (r: object, m: grpc.Metadata) => grpc.ClientReadableStream<never> }
      ).Execute({ query }, metadata)
      stream.on('data', () => undefined)
      stream.on('error', () => undefined)
      stream.on('status', () => resolve())
    })
  assert.deepEqual(await countedBy(counted, () => call('good', '{ page { results } }'), 1), [ok(3)], 'grpc: a page')
  assert.deepEqual(await countedBy(counted, () => call('good', '{'), 1), [as('clientErrors')], 'grpc: bad input')
  assert.deepEqual(await countedBy(counted, () => call('limited', '{ hello }'), 1), [as('rateLimited')], 'grpc: 429')
  assert.deepEqual(await countedBy(counted, () => call('revoked', '{ hello }'), 1), [as('authFailures')], 'grpc: 401')
  assert.deepEqual(await countedBy(counted, () => call('good', '{ crash }'), 0), [], 'grpc: Internal, not counted')
  assert.deepEqual(
    await countedBy(counted, () => call('good', 'subscription { ticks(count: 3) }'), 4),
    [ok(0), ...docs(3)],
    'grpc: a subscription',
  )

  // Both WebSocket subprotocols: each operation started counts; each message a document.
  for (const [protocol, start, data] of [
    ['graphql-ws', 'start', 'data'],
    ['graphql-transport-ws', 'subscribe', 'next'],
  ] as const) {
    const socket = new WebSocket(`${api.replace('http', 'ws')}/graphql`, protocol)
    onCleanup(t, () => socket.terminate())
    const frames: { type: string; id?: string }[] = []
    socket.on('message', (text) => void frames.push(JSON.parse(text.toString()) as { type: string; id?: string }))
    await new Promise((resolve) => socket.once('open', resolve))
    const ended = (id: string) =>
      pollUntil(
        async () => frames.some((f) => f.id === id && (f.type === 'complete' || f.type === 'error')),
        Boolean,
        5_000,
      )
    const operation = (id: string, query: string) => async () => {
      socket.send(JSON.stringify({ type: start, id, payload: { query } }))
      await ended(id)
    }
    socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: 'good' } }))
    await pollUntil(async () => frames.some((f) => f.type === 'connection_ack'), Boolean, 5_000)
    assert.deepEqual(await countedBy(counted, operation('q', '{ hello }'), 1), [ok(1)], `${protocol}: a query`)
    assert.deepEqual(await countedBy(counted, operation('bad', '{ nope }'), 1), [as('clientErrors')], protocol)
    assert.deepEqual(
      await countedBy(counted, operation('s', 'subscription { ticks(count: 2) }'), 3),
      [ok(0), ...docs(2)],
      `${protocol}: a subscription`,
    )
    assert.equal(frames.filter((f) => f.id === 's' && f.type === data).length, 2)
    socket.close()
  }
})
