import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'
import * as grpc from '@grpc/grpc-js'
import { loadSync } from '@grpc/proto-loader'
import { buildSchema, type GraphQLFieldConfig, type GraphQLObjectType } from 'graphql'
import { protoPath as healthProtoPath } from 'grpc-health-check'
import { AntlerError } from '../../src/antelope/index.ts'
import { AuthInvalidTokenError, AuthOriginNotAllowedError, RateLimitExceededError } from '../../src/auth/index.ts'
import { createGraphqlExecution, type GraphqlAdmit, type TransportBacklog } from '../../src/graphql/index.ts'
import { addGraphqlGrpcService } from '../../src/graphql/grpc.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { reflectedServices } from '../_helpers/grpc-reflection.ts'
import { pollUntil } from '../_helpers/push.ts'

// GraphQL over gRPC (src/graphql/grpc*.ts) on a schema of its own: admission, refusals, queries, subscriptions,
// cancellation, backpressure, shutdown. test/e2e/graphql-grpc.test.ts runs it against a real antler dev.

const PROTO = fileURLToPath(new URL('../../src/graphql/graphql.proto', import.meta.url))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Response {
  data: string
  errors: { message: string; locations: { line: number; column: number }[]; path: string; extensions: string }[]
}
interface Outcome {
  responses: Response[]
  code: grpc.status
  details: string
  trailers: grpc.Metadata
}
type Execute = (request: object, metadata?: grpc.Metadata) => grpc.ClientReadableStream<Response>

/** What the schema's resolvers saw. */
function probe() {
  return { pulled: 0, released: 0, maxBacklog: 0, unexpected: [] as unknown[], admitted: [] as unknown[] }
}

function fakeSchema(seen: ReturnType<typeof probe>) {
  const schema = buildSchema(`
    type Query { hello(name: String): String, boom: String, crash: String }
    type Subscription { ticks(count: Int!, failAt: Int): Int, blob(size: Int!): String }
  `)
  const set = (
    type: GraphQLObjectType | null | undefined,
    field: string,
    config: Partial<GraphQLFieldConfig<unknown, never>>,
  ) => Object.assign(type!.getFields()[field], config)
  const query = schema.getQueryType()
  set(query, 'hello', { resolve: (_: unknown, args: { name?: string }) => `hello ${args.name ?? 'world'}` })
  set(query, 'boom', {
    resolve: () => {
      throw new AntlerError('request_validation_error', { errors: { query: ['boom'] } })
    },
  })
  set(query, 'crash', {
    resolve: () => {
      throw new Error('secret internals at /srv/app.ts:12')
    },
  })
  const subscription = schema.getSubscriptionType()
  set(subscription, 'ticks', {
    subscribe: async function* (_: unknown, args: { count: number; failAt?: number }) {
      try {
        for (let i = 1; i <= args.count; i++) {
          if (i === args.failAt) throw new AntlerError('request_validation_error', { errors: { tick: [`at ${i}`] } })
          seen.pulled++
          yield i
          await sleep(2)
        }
      } finally {
        seen.released++
      }
    } as never,
    resolve: (value: unknown) => value,
  })
  set(subscription, 'blob', {
    subscribe: async function* (_: unknown, args: { size: number }, ctx: { backlog: TransportBacklog }) {
      try {
        for (;;) {
          const { backlog } = ctx
          seen.maxBacklog = Math.max(seen.maxBacklog, backlog.bufferedBytes())
          if (backlog.bufferedBytes() > backlog.maxBufferedBytes)
            throw new AntlerError('ws_consumer_too_slow_error', {
              buffered_bytes: backlog.bufferedBytes(),
              limit_bytes: backlog.maxBufferedBytes,
            })
          seen.pulled++
          yield 'x'.repeat(args.size)
        }
      } finally {
        seen.released++
      }
    } as never,
    resolve: (value: unknown) => value,
  })
  return schema
}

