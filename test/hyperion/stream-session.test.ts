import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Server } from 'socket.io'
import { io as connectClient, type Socket as ClientSocket } from 'socket.io-client'
import { StreamConsumerTooSlowError, type SubscribeArgs } from '../../src/live/index.ts'
import type { BlockRecord, RowChange, Step } from '../../src/store/index.ts'
import { createBlockDocumentMemo } from '../../src/hyperion/stream/live.ts'
import type { StreamDeps } from '../../src/hyperion/stream/types.ts'
import { serveStreamSession, type SessionContext } from '../../src/api/hyperion/stream-session.ts'

type Json = Record<string, unknown>
const HEAD = 2000
const LIB = 1500

const block = (num: number): BlockRecord => ({
  num,
  id: num.toString(16).padStart(64, '0'),
  previous: (num - 1).toString(16).padStart(64, '0'),
  timestampMs: 1_700_000_000_000 + num * 500,
  producer: 'eosio',
  transactionCount: 1,
  actionCount: 1,
})
const change = (num: number): RowChange => ({
  code: 'eosio.token',
  table: 'accounts',
  scope: 'bob',
  primaryKey: 5459781n,
  payer: 'bob',
  value: new Uint8Array([num & 255]),
  old: undefined,
})

/** A store of HEAD blocks, each changing bob's row once; a hub that records subscriptions (and can drop them). */
function fakeDeps() {
  const subscriptions: SubscribeArgs[] = []
  const deps = {
    store: {
      position: async () => ({ head: { blockNum: HEAD, blockId: block(HEAD).id }, lib: LIB }),
      blockByNum: async (num: number) => (num >= 1 && num <= HEAD ? block(num) : undefined),
      blockByTime: async () => undefined,
      stepsOfBlock: async (id: string): Promise<Step[]> => {
        const num = parseInt(id, 16)
        return [{ seq: num, type: 'new', blockNum: num, blockId: id }]
      },
      rowChangesOfBlocks: async (nums: readonly number[]) => new Map(nums.map((n) => [n, [change(n)]])),
      blocksByNums: async (nums: readonly number[]) => new Map(nums.map((n) => [n, block(n)])),
      chainId: async () => 'cafe',
    },
    live: {
      subscribe: (args: SubscribeArgs) => {
        subscriptions.push(args)
        return { state: 'live' as const, deliveredSeq: args.afterSeq, close: () => undefined }
      },
    },
    decoders: async () => Object.assign(() => undefined, { abiOf: () => undefined }),
    blockDecoders: async () => new Map(),
  } as unknown as StreamDeps
  return { deps, subscriptions }
}

