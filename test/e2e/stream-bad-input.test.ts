import { test } from 'node:test'
import assert from 'node:assert/strict'
import WebSocket from 'ws'
import { isStandardError, issueToken, startPlatform } from '../_helpers/platform.ts'
import { mulberry32 } from '../_helpers/random.ts'

const SEED = Number(process.env.ANTLER_SEED ?? Date.now() % 1_000_000)
/** What the server may send on /v1/stream (docs/API.md, "Wire facts"). */
const OUT_TYPES = new Set([
  'listening',
  'unlistened',
  'progress',
  'error',
  'ping',
  'action_trace',
  'table_snapshot',
  'table_delta',
  'transaction_lifecycle',
  'head_info',
])
const TYPES = [
  'get_action_traces',
  'get_actions',
  'get_table_rows',
  'get_transaction_lifecycle',
  'get_transaction',
  'get_head_info',
  'unlisten',
  'pong',
  'get_nothing',
  '',
  'GET_HEAD_INFO',
]
const FIELDS = ['type', 'req_id', 'fetch', 'listen', 'start_block', 'irreversible_only', 'with_progress', 'data']
const DATA_FIELDS = [
  'accounts',
  'account',
  'receivers',
  'receiver',
  'action_names',
  'action_name',
  'code',
  'scope',
  'table',
  'json',
  'id',
  'req_id',
  'with_inline_traces',
  'with_dbops',
  'with_fork_steps',
]

test(`/v1/stream under thousands of random and mutated frames (seed ${SEED}): every reply is a protocol message or the standard error object, the socket stays open, the server keeps serving`, async (t) => {
  const random = mulberry32(SEED)
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]
  const p = await startPlatform(t)
  const token = await issueToken(p, p.apiKey)
  const ws = new WebSocket(`${p.api.replace('http', 'ws')}/v1/stream?token=${token}`)
  const replies: Record<string, unknown>[] = []
  const bad: string[] = []
  ws.on('message', (data: Buffer) => {
    let message: Record<string, unknown>
    try {
      message = JSON.parse(data.toString()) as Record<string, unknown>
    } catch {
      bad.push(`not JSON: ${data.toString().slice(0, 100)}`)
      return
    }
    replies.push(message)
    if (!OUT_TYPES.has(message.type as string)) bad.push(`unknown type: ${JSON.stringify(message).slice(0, 200)}`)
    if (message.type === 'error' && !isStandardError(message.data))
      bad.push(`non-standard error: ${JSON.stringify(message).slice(0, 200)}`)
    if (message.type === 'error' && /at .*\.ts:\d+/.test(JSON.stringify(message.data)))
      bad.push(`a stack trace: ${JSON.stringify(message).slice(0, 200)}`)
  })
  let closed: number | undefined
  ws.on('close', (code) => (closed = code))
  await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)))

  const value = (depth = 0): unknown => {
    switch (Math.floor(random() * (depth > 2 ? 8 : 10))) {
      case 0:
        return Math.floor(random() * 2 ** 53) * (random() < 0.5 ? -1 : 1)
      case 1:
        return random() < 0.5
      case 2:
        return null
      case 3:
        return 'x'.repeat(Math.floor(random() * 3000))
      case 4:
        return pick([
          'eosio',
          'eosio.token',
          '',
          'alice|bob',
          ' | ',
          'ab'.repeat(32),
          '0',
          '-1',
          '1e3',
          'NaN',
          '😀',
          '\u0000',
        ])
      case 5:
        return random() * 1e20
      case 6:
        return Math.floor(random() * 100) - 50
      case 7:
        return 'ab'.repeat(Math.floor(random() * 40))
      case 8:
        return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1))
      default:
        return Object.fromEntries(
          Array.from({ length: Math.floor(random() * 5) }, () => [pick(DATA_FIELDS), value(depth + 1)]),
        )
    }
  }
  const frame = (): string | Buffer => {
    const kind = random()
    if (kind < 0.05)
      return Buffer.from(Array.from({ length: Math.floor(random() * 64) }, () => Math.floor(random() * 256)))
    if (kind < 0.1)
      return pick([
        '',
        '{',
        '[]',
        'null',
        '"x"',
        '{"type":1}',
        '{"type":null}',
        '{}',
        '{"type":"get_head_info","data":[]}',
      ])
    const message: Record<string, unknown> = {
      type: pick(TYPES),
      req_id: random() < 0.8 ? `r${Math.floor(random() * 20)}` : value(),
    }
    for (const field of FIELDS) if (random() < 0.4) message[field] = field === 'data' ? value() : value()
    if (random() < 0.7)
      message.data = Object.fromEntries(
        Array.from({ length: Math.floor(random() * 5) }, () => [pick(DATA_FIELDS), value()]),
      )
    if (random() < 0.5) message.listen = true
    const text = JSON.stringify(message)
    // Mutations of a well-formed frame: a cut, a flipped character, a duplicated piece.
    if (random() < 0.15) return text.slice(0, Math.floor(random() * text.length))
    if (random() < 0.15) {
      const i = Math.floor(random() * text.length)
      return text.slice(0, i) + String.fromCharCode(32 + Math.floor(random() * 95)) + text.slice(i + 1)
    }
    return text
  }

  const FRAMES = 3_000
  for (let i = 0; i < FRAMES; i++) {
    ws.send(frame())
    // Every 12 frames: unlisten what may run, so the listener limit does not answer everything.
    if (i % 12 === 11)
      for (let r = 0; r < 20; r++) ws.send(JSON.stringify({ type: 'unlisten', req_id: 'u', data: { req_id: `r${r}` } }))
    if (i % 200 === 199) await new Promise((resolve) => setTimeout(resolve, 20))
  }
  // The server answers in order: a last request's reply means every frame before it was handled.
  ws.send(JSON.stringify({ type: 'get_head_info', req_id: 'last', fetch: true }))
  const deadline = Date.now() + 60_000
  while (!replies.some((m) => m.req_id === 'last') && Date.now() < deadline && closed === undefined)
    await new Promise((resolve) => setTimeout(resolve, 50))
  assert.equal(closed, undefined, 'the socket stayed open')
  assert.ok(
    replies.some((m) => m.req_id === 'last'),
    'the last request was answered',
  )
  assert.deepEqual(bad, [])
  const errors = replies.filter((m) => m.type === 'error')
  assert.ok(errors.length > FRAMES / 4, `${errors.length} error replies`)
  const health = await fetch(`${p.api}/healthz`)
  assert.equal(health.status, 200)
  ws.close()
})