/** A server with the service on a free port, and clients of its service names. */
async function serve(t: TestContext, options: { admit?: GraphqlAdmit; maxBufferedBytes?: number } = {}) {
  const seen = probe()
  const server = new grpc.Server()
  const service = addGraphqlGrpcService(server, {
    execution: createGraphqlExecution({
      schema: fakeSchema(seen),
      services: {} as never,
      admit: options.admit,
      onUnexpected: (error) => void seen.unexpected.push(error),
    }),
    maxBufferedBytes: options.maxBufferedBytes,
    reflectedProtos: [healthProtoPath],
  })
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  )
  onCleanup(t, () => server.forceShutdown())
  const definition = loadSync(PROTO, { keepCase: true, defaults: true })
  const clients = new Map<string, Execute>()
  const client = (name = 'antler.graphql.v1.GraphQL'): Execute => {
    if (!clients.has(name)) {
      const methods = definition['antler.graphql.v1.GraphQL'] as grpc.ServiceDefinition
      const renamed = { Execute: { ...methods.Execute, path: `/${name}/Execute` } }
      const Client = grpc.makeGenericClientConstructor(renamed, name)
      const instance = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure())
      onCleanup(t, () => instance.close())
      clients.set(name, (request, metadata) =>
        (instance as unknown as { Execute: Execute }).Execute(request, metadata ?? new grpc.Metadata()),
      )
    }
    return clients.get(name)!
  }
  return { seen, server, service, port, client }
}

/** Runs a call to its status. */
function run(call: grpc.ClientReadableStream<Response>): Promise<Outcome> {
  const responses: Response[] = []
  call.on('data', (r: Response) => void responses.push(r))
  call.on('error', () => undefined)
  return new Promise((resolve) =>
    call.on('status', (s: grpc.StatusObject) =>
      resolve({ responses, code: s.code, details: s.details, trailers: s.metadata }),
    ),
  )
}

const withToken = (value: string) => {
  const metadata = new grpc.Metadata()
  metadata.set('authorization', value)
  return metadata
}

test('a query answers one Response with data as JSON text, then OK; every service name answers', async (t) => {
  const { client } = await serve(t)
  for (const name of ['antler.graphql.v1.GraphQL', 'dfuse.graphql.v1.GraphQL', 'dfuse.eosio.v1.GraphQL']) {
    const outcome = await run(
      client(name)({ query: 'query Q($n: String) { hello(name: $n) }', variables: '{"n":"grpc"}', operationName: 'Q' }),
    )
    assert.equal(outcome.code, grpc.status.OK, name)
    assert.deepEqual(
      outcome.responses.map((r) => [JSON.parse(r.data), r.errors]),
      [[{ hello: 'hello grpc' }, []]],
    )
  }
})

test('errors of execution come inside the Response (wire form, JSON-text extensions), never a stack', async (t) => {
  const { client, seen } = await serve(t)
  const outcome = await run(client()({ query: '{ hello boom crash }' }))
  assert.equal(outcome.code, grpc.status.OK)
  const [response] = outcome.responses
  assert.deepEqual(JSON.parse(response.data), { hello: 'hello world', boom: null, crash: null })
  const errors = response.errors.map((e) => ({ ...e, extensions: JSON.parse(e.extensions) }))
  assert.deepEqual(
    errors.map((e) => [e.path, e.extensions.code, e.extensions.error_code, e.locations]),
    [
      ['["boom"]', 'InvalidArgument', 'request_validation_error', [{ line: 1, column: 9 }]],
      ['["crash"]', 'Internal', 'unexpected_error', [{ line: 1, column: 14 }]],
    ],
  )
  assert.match(errors[1].message, /^An unexpected error occurred \(trace_id: [0-9a-f]{32}\)$/)
  assert.doesNotMatch(JSON.stringify(response), /secret|srv|app\.ts/)
  assert.equal(seen.unexpected.length, 1)
})

