import { test } from 'node:test'
import assert from 'node:assert/strict'
import WebSocket from 'ws'
import { APIClient } from '@wharfkit/antelope'
import type { GraphqlStreamMessage, Stream } from '@dfuse/client'
import { dfuseClient, startPlatform } from '../_helpers/platform.ts'
import { pollUntil, pushActions, waitIndexed } from '../_helpers/push.ts'
import { startTcpProxy } from '../_helpers/tcp-proxy.ts'

/** Every frame the client sends on its sockets, to see what it asks when it reconnects. */
const sentFrames: Record<string, unknown>[] = []
class TrackedWebSocket extends WebSocket {
  constructor(...args: ConstructorParameters<typeof WebSocket>) {
    super(...args)
    const send = this.send.bind(this) as (data: unknown, ...rest: unknown[]) => void
    this.send = ((data: unknown, ...rest: unknown[]) => {
      if (typeof data === 'string') sentFrames.push(JSON.parse(data) as Record<string, unknown>)
      send(data, ...rest)
    }) as WebSocket['send']
  }
}
;(globalThis as { WebSocket?: unknown }).WebSocket = TrackedWebSocket

type Json = Record<string, unknown>
type Result = {
  undo: boolean
  cursor: string
  isIrreversible: boolean
  block: { num: number }
  trace: { id: string; matchingActions: { json: Json }[] } | null
}
const FORWARD = `subscription ($cursor: String, $low: Int64, $high: Int64, $interval: Uint32, $q: String!) {
  searchTransactionsForward(query: $q, cursor: $cursor, lowBlockNum: $low, highBlockNum: $high,
    liveMarkerInterval: $interval) {
    undo cursor isIrreversible block { num } trace { id matchingActions { json } } } }`
const BACKWARD = `subscription ($q: String!, $low: Int64, $high: Int64) {
  searchTransactionsBackward(query: $q, lowBlockNum: $low, highBlockNum: $high) {
    cursor isIrreversible block { num } trace { id matchingActions { json } } } }`

const transfer = (to: string, memo: string) => ({
  account: 'eosio.token',
  name: 'transfer',
  actor: 'alice',
  data: { from: 'alice', to, quantity: '0.0001 EOS', memo },
})

/** The messages of one subscription, each data result marked as the client's resume point. */
function collector(field: string) {
  const results: Result[] = []
  const messages: GraphqlStreamMessage[] = []
  return {
    results,
    messages,
    onMessage: (message: GraphqlStreamMessage, stream: Stream) => {
      messages.push(message)
      if (message.type !== 'data') return
      const result = (message.data as Record<string, Result>)[field]
      results.push(result)
      stream.mark({ cursor: result.cursor })
    },
    until: (done: () => boolean, what: string, timeoutMs = 30_000) =>
      pollUntil(async () => done(), Boolean, timeoutMs).catch(() =>
        assert.fail(`${what}; got ${JSON.stringify(messages).slice(0, 1500)}`),
      ),
  }
}

