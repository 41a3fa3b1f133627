import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import WebSocket from 'ws'
import { isStandardError, issueToken, startPlatform, type Platform } from '../_helpers/platform.ts'
import { assertNoLeak } from '../_helpers/http.ts'
import { pollUntil } from '../_helpers/push.ts'
import { mulberry32 } from '../_helpers/random.ts'

/**
 * Bad input on the `/graphql` WebSocket, in both subprotocols: refused tokens, frames before `connection_init`,
 * garbage and binary frames, unknown types, frames over the size limit, operations with bad arguments, and a seeded
 * fuzz of mutated frames. Errors come back in the protocol's error frames, the server survives and keeps serving.
 */

type Json = Record<string, unknown>
type Protocol = 'graphql-ws' | 'graphql-transport-ws'
const PROTOCOLS: Protocol[] = ['graphql-ws', 'graphql-transport-ws']
const START = { 'graphql-ws': 'start', 'graphql-transport-ws': 'subscribe' } as const
const STOP = { 'graphql-ws': 'stop', 'graphql-transport-ws': 'complete' } as const
const DATA = { 'graphql-ws': 'data', 'graphql-transport-ws': 'next' } as const
const SERVER_TYPES = {
  'graphql-ws': new Set(['connection_ack', 'connection_error', 'data', 'error', 'complete', 'ka']),
  'graphql-transport-ws': new Set(['connection_ack', 'connection_error', 'next', 'error', 'complete', 'ping', 'pong']),
}
const CODES = new Set(['Unauthenticated', 'InvalidArgument', 'NotFound', 'ResourceExhausted', 'Internal'])
const SEED = Number(process.env.ANTLER_FUZZ_SEED ?? randomBytes(4).readUInt32LE(0))

/** A socket on /graphql with every frame it received, checked against the protocol as they come. */
async function connect(p: Platform, protocol: Protocol) {
  const ws = new WebSocket(`${p.api.replace('http', 'ws')}/graphql`, protocol)
  const frames: Json[] = []
  const problems: string[] = []
  let closed: number | undefined
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    const text = data.toString()
    try {
      assertNoLeak(text)
    } catch (error) {
      problems.push((error as Error).message.slice(0, 200))
    }
    let frame: Json
    try {
      frame = JSON.parse(text) as Json
    } catch {
      return void problems.push(`not JSON: ${text.slice(0, 100)}`)
    }
    if (isBinary) problems.push('a binary frame')
    if (!SERVER_TYPES[protocol].has(frame.type as string)) problems.push(`type: ${text.slice(0, 200)}`)
    frames.push(frame)
  })
  ws.on('close', (code) => (closed = code))
  ws.on('error', () => undefined)
  await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)))
  const send = (frame: unknown) =>
    ws.readyState === WebSocket.OPEN &&
    ws.send(typeof frame === 'string' || Buffer.isBuffer(frame) ? frame : JSON.stringify(frame))
  const next = async (done: (f: Json) => boolean, what: string, timeoutMs = 10_000) =>
    (await pollUntil(async () => frames.find(done), Boolean, timeoutMs).catch(() =>
      assert.fail(`${protocol}: ${what}; got ${JSON.stringify(frames).slice(-800)}, closed ${closed}`),
    ))!
  return { ws, frames, problems, send, next, closed: () => closed }
}

/**
 * Writes the start of a masked text frame that declares `length` bytes, and 8 KB of it. Sending the whole frame would
 * race the server's close: once it has refused from the header, the unread rest resets the connection and the client
 * may see 1006 before it reads the 1009 close frame.
 */
function sendOversizedFrameStart(ws: WebSocket, length: number): void {
  const header = Buffer.alloc(14)
  header[0] = 0x81 // FIN, text
  header[1] = 0x80 | 127 // masked, 64-bit length
  header.writeBigUInt64BE(BigInt(length), 2)
  randomBytes(4).copy(header, 10)
  const payload = Buffer.from(`{"type":"x","payload":"${'x'.repeat(8 * 1024)}`)
  for (let i = 0; i < payload.length; i++) payload[i] ^= header[10 + (i % 4)]
  ;(ws as unknown as { _socket: { write(b: Buffer): void } })._socket.write(Buffer.concat([header, payload]))
}