test('bad input ends the call with INVALID_ARGUMENT and a message saying why', async (t) => {
  const { client } = await serve(t)
  const cases: [object, RegExp][] = [
    [{ query: '' }, /query is required/],
    [{ query: `{ hello ${' '.repeat(100_001)}}` }, /longer than 100000/],
    [{ query: '{ hello' }, /Syntax Error.*\(line 1, column 8\)/],
    [{ query: '{ nope }' }, /Cannot query field "nope"/],
    [{ query: '{ hello }', variables: '{' }, /variables is not JSON text/],
    [{ query: '{ hello }', variables: '[1]' }, /variables must be JSON text of an object/],
    [{ query: '{ hello }', variables: 'null' }, /variables must be JSON text of an object/],
    [{ query: '{ hello }', operationName: 'Other' }, /operation to run is unknown/],
    [{ query: 'query A { hello } query B { hello }' }, /operation to run is unknown or ambiguous/],
  ]
  for (const [request, message] of cases) {
    const outcome = await run(client()(request))
    assert.equal(outcome.code, grpc.status.INVALID_ARGUMENT, JSON.stringify(request).slice(0, 80))
    assert.match(outcome.details, message)
    assert.deepEqual(outcome.responses, [])
  }
  // Variables of the wrong type: a request error, as graphql-js reports it (inside the Response, as over HTTP).
  const typed = await run(client()({ query: 'query Q($n: String) { hello(name: $n) }', variables: '{"n":{}}' }))
  assert.equal(typed.code, grpc.status.OK)
  assert.equal(typed.responses[0].data, '')
  assert.match(typed.responses[0].errors[0].message, /Variable "\$n"/)
  assert.equal(JSON.parse(typed.responses[0].errors[0].extensions).code, 'InvalidArgument')
  // "" is no variables.
  assert.equal((await run(client()({ query: '{ hello }', variables: ' ' }))).code, grpc.status.OK)
})

test('admission: each call asks admit with the token of `authorization` and the peer; refusals map to statuses', async (t) => {
  const admitted: { token: string | undefined; ip: string }[] = []
  const admit: GraphqlAdmit = async ({ token, caller }) => {
    admitted.push({ token, ip: caller.ip })
    if (token === 'expired') throw AuthInvalidTokenError({ reason: 'expired' })
    if (token === 'malformed' || token === undefined)
      throw AuthInvalidTokenError({ reason: token ? 'malformed' : 'missing' })
    if (token === 'web') throw AuthOriginNotAllowedError({ origin: undefined })
    if (token === 'busy') throw RateLimitExceededError({ scope: 'calls', limit: 1, retryAfterSeconds: 7 })
    if (token === 'redis-down') throw new Error('connect ECONNREFUSED 10.0.0.3:6379')
    return {}
  }
  const { client, seen } = await serve(t, { admit })
  const call = async (metadata?: grpc.Metadata) => run(client()({ query: '{ hello }' }, metadata))
  assert.equal((await call(withToken('Bearer good'))).code, grpc.status.OK)
  assert.equal((await call(withToken('good'))).code, grpc.status.OK)
  const none = await call()
  assert.equal(none.code, grpc.status.UNAUTHENTICATED)
  assert.deepEqual(none.responses, [])
  assert.equal((await call(withToken('Bearer expired'))).code, grpc.status.UNAUTHENTICATED)
  assert.equal((await call(withToken('Bearer two words'))).code, grpc.status.UNAUTHENTICATED)
  // Two values (grpc-js clients refuse to send them; an HTTP/2 proxy may join them): malformed.
  assert.equal((await call(withToken('Bearer good, Bearer good'))).code, grpc.status.UNAUTHENTICATED)
  assert.equal((await call(withToken('web'))).code, grpc.status.PERMISSION_DENIED)
  const busy = await call(withToken('busy'))
  assert.equal(busy.code, grpc.status.RESOURCE_EXHAUSTED)
  assert.deepEqual(busy.trailers.get('retry-after'), ['7'])
  const down = await call(withToken('redis-down'))
  assert.equal(down.code, grpc.status.INTERNAL)
  assert.match(down.details, /^An unexpected error occurred \(trace_id: [0-9a-f]{32}\)$/)
  assert.equal(seen.unexpected.length, 1)
  assert.deepEqual(
    admitted.map((a) => a.token),
    ['good', 'good', undefined, 'expired', 'malformed', 'malformed', 'web', 'busy', 'redis-down'],
  )
  assert.ok(admitted.every((a) => a.ip === '127.0.0.1'))
  // A refused call runs nothing: bad input behind a refused token is still UNAUTHENTICATED.
  assert.equal((await run(client()({ query: '{' }))).code, grpc.status.UNAUTHENTICATED)
})