test('GraphQL subscriptions via @dfuse/client (legacy graphql-ws): live, a cut resumed, markers', async (t) => {
  const p = await startPlatform(t, ['--lib-depth', '4'])
  const chain = new APIClient({ url: p.chainApi })
  const proxy = await startTcpProxy(t, p.api)
  // HTTP (the token) straight to the API, the WebSocket through the proxy; reconnects after 200 ms.
  const client = dfuseClient(
    t,
    { api: proxy.url, apiKey: p.apiKey },
    { authUrl: p.api, graphqlStreamClientOptions: { socketOptions: { reconnectDelayInMs: 200 } } },
  )
  const lib = async () =>
    ((await (await fetch(`${p.api}/healthz`)).json()) as { last_irreversible_block_num: number })
      .last_irreversible_block_num

  await t.test(
    'history then live, each result with a cursor; after a cut the client resumes from its mark: no gap, no duplicate',
    async () => {
      const history = [
        await pushActions(chain, [transfer('bob', 'h0')]),
        await pushActions(chain, [transfer('bob', 'h1')]),
      ]
      await pollUntil(lib, (n) => n >= history[1].blockNum, 30_000)
      const c = collector('searchTransactionsForward')
      const q = 'receiver:eosio.token action:transfer data.to:bob'
      const stream = await client.graphql(FORWARD, c.onMessage, { variables: { q, low: history[0].blockNum } })
      await c.until(() => c.results.length >= 2, 'the two transfers of history')
      const live = [
        await pushActions(chain, [transfer('bob', 'l0')]),
        await pushActions(chain, [transfer('bob', 'l1')]),
      ]
      await c.until(() => c.results.length >= 4, 'the two live transfers')
      assert.equal(proxy.connections(), 1)
      const markedBeforeCut = c.results.at(-1)!.cursor
      const startsBefore = sentFrames.filter((f) => f.type === 'start').length

      proxy.cut()
      const during = [
        await pushActions(chain, [transfer('bob', 'd0')]),
        await pushActions(chain, [transfer('bob', 'd1')]),
      ]
      await waitIndexed(p.api, during[1].blockNum)
      await new Promise((resolve) => setTimeout(resolve, 500))
      assert.equal(c.results.length, 4, 'nothing arrives while the network is down')
      proxy.restore()
      const after = await pushActions(chain, [transfer('bob', 'a0')])
      await c.until(() => c.results.length >= 7, 'the transfers pushed during and after the cut')
      await new Promise((resolve) => setTimeout(resolve, 1000))
      await stream.close()

      const all = [...history, ...live, ...during, after]
      assert.deepEqual(
        c.results.map((r) => r.trace?.id),
        all.map((x) => x.id),
      )
      assert.deepEqual(
        c.results.map((r) => r.trace?.matchingActions[0].json.memo),
        ['h0', 'h1', 'l0', 'l1', 'd0', 'd1', 'a0'],
      )
      assert.deepEqual(
        c.results.map((r) => r.block.num),
        all.map((x) => x.blockNum),
      )
      assert.ok(c.results.every((r) => !r.undo && /^[\w-]+$/.test(r.cursor)))
      assert.equal(new Set(c.results.map((r) => r.cursor)).size, c.results.length, 'a cursor per result')
      assert.ok(c.results[0].isIrreversible && c.results[1].isIrreversible, 'history is irreversible')
      assert.deepEqual(
        c.messages.filter((m) => m.type !== 'data'),
        [],
      )
      assert.ok(proxy.connections() >= 2, 'the client reconnected by itself')
      // It asked for the stream again from the cursor it had marked last.
      const restarts = sentFrames.filter((f) => f.type === 'start').slice(startsBefore)
      assert.ok(restarts.length >= 1, 'a start after the reconnect')
      const variables = (restarts[0].payload as { variables: Json }).variables
      assert.equal(variables.cursor, markedBeforeCut)
      assert.equal(variables.q, q)
    },
  )

  await t.test(
    'liveMarkerInterval 3: once live, a marker (trace null) every third block, between the matches',
    async () => {
      const c = collector('searchTransactionsForward')
      const q = 'receiver:eosio.token action:transfer data.to:carol'
      const stream = await client.graphql(FORWARD, c.onMessage, { variables: { q, interval: 3 } })
      await c.until(() => c.results.length >= 3, 'three markers')
      const pushed = await pushActions(chain, [transfer('carol', 'between markers')])
      await c.until(
        () => c.results.filter((r) => r.trace === null && r.block.num > pushed.blockNum).length >= 2,
        'the transfer, then markers',
      )
      await stream.close()
      const markers = c.results.filter((r) => r.trace === null)
      for (let i = 1; i < markers.length; i++)
        assert.equal(markers[i].block.num - markers[i - 1].block.num, 3, JSON.stringify(markers.map((m) => m.block)))
      assert.ok(markers.every((m) => /^[\w-]+$/.test(m.cursor) && !m.undo))
      const matches = c.results.filter((r) => r.trace !== null)
      assert.deepEqual(
        matches.map((r) => r.trace!.id),
        [pushed.id],
      )
      // Results come in block order, markers included.
      const nums = c.results.map((r) => r.block.num)
      assert.deepEqual(
        nums,
        [...nums].sort((a, b) => a - b),
      )
    },
  )

  await t.test('searchTransactionsBackward: a finite stream, newest first, then complete', async () => {
    const pushed = [
      await pushActions(chain, [transfer('carol', 'b0')]),
      await pushActions(chain, [transfer('carol', 'b1')]),
    ]
    await waitIndexed(p.api, pushed[1].blockNum)
    const c = collector('searchTransactionsBackward')
    const variables = { q: 'action:transfer receiver:eosio.token data.to:carol', low: pushed[0].blockNum }
    await client.graphql(BACKWARD, c.onMessage, { variables })
    await c.until(() => c.messages.some((m) => m.type === 'complete'), 'the completion')
    assert.deepEqual(
      c.results.map((r) => r.trace?.id),
      pushed.map((x) => x.id).reverse(),
    )
    assert.deepEqual(
      c.messages.map((m) => m.type),
      ['data', 'data', 'complete'],
    )
  })

  await t.test(
    'a refused subscription: one error object, terminal; the client starts it again after 2.5 s',
    async () => {
      const c = collector('searchTransactionsForward')
      const stream = await client.graphql(FORWARD, c.onMessage, { variables: { q: 'receiver:(' } })
      await c.until(() => c.messages.filter((m) => m.type === 'error').length >= 2, 'two errors', 15_000)
      await stream.close()
      const errors = c.messages.filter((m) => m.type === 'error')
      for (const message of errors) {
        assert.equal(message.terminal, true)
        // The frame's payload is one error object: the client hands it over as errors[0].
        const [error] = message.errors as unknown as { message: string; extensions: Json }[]
        assert.equal(error.extensions.code, 'InvalidArgument', JSON.stringify(message))
        assert.equal(error.extensions.error_code, 'request_validation_error')
      }
      const starts = sentFrames.filter((f) => f.type === 'start' && f.id === (stream as unknown as { id: string }).id)
      assert.ok(starts.length >= 2, `the same id started again: ${starts.length}`)
    },
  )

  await t.test(
    'raw socket: a start reusing a running id restarts that operation (one stream, no complete)',
    async () => {
      const ws = new WebSocket(`${p.api.replace('http', 'ws')}/graphql`, 'graphql-ws')
      const frames: Json[] = []
      ws.on('message', (data: Buffer) => frames.push(JSON.parse(data.toString()) as Json))
      await new Promise((resolve) => ws.once('open', resolve))
      const { token } = (await (
        await fetch(`${p.api}/v1/auth/issue`, { method: 'POST', body: JSON.stringify({ api_key: p.apiKey }) })
      ).json()) as { token: string }
      ws.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: token } }))
      const start = {
        type: 'start',
        id: 'x',
        payload: { query: FORWARD, variables: { q: 'receiver:nobody', interval: 1 } },
      }
      ws.send(JSON.stringify(start))
      await pollUntil(
        async () => frames.filter((f) => f.type === 'data').length,
        (n) => n >= 3,
        10_000,
      )
      const before = frames.length
      ws.send(JSON.stringify(start))
      await new Promise((resolve) => setTimeout(resolve, 2_000))
      ws.close()
      const after = frames.slice(before)
      assert.deepEqual(
        after.filter((f) => f.type !== 'data'),
        [],
      )
      const nums = after.map(
        (f) => (f.payload as { data: Record<string, Result> }).data.searchTransactionsForward.block.num,
      )
      assert.ok(nums.length >= 5, `markers after the restart: ${nums}`)
      // One stream: the old operation's frames already on their way when the server took the restart come first, then
      // the restarted one's; two operations running side by side would interleave and step back again and again.
      const stepsBack = nums.filter((n, i) => i > 0 && n <= nums[i - 1])
      assert.ok(stepsBack.length <= 1, `one stream: ${nums}`)
    },
  )
})
