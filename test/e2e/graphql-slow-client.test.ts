import { test } from 'node:test'
import assert from 'node:assert/strict'
import WebSocket from 'ws'
import { issueToken, startPlatform, type Platform } from '../_helpers/platform.ts'
import { pollUntil } from '../_helpers/push.ts'

type Json = Record<string, unknown>

/**
 * A subscription whose results are large (aliases of the whole trace, within the documented 5,000 tokens): with the
 * demo workload's transfers every 200 ms, a client that never reads is soon megabytes behind.
 */
const HEAVY = `subscription { searchTransactionsForward(query: "receiver:eosio.token", lowBlockNum: -3) { cursor
  ${Array.from({ length: 700 }, (_, i) => `t${i}: trace { ...T }`).join(' ')} } }
fragment T on TransactionTrace { id executedActions { ...A } matchingActions { ...A } }
fragment A on ActionTrace { seq receiver account name hexData json authorization { actor permission }
  receipt { digest globalSequence } }`
const SLOW_CODES = ['ws_consumer_too_slow_error', 'stream_consumer_too_slow_error']

const rss = async (p: Platform) =>
  Number(/^antler_process_resident_memory_bytes (\S+)/m.exec(await (await fetch(`${p.api}/metrics`)).text())![1])

/** A legacy socket that starts `count` heavy subscriptions, then stops reading (its TCP socket paused). */
async function slowSubscriber(p: Platform, token: string, count: number) {
  const ws = new WebSocket(`${p.api.replace('http', 'ws')}/graphql`, 'graphql-ws')
  const frames: Json[] = []
  let closed: number | undefined
  ws.on('message', (data: Buffer) => frames.push(JSON.parse(data.toString()) as Json))
  ws.on('close', (code) => (closed = code))
  ws.on('error', () => undefined)
  await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)))
  ws.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: token } }))
  await pollUntil(async () => frames.some((f) => f.type === 'connection_ack'), Boolean, 10_000)
  for (let i = 0; i < count; i++) ws.send(JSON.stringify({ type: 'start', id: `s${i}`, payload: { query: HEAVY } }))
  await pollUntil(async () => frames.some((f) => f.type === 'data'), Boolean, 20_000)
  ;(ws as unknown as { _socket: { pause(): void } })._socket.pause()
  return {
    ws,
    frames,
    closed: () => closed,
    resume: () => (ws as unknown as { _socket: { resume(): void } })._socket.resume(),
    /** The too-slow errors it was sent, or 'closed'. */
    ended: () => {
      const codes = frames
        .filter((f) => f.type === 'error')
        .map((f) => String(((f.payload as { extensions?: Json }).extensions ?? {}).error_code))
      return closed !== undefined ? ['closed', ...codes] : codes.filter((c) => SLOW_CODES.includes(c))
    },
  }
}

test('a /graphql subscriber that never reads: its subscriptions end as too slow, memory stays bounded', async (t) => {
  const p = await startPlatform(t, ['--workload', 'demo', '--block-time', '50', '--lib-depth', '3'])
  const token = await issueToken(p, p.apiKey)
  const before = await rss(p)
  // Many heavy subscriptions on one socket, and a single one on another.
  const many = await slowSubscriber(p, token, 30)
  const single = await slowSubscriber(p, token, 1)
  let peak = before
  for (let s = 0; s < 10; s++) {
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    peak = Math.max(peak, await rss(p))
  }
  t.diagnostic(`RSS ${Math.round(before / 2 ** 20)} MiB before, ${Math.round(peak / 2 ** 20)} MiB at most while paused`)
  many.resume()
  await pollUntil(async () => many.ended().length > 0, Boolean, 30_000).catch(() => undefined)
  // The single subscription's frames first fill the kernel's socket buffers (megabytes); then a frame waits, and the
  // server's write timeout (10 s) ends the connection. The client sees the close once it reads again.
  await new Promise((resolve) => setTimeout(resolve, 25_000))
  single.resume()
  await pollUntil(async () => single.closed() !== undefined, Boolean, 15_000).catch(() => undefined)
  t.diagnostic(`many: ${many.ended().length} too-slow endings (${[...new Set(many.ended())].join(', ')})`)

  await t.test('the server holds a bounded amount for the slow client', () => {
    assert.ok(peak - before < 400 * 2 ** 20, `RSS grew by ${Math.round((peak - before) / 2 ** 20)} MiB`)
    assert.equal(p.cli.child.exitCode, null)
  })

  await t.test(
    'many subscriptions on a socket that never reads end with a too-slow error (or the socket closes)',
    () => {
      assert.ok(many.ended().length > 0, `frames: ${JSON.stringify(many.frames.map((f) => f.type)).slice(0, 400)}`)
      const error = many.frames.find((f) => f.type === 'error')
      if (error) assert.equal(((error.payload as Json).extensions as Json).code, 'ResourceExhausted')
    },
  )

  await t.test('a single subscription on a socket that never reads ends too (docs/API.md, "Limits")', {}, () => {
    assert.ok(single.ended().length > 0, `frames: ${JSON.stringify(single.frames.map((f) => f.type)).slice(0, 400)}`)
  })
  many.ws.close()
  single.ws.close()
})