test('a subscription streams one Response per result, then OK; a failing stream sends its error last', async (t) => {
  const { client, seen } = await serve(t)
  const all = await run(client()({ query: 'subscription { ticks(count: 3) }' }))
  assert.equal(all.code, grpc.status.OK)
  assert.deepEqual(
    all.responses.map((r) => r.data),
    ['{"ticks":1}', '{"ticks":2}', '{"ticks":3}'],
  )
  const failed = await run(client()({ query: 'subscription { ticks(count: 5, failAt: 3) }' }))
  assert.equal(failed.code, grpc.status.OK)
  assert.deepEqual(
    failed.responses.map((r) => r.data),
    ['{"ticks":1}', '{"ticks":2}', ''],
  )
  const last = failed.responses[2].errors
  assert.equal(last.length, 1)
  assert.match(last[0].message, /at 3|invalid|request/i)
  assert.deepEqual(
    (({ code, terminal, error_code }) => ({ code, terminal, error_code }))(JSON.parse(last[0].extensions)),
    { code: 'InvalidArgument', terminal: true, error_code: 'request_validation_error' },
  )
  await pollUntil(
    async () => seen.released,
    (n) => n === 2,
  )
})

test('a cancelled subscription is released at once; shutdown ends open calls with UNAVAILABLE', async (t) => {
  const { client, seen, service, server } = await serve(t)
  const call = client()({ query: 'subscription { ticks(count: 1000000) }' })
  const outcome = run(call)
  await pollUntil(
    async () => seen.pulled,
    (n) => n >= 5,
  )
  call.cancel()
  assert.equal((await outcome).code, grpc.status.CANCELLED)
  await pollUntil(
    async () => seen.released,
    (n) => n === 1,
    5_000,
  )
  const pulled = seen.pulled
  await sleep(100)
  assert.equal(seen.pulled, pulled, 'nothing is pulled after the cancel')

  const open = run(client()({ query: 'subscription { ticks(count: 1000000) }' }))
  await pollUntil(
    async () => seen.pulled,
    (n) => n >= pulled + 5,
  )
  service.close()
  const ended = await open
  assert.equal(ended.code, grpc.status.UNAVAILABLE)
  assert.match(ended.details, /shutting down/)
  await pollUntil(
    async () => seen.released,
    (n) => n === 2,
    5_000,
  )
  await new Promise<void>((resolve) => server.tryShutdown(() => resolve()))
})

test('backpressure: a client that stops reading stops the pulls (its buffer full), none ends as too slow', async (t) => {
  const { client, seen } = await serve(t, { maxBufferedBytes: 64 * 1024 * 1024 })
  const call = client()({ query: 'subscription { blob(size: 262144) }' })
  // The client reads one Response, then nothing (a grpc-js client paused before its first read buffers all).
  call.once('data', () => call.pause())
  const outcome = run(call)
  await sleep(1500)
  // The pulls stop once the call's buffer (16 messages) and the connection's (HTTP/2 window, socket) are full; an
  // unbounded loop would pull 256 (64 MiB) by then and end as too slow.
  const pulled = seen.pulled
  await sleep(1000)
  assert.equal(seen.pulled, pulled, 'no pull while the client reads nothing')
  assert.ok(pulled < 100, `pulled ${pulled}`)
  assert.ok(seen.maxBacklog >= 8 * 262144, `the backlog reached ${seen.maxBacklog}`)
  call.cancel()
  assert.equal((await outcome).code, grpc.status.CANCELLED)
  await pollUntil(
    async () => seen.released,
    (n) => n === 1,
  )
})

test('over the bound of unsent bytes the subscription ends as too slow: its error comes last, then OK', async (t) => {
  const { client, seen } = await serve(t, { maxBufferedBytes: 2 * 1024 * 1024 })
  const call = client()({ query: 'subscription { blob(size: 262144) }' })
  call.pause()
  const outcome = run(call)
  call.pause()
  await pollUntil(
    async () => seen.released,
    (n) => n === 1,
  )
  assert.ok(seen.maxBacklog > 2 * 1024 * 1024, `the backlog reached ${seen.maxBacklog}`)
  call.resume()
  const ended = await outcome
  assert.equal(ended.code, grpc.status.OK)
  const last = ended.responses.at(-1)!
  assert.equal(JSON.parse(last.errors[0].extensions).error_code, 'ws_consumer_too_slow_error')
  assert.equal(ended.responses.length, seen.pulled + 1)
})

test('reflection lists antler.graphql.v1.GraphQL and the health service, not the earlier names', async (t) => {
  const { port } = await serve(t)
  assert.deepEqual(await reflectedServices(t, `127.0.0.1:${port}`), [
    'antler.graphql.v1.GraphQL',
    'grpc.health.v1.Health',
  ])
})