/** The error objects of an operation's error frame (legacy: one object; modern: an array), or of a data frame. */
function errorsOf(protocol: Protocol, frame: Json): Json[] {
  if (frame.type === 'error') return protocol === 'graphql-ws' ? [frame.payload as Json] : (frame.payload as Json[])
  return ((frame.payload as { errors?: Json[] }).errors ?? []) as Json[]
}

/** Why an error object is not of the documented shape ({message, locations?, path?, extensions: {code, …}}). */
function shapeProblem(error: Json): string | undefined {
  const x = error?.extensions as Json | undefined
  if (typeof error?.message !== 'string') return 'no message'
  if (!x || !CODES.has(x.code as string)) return `extensions.code of ${JSON.stringify(error).slice(0, 200)}`
  if (!/^[0-9a-f]{32}$/.test(String(x.trace_id)) || typeof x.terminal !== 'boolean') return 'trace_id / terminal'
  return undefined
}

const SUB = (args: string, fields = 'cursor') => `subscription { searchTransactionsForward(${args}) { ${fields} } }`
const VARS_SUB = `subscription ($q: String!, $low: Int64, $cursor: String, $limit: Int64, $interval: Uint32) {
  searchTransactionsForward(query: $q, lowBlockNum: $low, cursor: $cursor, limit: $limit,
    liveMarkerInterval: $interval) { cursor } }`

const BACKWARD_SUB = `subscription ($q: String!, $limit: Int64) {
  searchTransactionsBackward(query: $q, limit: $limit) { cursor } }`

