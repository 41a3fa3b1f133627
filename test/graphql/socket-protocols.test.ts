import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import WebSocket from 'ws'
import { onCleanup } from '../_helpers/cleanup.ts'
import { pollUntil } from '../_helpers/push.ts'
import { serveFakeGraphql } from './fake-graphql.ts'

// The two `/graphql` WebSocket protocol modules (routes/graphql-ws-legacy.ts, graphql-ws-modern.ts) on a schema of
// their own: admission at the upgrade and in connection_init, frames in arrival order, keep-alives, the bound of 32
// operations per socket, restarts and stops.

type Frame = { type: string; id?: string; payload?: unknown }
type Protocol = 'graphql-ws' | 'graphql-transport-ws'
const START = { 'graphql-ws': 'start', 'graphql-transport-ws': 'subscribe' } as const
const STOP = { 'graphql-ws': 'stop', 'graphql-transport-ws': 'complete' } as const
const DATA = { 'graphql-ws': 'data', 'graphql-transport-ws': 'next' } as const
const TICKING = 'subscription { ticks(count: 100000, everyMs: 20) }'

async function connect(t: TestContext, api: string, protocol: Protocol, headers: Record<string, string> = {}) {
  const socket = new WebSocket(`${api.replace('http', 'ws')}/graphql`, protocol, { headers })
  onCleanup(t, () => socket.terminate())
  const frames: Frame[] = []
  let closed = false
  socket.on('message', (text) => void frames.push(JSON.parse(text.toString()) as Frame))
  socket.on('close', () => (closed = true))
  await new Promise((resolve, reject) => (socket.once('open', resolve), socket.once('error', reject)))
  const send = (frame: object) => socket.send(JSON.stringify(frame))
  const until = (what: string, done: (frames: Frame[]) => boolean) =>
    pollUntil(async () => done(frames), Boolean, 5_000).catch(() =>
      assert.fail(`${protocol}: ${what}; frames: ${JSON.stringify(frames).slice(-600)}`),
    )
  return { socket, frames, send, until, closed: () => closed }
}

/** The error object of an error frame (legacy: one object; modern: an array of them). */
const errorOf = (frame: Frame) =>
  (Array.isArray(frame.payload) ? frame.payload[0] : frame.payload) as { extensions?: Record<string, unknown> }

for (const protocol of ['graphql-ws', 'graphql-transport-ws'] as const) {
  test(`${protocol}: frames in arrival order, 32 operations at most, stop and restart`, async (t) => {
    const { api } = await serveFakeGraphql(t)
    const s = await connect(t, api, protocol)
    // A start right behind connection_init, unanswered yet: handled after it, so admitted.
    s.send({ type: 'connection_init', payload: { Authorization: 'Bearer good' } })
    s.send({ type: START[protocol], id: 'q', payload: { query: '{ hello }' } })
    await s.until('the query answered', (f) => f.some((x) => x.id === 'q' && x.type === 'complete'))
    assert.deepEqual(
      s.frames.filter((f) => f.id === 'q').map((f) => f.type),
      [DATA[protocol], 'complete'],
    )
    for (let i = 0; i < 32; i++) s.send({ type: START[protocol], id: `s${i}`, payload: { query: TICKING } })
    s.send({ type: START[protocol], id: 'extra', payload: { query: TICKING } })
    await s.until('the 33rd refused', (f) => f.some((x) => x.id === 'extra' && x.type === 'error'))
    const refusal = errorOf(s.frames.find((f) => f.id === 'extra')!)
    assert.equal(refusal.extensions?.error_code, 'ws_too_much_stream_error', JSON.stringify(refusal))
    if (protocol === 'graphql-ws') assert.ok(!Array.isArray(s.frames.find((f) => f.id === 'extra')!.payload))
    await s.until(
      'all 32 running',
      (f) => new Set(f.filter((x) => x.type === DATA[protocol]).map((x) => x.id)).size >= 33,
    )
    // A stop ends one (its complete), and its place is free again.
    s.send({ type: STOP[protocol], id: 's0' })
    await s.until('s0 completed', (f) => f.some((x) => x.id === 's0' && x.type === 'complete'))
    s.send({ type: START[protocol], id: 'extra2', payload: { query: TICKING } })
    await s.until('extra2 runs', (f) => f.some((x) => x.id === 'extra2' && x.type === DATA[protocol]))
    if (protocol === 'graphql-ws') {
      // A start reusing a running id (at the bound): the running one stops without its complete, the new one runs.
      const before = s.frames.length
      s.send({ type: 'start', id: 's1', payload: { query: 'subscription { ticks(count: 2) }' } })
      await s.until('s1 restarted and done', (f) => f.slice(before).some((x) => x.id === 's1' && x.type === 'complete'))
      const s1 = s.frames.slice(before).filter((f) => f.id === 's1')
      const ticks = s1.map((f) => (f.type === 'data' ? (f.payload as { data: { ticks: number } }).data.ticks : f.type))
      // Only the new operation's complete, last, after its two ticks (the old one's last ticks may come before).
      assert.deepEqual(ticks.slice(-3), [1, 2, 'complete'], JSON.stringify(ticks))
      assert.equal(ticks.filter((x) => x === 'complete').length, 1, JSON.stringify(ticks))
      assert.ok(!ticks.includes('error'), JSON.stringify(s1))
    } else {
      s.send({ type: 'subscribe', id: 's1', payload: { query: TICKING } })
      await s.until('a running id refused', (f) => f.some((x) => x.id === 's1' && x.type === 'error'))
    }
  })

  test(`${protocol}: admission at the upgrade and in connection_init; keep-alives`, async (t) => {
    const { api } = await serveFakeGraphql(t)
    // A bad token at the upgrade: HTTP 401 with the standard error object, no socket.
    const refused = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const socket = new WebSocket(`${api.replace('http', 'ws')}/graphql`, protocol, {
        headers: { authorization: 'Bearer revoked' },
      })
      socket.on('unexpected-response', (_request, response) => {
        let body = ''
        response.on('data', (chunk: Buffer) => (body += chunk))
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }))
      })
      socket.on('open', () => reject(new Error('upgraded')))
      socket.on('error', () => undefined)
    })
    assert.equal(refused.status, 401)
    assert.equal((JSON.parse(refused.body) as { code: string }).code, 'auth_invalid_token_error')
    // A good token at the upgrade serves a connection_init without one.
    const s = await connect(t, api, protocol, { authorization: 'Bearer good' })
    s.send({ type: 'connection_init' })
    await s.until('acknowledged', (f) => f.some((x) => x.type === 'connection_ack'))
    // A refused connection_init: connection_error with the standard object, the socket open.
    const other = await connect(t, api, protocol)
    other.send({ type: 'connection_init', payload: { authorization: 'limited' } })
    await other.until('refused', (f) => f.some((x) => x.type === 'connection_error'))
    assert.equal((other.frames[0].payload as { code: string }).code, 'rate_limit_exceeded_error')
    assert.equal(other.closed(), false)
    if (protocol === 'graphql-ws') {
      await s.until('a ka after the ack', (f) => f.some((x) => x.type === 'ka'))
      s.send({ type: 'connection_terminate' })
      await s.until('closed by connection_terminate', () => s.closed())
    } else {
      s.send({ type: 'ping' })
      await s.until('a pong', (f) => f.some((x) => x.type === 'pong'))
    }
  })
}
