import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import * as grpc from '@grpc/grpc-js'
import { loadSync } from '@grpc/proto-loader'
import { APIClient } from '@wharfkit/antelope'
import WebSocket from 'ws'
import { onCleanup } from '../_helpers/cleanup.ts'
import { tempDir } from '../_helpers/devchain.ts'
import { graphqlQuery, modernGraphqlClient } from '../_helpers/graphql.ts'
import { issueToken, startPlatform, type Platform } from '../_helpers/platform.ts'
import { createKeyWithFetch, eventually, setUpWithFetch } from '../_helpers/portal.ts'
import { pushActions } from '../_helpers/push.ts'
import { keyMetrics, portalKeyUsage, type KeyUsageCounts } from '../_helpers/usage.ts'
import { startWebhookReceiver } from '../_helpers/webhook-receiver.ts'

// One key's usage over every transport (REST, GraphQL over HTTP, WebSocket and gRPC, /v1/stream, webhooks): each
// transport moves it, GraphQL by the operation's outcome (not HTTP's 200), and the portal's figures equal /metrics.

const OPTIONS = { timeout: 180_000 }
const TRANSFERS = 3
const QUERY = 'receiver:eosio.token action:transfer'
const SEARCH = `query ($query: String!) {
  searchTransactionsForward(query: $query, lowBlockNum: 1, limit: 10, irreversibleOnly: false) {
    results { trace { id } }
  }
}`
const SUBSCRIPTION = `subscription ($query: String!) {
  searchTransactionsForward(query: $query, lowBlockNum: 1, irreversibleOnly: false) { trace { id } }
}`

/** `GraphQL/Execute` over gRPC with the proto the API serves: the responses of one call, in order. */
async function grpcExecute(
  t: TestContext,
  p: Platform,
  token: string,
  query: string,
  variables: Record<string, unknown>,
): Promise<unknown[]> {
  const file = join(tempDir(t, 'antler-usage-proto-'), 'graphql.proto')
  writeFileSync(file, await (await fetch(`${p.api}/graphql/graphql.proto`)).text())
  const loaded = grpc.loadPackageDefinition(loadSync(file, { keepCase: true, defaults: true })) as unknown as {
    antler: { graphql: { v1: { GraphQL: grpc.ServiceClientConstructor } } }
  }
  const client = new loaded.antler.graphql.v1.GraphQL(p.grpc, grpc.credentials.createInsecure())
  onCleanup(t, () => client.close())
  const metadata = new grpc.Metadata()
  metadata.set('authorization', `Bearer ${token}`)
  const call = (client as unknown as { Execute: (r: object, m: grpc.Metadata) => grpc.ClientReadableStream<unknown> })
    .Execute
  const stream = call.call(client, { query, variables: JSON.stringify(variables) }, metadata)
  const responses: unknown[] = []
  for await (const response of stream) responses.push(response)
  return responses
}

/** Opens `/v1/stream`, listens to head info and closes after `count` messages of it. */
async function streamHeadInfo(api: string, token: string, count: number): Promise<void> {
  const socket = new WebSocket(`${api.replace(/^http/, 'ws')}/v1/stream?token=${token}`)
  await new Promise<void>((resolve, reject) => {
    let seen = 0
    socket.on('open', () => socket.send(JSON.stringify({ type: 'get_head_info', req_id: 'head', listen: true })))
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as { type: string }
      if (message.type === 'error') reject(new Error(data.toString()))
      if (message.type === 'head_info' && ++seen === count) resolve()
    })
    socket.on('error', reject)
  })
  await new Promise<void>((resolve) => {
    socket.once('close', () => resolve())
    socket.close()
  })
}

/** Takes `count` messages of a subscription over the modern WebSocket protocol, then completes it. */
async function subscribeModern(t: TestContext, api: string, token: string, count: number): Promise<void> {
  const client = modernGraphqlClient(t, api, token)
  const subscription = client.iterate({ query: SUBSCRIPTION, variables: { query: QUERY } })
  let seen = 0
  for await (const message of subscription) {
    assert.equal(message.errors, undefined, JSON.stringify(message.errors))
    if (++seen === count) break
  }
  await client.dispose()
}