test(`/graphql WebSocket bad input, both subprotocols (seed ${SEED}): error frames, serving on`, async (t) => {
  const p = await startPlatform(t, ['--workload', 'demo', '--lib-depth', '3', '--block-time', '50'])
  const token = await issueToken(p, p.apiKey)
  const random = mulberry32(SEED)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]
  const shapes: string[] = []
  const cursorAnswer = await pollUntil(
    async () =>
      (await (
        await fetch(`${p.api}/graphql`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
          body: JSON.stringify({
            query: '{ searchTransactionsBackward(query: "receiver:eosio.token", limit: 1) { cursor } }',
          }),
        })
      ).json()) as { data?: { searchTransactionsBackward?: { cursor: string } } },
    (a) => Boolean(a.data?.searchTransactionsBackward?.cursor),
    30_000,
  )
  const cursor = cursorAnswer.data!.searchTransactionsBackward!.cursor
  const altered = cursor.slice(0, 8) + (cursor[8] === 'A' ? 'B' : 'A') + cursor.slice(9)

  for (const protocol of PROTOCOLS) {
    const ready = async () => {
      const s = await connect(p, protocol)
      s.send({ type: 'connection_init', payload: { Authorization: token } })
      await s.next((f) => f.type === 'connection_ack', 'the connection_ack')
      return s
    }

    await t.test(`${protocol}: a refused token is a connection_error with the standard object`, async () => {
      for (const bad of ['garbage', `${token.slice(0, -4)}AAAA`, '']) {
        const s = await connect(p, protocol)
        s.send({ type: 'connection_init', payload: { Authorization: bad } })
        const refusal = await s.next((f) => f.type === 'connection_error' || f.type === 'connection_ack', 'an answer')
        assert.equal(refusal.type, 'connection_error', `${bad}: ${JSON.stringify(refusal)}`)
        assert.ok(isStandardError(refusal.payload), JSON.stringify(refusal))
        assert.equal((refusal.payload as Json).code, 'auth_invalid_token_error')
        await new Promise((resolve) => setTimeout(resolve, 200))
        assert.equal(s.closed(), undefined, 'the socket stays open')
        // A good token on the same socket is then admitted.
        s.send({ type: 'connection_init', payload: { Authorization: `Bearer ${token}` } })
        await s.next((f) => f.type === 'connection_ack', 'the ack of a good token')
        assert.deepEqual(s.problems, [])
        s.ws.close()
      }
    })

    await t.test(`${protocol}: an operation before connection_init is refused in an error frame`, async () => {
      const s = await connect(p, protocol)
      s.send({ type: START[protocol], id: 'early', payload: { query: SUB('query: "receiver:eosio"') } })
      const answer = await s.next((f) => f.type === 'connection_error' || f.type === 'error', 'a refusal')
      assert.equal(
        typeof (Array.isArray(answer.payload) ? answer.payload[0] : (answer.payload as Json)).message,
        'string',
      )
      assert.ok(!s.frames.some((f) => f.type === DATA[protocol]), 'no data before the connection is admitted')
      assert.deepEqual(s.problems, [])
      s.ws.close()
    })

    await t.test(
      `${protocol}: garbage, binary and unknown frames are answered with errors; the socket serves on`,
      async () => {
        const s = await ready()
        const frames: unknown[] = [
          'garbage',
          '{',
          '[]',
          '"text"',
          '{"type":1}',
          { type: 'nope', id: 'x' },
          { type: START[protocol] },
          { type: START[protocol], id: 'no-payload' },
          { type: START[protocol], id: 'query-number', payload: { query: 5 } },
          { type: START[protocol], id: 'query-object', payload: { query: { kind: 'Document' } } },
          Buffer.from([0, 1, 2, 255]),
          Buffer.from('{"type":"connection_init"}'),
        ]
        for (const frame of frames) s.send(frame)
        await new Promise((resolve) => setTimeout(resolve, 1_000))
        assert.equal(s.closed(), undefined, 'the socket stays open')
        assert.ok(s.frames.filter((f) => f.type === 'error').length >= frames.length - 3, JSON.stringify(s.frames))
        // Legacy: pong and ka are ignored (@dfuse/client sends a pong every 30 s); modern: ping is answered.
        const answered = s.frames.length
        const keepAlive = protocol === 'graphql-ws' ? [{ type: 'pong' }, { type: 'ka' }] : [{ type: 'ping' }]
        for (const frame of keepAlive) s.send(frame)
        await new Promise((resolve) => setTimeout(resolve, 500))
        assert.deepEqual(s.frames.slice(answered), protocol === 'graphql-ws' ? [] : [{ type: 'pong' }])
        for (const frame of s.frames.filter((f) => f.type === 'error')) {
          const errors = errorsOf(protocol, frame)
          assert.ok(errors.length > 0 && errors.every((e) => typeof e?.message === 'string'), JSON.stringify(frame))
        }
        if (protocol === 'graphql-ws') assert.ok(s.frames.every((f) => f.type !== 'error' || !Array.isArray(f.payload)))
        // Still serving: a finite subscription runs to its end.
        s.send({
          type: START[protocol],
          id: 'ok',
          payload: {
            query: BACKWARD_SUB,
            variables: { q: 'receiver:eosio.token', limit: 2 },
          },
        })
        await s.next((f) => f.type === 'complete' && f.id === 'ok', 'the valid subscription completing')
        assert.deepEqual(
          s.frames.filter((f) => f.id === 'ok').map((f) => f.type),
          [DATA[protocol], DATA[protocol], 'complete'],
        )
        assert.deepEqual(s.problems, [])
        s.ws.close()
      },
    )

    await t.test(`${protocol}: a JSON null frame is answered with an error, the socket stays open`, {}, async () => {
      const s = await ready()
      s.send('null')
      s.send({ type: START[protocol], id: 'after', payload: { query: '{ __typename }' } })
      await s.next((f) => f.type === 'complete' && f.id === 'after', 'the query after the null frame', 3_000)
      assert.equal(s.closed(), undefined)
      s.ws.close()
    })

    await t.test(`${protocol}: operations with bad arguments each end in an error for their id`, async () => {
      const s = await ready()
      const operations: [string, Json][] = [
        ['bad search', { query: SUB('query: "receiver:("') }],
        ['unknown search field', { query: SUB('query: "nosuch:x"') }],
        ['garbage cursor', { query: VARS_SUB, variables: { q: 'receiver:bob', cursor: 'garbage' } }],
        ['altered cursor', { query: VARS_SUB, variables: { q: 'receiver:bob', cursor: altered } }],
        ['negative limit', { query: SUB('query: "receiver:bob", limit: -1') }],
        ['huge Int64', { query: VARS_SUB, variables: { q: 'receiver:bob', low: '99999999999999999999' } }],
        ['negative Uint32', { query: VARS_SUB, variables: { q: 'receiver:bob', interval: -1 } }],
        ['query a number', { query: VARS_SUB, variables: { q: 7 } }],
        ['variables missing', { query: VARS_SUB }],
        ['unknown field', { query: 'subscription { nope }' }],
        ['syntax error', { query: 'subscription { searchTransactionsForward(' }],
        ['bad Time', { query: 'query ($t: Time!) { blockIDByTime(time: $t) { num } }', variables: { t: 'yesterday' } }],
        [
          'deep',
          {
            query: SUB(
              'query: "receiver:eosio"',
              `trace { executedActions { ${'createdActions { '.repeat(20)}seq${' }'.repeat(20)} } }`,
            ),
          },
        ],
        ['mutation', { query: 'mutation { x }' }],
      ]
      for (const [id, payload] of operations) s.send({ type: START[protocol], id, payload })
      for (const [id] of operations) {
        const frame = await s.next((f) => f.id === id && (f.type === 'error' || f.type === DATA[protocol]), id)
        const errors = errorsOf(protocol, frame)
        assert.ok(errors.length > 0, `${id}: errors in ${JSON.stringify(frame)}`)
        for (const e of errors) {
          assert.equal(typeof e.message, 'string')
          const problem = shapeProblem(e)
          if (problem) shapes.push(`${protocol} ${id}: ${problem}`)
        }
        if (protocol === 'graphql-ws' && frame.type === 'error')
          assert.ok(!Array.isArray(frame.payload), `${id}: one object`)
      }
      // Search and cursor refusals are Antler's own: InvalidArgument with the registry's code.
      for (const id of ['bad search', 'garbage cursor', 'altered cursor', 'negative limit']) {
        const [error] = errorsOf(
          protocol,
          s.frames.find((f) => f.id === id)!,
        )
        assert.equal((error.extensions as Json)?.code, 'InvalidArgument', `${id}: ${JSON.stringify(error)}`)
        assert.equal((error.extensions as Json)?.error_code, 'request_validation_error')
      }
      assert.equal(s.closed(), undefined)
      assert.deepEqual(s.problems, [])
      s.ws.close()
    })

    await t.test(`${protocol}: a frame over 1 MiB closes the socket (1009); the server serves on`, async () => {
      const s = await ready()
      sendOversizedFrameStart(s.ws, 1_200_000)
      await pollUntil(
        async () => s.closed(),
        (c) => c !== undefined,
        10_000,
      )
      assert.equal(s.closed(), 1009)
      const again = await ready()
      again.ws.close()
    })

    await t.test(
      `${protocol}: seeded fuzz of 400 mutated frames: protocol frames only, the server survives`,
      async () => {
        let s = await ready()
        const problems: string[] = []
        let closes = 0
        const templates = [
          {
            type: START[protocol],
            id: 'f0',
            payload: { query: VARS_SUB, variables: { q: 'receiver:eosio.token', low: -3, interval: 2 } },
          },
          { type: START[protocol], id: 'f1', payload: { query: SUB('query: "receiver:bob", limit: 2') } },
          { type: STOP[protocol], id: 'f0' },
          { type: 'connection_init', payload: { Authorization: token } },
          { type: protocol === 'graphql-ws' ? 'pong' : 'ping' },
        ]
        for (let i = 0; i < 400; i++) {
          if (s.closed() !== undefined) {
            problems.push(...s.problems)
            closes++
            s = await ready()
          }
          const text = JSON.stringify(pick(templates)).replace(/f\d/g, () => `f${Math.floor(random() * 6)}`)
          const at = Math.floor(random() * text.length)
          const kind = random()
          if (kind < 0.1) s.send(randomBytes(Math.floor(random() * 64)))
          else if (kind < 0.4)
            s.send(text.slice(0, at) + pick(['"', '{', '}', ':', '1', 'null', ',', '\u0000']) + text.slice(at + 1))
          else if (kind < 0.5) s.send(text.slice(0, at))
          else s.send(text)
          if (i % 50 === 49) await new Promise((resolve) => setTimeout(resolve, 50))
        }
        for (let id = 0; id < 6; id++) s.send({ type: STOP[protocol], id: `f${id}` })
        await new Promise((resolve) => setTimeout(resolve, 500))
        problems.push(...s.problems)
        t.diagnostic(`${protocol}: ${closes} sockets closed by the server during the fuzz`)
        assert.deepEqual(problems.slice(0, 10), [])
        s.ws.close()
        assert.equal((await fetch(`${p.api}/healthz`)).status, 200)
        assert.equal(p.cli.child.exitCode, null)
      },
    )
  }

  await t.test('every operation error carries the documented shape (extensions.code, trace_id)', {}, () => {
    assert.deepEqual(shapes, [])
  })
})