async function serve(t: TestContext, deps: StreamDeps, ackTimeoutMs: number) {
  const http = createServer()
  const io = new Server(http, { path: '/stream', transports: ['websocket'] })
  const unexpected: unknown[] = []
  const context: SessionContext = {
    deps,
    memo: createBlockDocumentMemo(deps),
    chainId: async () => 'cafe',
    limits: { maxRequests: 2, ackTimeoutMs },
    replays: { put: () => undefined, take: () => undefined },
    onUnexpected: (error) => unexpected.push(error),
  }
  io.on('connection', (socket) => serveStreamSession(socket, context))
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => io.close(() => resolve())))
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`
  const client = (): Promise<ClientSocket> => {
    const socket = connectClient(url, { path: '/stream', transports: ['websocket'], reconnection: false })
    t.after(() => void socket.close())
    return new Promise((resolve, reject) => {
      socket.once('connect', () => resolve(socket))
      socket.once('connect_error', reject)
    })
  }
  return { client, unexpected }
}

const waitFor = async (check: () => boolean, timeoutMs = 5_000) => {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

const deltaRequest = { code: 'eosio.token', table: 'accounts', scope: 'bob', start_from: 1, read_until: 0 }

test('history: batches of 500 sent one at a time, each after the last was acked; history_end; live after LIB', async (t) => {
  const { deps, subscriptions } = fakeDeps()
  const { client } = await serve(t, deps, 5_000)
  const socket = await client()
  const events: Json[] = []
  let unacked = 0
  let maxUnacked = 0
  socket.on('message', (m: Json, ack?: (a: unknown) => void) => {
    events.push(m)
    if (!ack) return
    unacked++
    maxUnacked = Math.max(maxUnacked, unacked)
    // The client takes its time: the server must wait.
    setTimeout(() => (unacked--, ack({ status: true })), 30)
  })
  const ack = (await socket.timeout(5_000).emitWithAck('delta_stream_request', deltaRequest)) as Json
  assert.equal(ack.status, 'OK')
  assert.equal(ack.currentBlockNum, HEAD)
  await waitFor(() => events.some((e) => e.type === 'history_end'))
  const batches = events.filter((e) => e.mode === 'history' && Array.isArray(e.messages))
  assert.deepEqual(
    batches.map((b) => (b.messages as unknown[]).length),
    [500, 500, 500],
  )
  assert.equal(maxUnacked, 1, 'one batch in flight at a time')
  const blocks = batches.flatMap((b) => (b.messages as { block_num: number }[]).map((d) => d.block_num))
  assert.deepEqual(
    blocks,
    Array.from({ length: LIB }, (_, i) => i + 1),
  )
  assert.deepEqual(events.at(-1), {
    type: 'history_end',
    reqUUID: ack.reqUUID,
    mode: 'history',
    message: { lastBlock: LIB },
  })
  // Live continues after the step that applied LIB's block.
  await waitFor(() => subscriptions.length === 1)
  assert.equal(subscriptions[0].afterSeq, LIB)
})

test('a client that never acks a history batch: the request stops with an error message, nothing more is read', async (t) => {
  const { deps } = fakeDeps()
  const { client, unexpected } = await serve(t, deps, 200)
  const socket = await client()
  const events: Json[] = []
  socket.on('message', (m: Json) => events.push(m))
  const ack = (await socket.timeout(5_000).emitWithAck('delta_stream_request', deltaRequest)) as Json
  assert.equal(ack.status, 'OK')
  await waitFor(() => events.some((e) => typeof e.error === 'string'))
  await new Promise((resolve) => setTimeout(resolve, 300))
  assert.equal(events.length, 2, 'one batch, then the error')
  assert.match(events[1].error as string, /not acknowledged/)
  assert.deepEqual(unexpected, [])
  // The connection lives on and takes new requests (the stopped one no longer counts against the bound).
  for (let i = 0; i < 2; i++)
    assert.equal(
      ((await socket.timeout(5_000).emitWithAck('delta_stream_request', { code: 'eosio.token' })) as Json).status,
      'OK',
    )
  const third = (await socket.timeout(5_000).emitWithAck('delta_stream_request', { code: 'eosio.token' })) as Json
  assert.deepEqual(third, { status: 'ERROR', message: 'at most 2 requests per connection' })
})

test('a live client too slow for the hub is told why and disconnected', async (t) => {
  const { deps, subscriptions } = fakeDeps()
  const { client } = await serve(t, deps, 5_000)
  const socket = await client()
  const errors: Json[] = []
  socket.on('stream_error', (e: Json) => errors.push(e))
  const disconnected = new Promise<string>((resolve) => socket.once('disconnect', resolve))
  const ack = (await socket.timeout(5_000).emitWithAck('action_stream_request', { account: 'bob' })) as Json
  assert.equal(ack.status, 'OK')
  await waitFor(() => subscriptions.length === 1)
  assert.equal(subscriptions[0].afterSeq, HEAD, 'without start_from: live from head')
  subscriptions[0].onError(
    StreamConsumerTooSlowError({
      queuedSteps: 5000,
      queuedBytes: 1,
      maxQueuedSteps: 4096,
      maxQueuedBytes: 2,
      deliveredSeq: 1,
    }),
  )
  assert.equal(await disconnected, 'io server disconnect')
  assert.equal(errors.length, 1)
  assert.equal(errors[0].code, 'stream_consumer_too_slow_error')
  assert.equal(errors[0].reqUUID, ack.reqUUID)
})

test('requests without an ack callback or with junk are survived', async (t) => {
  const { deps } = fakeDeps()
  const { client, unexpected } = await serve(t, deps, 5_000)
  const socket = await client()
  socket.emit('action_stream_request')
  socket.emit('action_stream_request', 1, 2, 3)
  socket.emit('cancel_stream_request')
  socket.emit('reconnect', 'x')
  const ack = (await socket.timeout(5_000).emitWithAck('cancel_stream_request', 'nope')) as Json
  assert.deepEqual(ack, { status: 'NOT_FOUND' })
  assert.equal(socket.connected, true)
  assert.deepEqual(unexpected, [])
})

test('a live request ends once its read_until block is irreversible', async (t) => {
  const { deps, subscriptions } = fakeDeps()
  const { client } = await serve(t, deps, 5_000)
  const socket = await client()
  const until = HEAD + 10
  const ack = (await socket
    .timeout(5_000)
    .emitWithAck('action_stream_request', { account: 'bob', read_until: until })) as Json
  assert.equal(ack.status, 'OK')
  await waitFor(() => subscriptions.length === 1)
  const irreversible = (blockNum: number) => ({
    step: { seq: 10 * blockNum, type: 'irreversible' as const, blockNum, blockId: block(blockNum).id },
    payload: undefined,
    pastRetention: true,
    bytes: 0,
  })
  await subscriptions[0].onSteps([irreversible(until - 1)])
  const cancel = () => socket.timeout(5_000).emitWithAck('cancel_stream_request', { reqUUID: ack.reqUUID })
  assert.deepEqual(await cancel(), { status: 'OK' }, 'still running before read_until is irreversible')
  const again = (await socket
    .timeout(5_000)
    .emitWithAck('action_stream_request', { account: 'bob', read_until: until })) as Json
  await waitFor(() => subscriptions.length === 2)
  await subscriptions[1].onSteps([irreversible(until)])
  assert.deepEqual(
    await socket.timeout(5_000).emitWithAck('cancel_stream_request', { reqUUID: again.reqUUID }),
    { status: 'NOT_FOUND' },
    'ended by itself',
  )
})

test('live output waits for the transport: a client that stops reading holds up its feed (then the hub bound applies)', async (t) => {
  const { deps, subscriptions } = fakeDeps()
  const { client } = await serve(t, deps, 5_000)
  const socket = await client()
  const ack = (await socket.timeout(5_000).emitWithAck('delta_stream_request', { code: 'eosio.token' })) as Json
  assert.equal(ack.status, 'OK')
  await waitFor(() => subscriptions.length === 1)
  // The client's TCP socket stops reading.
  const raw = (socket.io.engine.transport as unknown as { ws: { _socket: { pause(): void; resume(): void } } }).ws
    ._socket
  raw.pause()
  const num = HEAD + 1
  const changes = Array.from({ length: 40_000 }, (_, i) => ({ ...change(num), primaryKey: BigInt(i) }))
  const payload = { step: undefined, block: block(num), transactions: [], actions: [], rowChanges: changes }
  const step = { seq: 10 * num, type: 'new' as const, blockNum: num, blockId: block(num).id }
  let delivered = false
  const onSteps = Promise.resolve(
    subscriptions[0].onSteps([{ step, payload: { ...payload, step }, pastRetention: false, bytes: 1 }]),
  ).then(() => (delivered = true))
  await new Promise((resolve) => setTimeout(resolve, 1_000))
  assert.equal(delivered, false, 'the step is not done while the client reads nothing')
  let received = 0
  socket.on('message', (m: Json) => m.mode === 'live' && received++)
  raw.resume()
  await onSteps
  await waitFor(() => received === changes.length, 20_000)
})