const sum = (c: KeyUsageCounts) => c.ok + c.clientErrors + c.authFailures + c.rateLimited

test('one key over every transport: each moves its usage, and the portal equals /metrics', OPTIONS, async (t) => {
  const p = await startPlatform(t)
  const base = p.api.replace('0.0.0.0', '127.0.0.1')
  const cookie = await setUpWithFetch(base, p.dataDir)
  const { id, key } = await createKeyWithFetch(base, cookie, { name: 'transports', type: 'server' })
  const token = await issueToken({ api: base }, key)
  const chain = new APIClient({ url: p.chainApi })
  for (let i = 0; i < TRANSFERS; i++) {
    const data = { from: 'alice', to: 'bob', quantity: '0.0001 EOS', memo: `usage ${i}` }
    await pushActions(chain, [{ account: 'eosio.token', name: 'transfer', actor: 'alice', data }])
  }
  let before = await keyMetrics(base, id)
  /** Runs one transport's traffic and waits until /metrics shows at least what it must have counted. */
  const counted = async (what: string, run: () => Promise<unknown>, least: Partial<KeyUsageCounts>) => {
    await run()
    const from = before
    before = await eventually(`${what}: counted`, async () => {
      const now = await keyMetrics(base, id)
      const short = Object.entries(least).filter(
        ([field, n]) => now[field as keyof KeyUsageCounts] - from[field as keyof KeyUsageCounts] < n,
      )
      return short.length === 0 ? now : undefined
    })
  }

  const auth = { authorization: `Bearer ${token}` }
  await counted('REST', () => fetch(`${base}/v0/state/abi?account=eosio.token`, { headers: auth }), {
    ok: 1,
    documents: 1,
  })
  await counted('GraphQL over HTTP, a query', () => graphqlQuery(base, token, SEARCH, { query: QUERY }), { ok: 1 })
  const refused = await graphqlQuery(base, token, '{ notAField }')
  assert.ok(refused.errors?.length, 'a query of an unknown field is refused')
  const afterRefusal = await eventually('GraphQL over HTTP, a refused query: a client error', async () => {
    const now = await keyMetrics(base, id)
    return now.clientErrors > before.clientErrors ? now : undefined
  })
  assert.equal(afterRefusal.ok, before.ok, 'a refused GraphQL query is not counted as ok')
  before = afterRefusal
  await counted('GraphQL over WebSocket', () => subscribeModern(t, base, token, TRANSFERS), {
    ok: 1,
    documents: TRANSFERS,
  })
  await counted('GraphQL over gRPC', () => grpcExecute(t, p, token, SEARCH, { query: QUERY }), { ok: 1 })
  await counted('/v1/stream', () => streamHeadInfo(base, token, 3), { documents: 3 })

  const receiver = await startWebhookReceiver(t)
  const created = await fetch(`${base}/v1/webhooks`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiver.url('/usage'), query: QUERY, start_block: 1 }),
  })
  const webhook = (await created.json()) as { id: string }
  assert.equal(created.status, 201, JSON.stringify(webhook))
  await counted(
    'webhooks',
    () => eventually('deliveries', async () => (receiver.deliveries.length >= TRANSFERS ? true : undefined), 30_000),
    { documents: TRANSFERS },
  )
  const deleted = await fetch(`${base}/v1/webhooks/${webhook.id}`, { method: 'DELETE', headers: auth })
  assert.equal(deleted.status, 204)

  // Every transport's counts reach the store (every 2 s) and /metrics alike: the two agree once traffic stops.
  const agreed = await eventually(
    'the portal equals /metrics',
    async () => {
      const [metrics, portal] = [await keyMetrics(base, id), await portalKeyUsage(base, cookie, id)]
      return isDeepStrictEqual(metrics, portal) ? portal : undefined
    },
    15_000,
  )
  assert.ok(sum(agreed) >= 8 && agreed.documents >= 3 * TRANSFERS + 3, JSON.stringify(agreed))
})
