import { test } from 'node:test'
import assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'
import * as grpc from '@grpc/grpc-js'
import { loadSync } from '@grpc/proto-loader'
import { onCleanup } from '../_helpers/cleanup.ts'
import { LegacyGraphqlClient, modernGraphqlClient } from '../_helpers/graphql.ts'
import { issueToken, startPlatform } from '../_helpers/platform.ts'
import { pollUntil } from '../_helpers/push.ts'

/*
 * An error no one expected, on every GraphQL transport: with the `resolver` failpoint (ANTLER_GRAPHQL_FAILPOINT,
 * src/graphql/failpoints.ts) every root resolver and subscription stream of a running antler dev throws. Each answer
 * carries an `Internal` error with a trace id, and that trace id is in exactly one line of the server's output: the
 * error logged once, under the id the client was told (GraphQL over HTTP: the response's X-Trace-Id).
 */

const PROTO = fileURLToPath(new URL('../../src/graphql/graphql.proto', import.meta.url))
const QUERY = '{ block(num: 1) { id } }'
const SUBSCRIPTION = 'subscription { searchTransactionsForward(query: "receiver:eosio.token") { cursor } }'

type ErrorObject = { message?: string; extensions?: { code?: string; trace_id?: string } }

/** The trace id of an `Internal` error (fails on anything else). */
function internalTraceId(what: string, errors: unknown): string {
  const [error] = (Array.isArray(errors) ? errors : [errors]) as ErrorObject[]
  assert.equal(error?.extensions?.code, 'Internal', `${what}: ${JSON.stringify(errors)}`)
  assert.match(String(error.extensions.trace_id), /^[0-9a-f]{32}$/, what)
  assert.ok(error.message?.includes(error.extensions.trace_id!), `${what}: the message names the trace id`)
  return error.extensions.trace_id!
}

test('an unexpected resolver error: the client trace_id is in exactly one server log line, on every transport', async (t) => {
  const p = await startPlatform(t, ['--block-time', '50'], { ANTLER_GRAPHQL_FAILPOINT: 'resolver' })
  const token = await issueToken(p, p.apiKey)
  const traceIds = new Map<string, string>()

  // HTTP: the errors' trace id is the response's X-Trace-Id.
  const response = await fetch(`${p.api}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: QUERY }),
  })
  assert.equal(response.status, 200)
  const http = internalTraceId('http', ((await response.json()) as { errors: unknown }).errors)
  assert.equal(http, response.headers.get('x-trace-id'), 'the X-Trace-Id')
  traceIds.set('http query', http)

  // Legacy graphql-ws (@dfuse/client's): a query's data frame, a subscription's error frame.
  const legacy = await LegacyGraphqlClient.connect(p.api, token, t)
  const legacyAnswer = (id: string, query: string) =>
    new Promise<unknown>((resolve) =>
      legacy.start(
        id,
        query,
        {},
        {
          next: (payload) => resolve(payload.errors),
          error: (payload) => resolve(payload),
          complete: () => resolve('complete without an error'),
        },
      ),
    )
  traceIds.set('legacy query', internalTraceId('legacy query', await legacyAnswer('q', QUERY)))
  traceIds.set('legacy subscription', internalTraceId('legacy subscription', await legacyAnswer('s', SUBSCRIPTION)))

  // graphql-transport-ws, through the graphql-ws client.
  const modern = modernGraphqlClient(t, p.api, token)
  const modernAnswer = (query: string) =>
    new Promise<unknown>((resolve) =>
      modern.subscribe(
        { query },
        {
          next: (value) => resolve(value.errors),
          error: (error) => resolve(error),
          complete: () => resolve('complete without an error'),
        },
      ),
    )
  traceIds.set('modern query', internalTraceId('modern query', await modernAnswer(QUERY)))
  traceIds.set('modern subscription', internalTraceId('modern subscription', await modernAnswer(SUBSCRIPTION)))

  // gRPC: the error inside the Response (extensions as JSON text), for a query and a subscription.
  const loaded = grpc.loadPackageDefinition(loadSync(PROTO, { keepCase: true, defaults: true })) as unknown as {
    antler: { graphql: { v1: { GraphQL: grpc.ServiceClientConstructor } } }
  }
  const client = new loaded.antler.graphql.v1.GraphQL(p.grpc, grpc.credentials.createInsecure())
  onCleanup(t, () => client.close())
  const metadata = new grpc.Metadata()
  metadata.set('authorization', `Bearer ${token}`)
  const grpcAnswer = (query: string) =>
    new Promise<unknown>((resolve, reject) => {
      const errors: unknown[] = []
      const call = (
        client as unknown as { Execute: (r: object, m: grpc.Metadata) => grpc.ClientReadableStream<never> }
      ).Execute({ query }, metadata)
      call.on('data', (r: { errors: { message: string; extensions: string }[] }) =>
        errors.push(...r.errors.map((e) => ({ message: e.message, extensions: JSON.parse(e.extensions) as unknown }))),
      )
      call.on('error', reject)
      call.on('end', () => resolve(errors))
    })
  traceIds.set('grpc query', internalTraceId('grpc query', await grpcAnswer(QUERY)))
  traceIds.set('grpc subscription', internalTraceId('grpc subscription', await grpcAnswer(SUBSCRIPTION)))

  assert.equal(new Set(traceIds.values()).size, traceIds.size, 'a trace id per error')
  const lines = () => `${p.cli.stdout()}\n${p.cli.stderr()}`.split('\n')
  // Logging is asynchronous: wait until every trace id was written, then count.
  await pollUntil(
    async () => [...traceIds.values()].every((id) => lines().some((line) => line.includes(id))),
    Boolean,
    10_000,
  ).catch(() => undefined)
  for (const [what, traceId] of traceIds) {
    const logged = lines().filter((line) => line.includes(traceId))
    assert.equal(logged.length, 1, `${what}: trace id ${traceId} in ${logged.length} log lines:\n${logged.join('\n')}`)
    const entry = JSON.parse(logged[0]) as { level?: number; trace_id?: string; err?: { message?: string } }
    assert.equal(entry.trace_id, traceId, what)
    assert.match(String(entry.err?.message), /failpoint/, `${what}: the cause is logged`)
  }
})
