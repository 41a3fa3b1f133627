import { test } from 'node:test'
import assert from 'node:assert/strict'
import * as grpc from '@grpc/grpc-js'
import WebSocket from 'ws'
import type { GraphqlUsageOutcome } from '../../src/graphql/index.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { pollUntil } from '../_helpers/push.ts'
import { serveFakeGraphql, type Counted } from './fake-graphql.ts'

// How each GraphQL transport counts a key's usage through the runtime (the meter's calls), on a schema of its own:
// one request per HTTP request, WebSocket operation or gRPC call by its real outcome, each subscription message one
// document, an unexpected error not counted, a refusal for the key it names.

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
  const { api, client, counted } = await serveFakeGraphql(t)
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
