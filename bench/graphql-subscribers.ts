import { credentials, loadPackageDefinition, Metadata, type ClientReadableStream, type GrpcObject } from '@grpc/grpc-js'
import { loadSync } from '@grpc/proto-loader'
import WebSocket from 'ws'
import { setTimeout as delay } from 'node:timers/promises'
import { decodeResult, encodeRequest } from '../src/ship/codec.ts'
import { percentiles, type Percentiles } from './timing.ts'

/**
 * The subscriber process of bench/graphql.ts: `node graphql-subscribers.ts '<SubscribersConfig JSON>'`, forked with an
 * IPC channel. It opens `count` live GraphQL subscriptions (one connection each) over the WebSocket (the modern
 * `graphql-transport-ws` subprotocol, raw frames) or over gRPC, plus a SHiP reader of the devchain that only notes when
 * each block arrives (the moment it was produced, the reference the block timestamps are not: see bench/graphql.ts).
 * Once every subscriber has had a message it measures `seconds`, then sends a SubscribersResult and exits.
 */

export interface SubscribersConfig {
  /**
   * GraphQL over the WebSocket or gRPC, or `/v1/stream` (bench/streams.ts): `get_action_traces` of eosio.token
   * transfers, or `get_table_rows` of alice's eosio.token balance (each transfer of the demo workload moves it 2 times
   * in 3).
   */
  readonly transport: 'ws' | 'grpc' | 'stream-actions' | 'stream-rows'
  readonly count: number
  readonly api: string
  readonly grpc: string
  readonly ship: string
  readonly token: string
  readonly seconds: number
  /** graphql.proto as the API serves it, saved to a file (gRPC only). */
  readonly protoPath?: string
}

export type SubscribersMessage =
  | { readonly kind: 'subscribed'; readonly connectSeconds: number }
  | { readonly kind: 'result'; readonly result: SubscribersResult }
  | { readonly kind: 'failed'; readonly error: string }

export interface SubscribersResult {
  /** Receipt time minus the block's timestamp, ms (devchain timestamps precede production by a drifting offset). */
  readonly sinceTimestamp: Percentiles
  /** Receipt time minus the arrival of the same block at the SHiP reader of this process, ms. */
  readonly sinceShip: Percentiles
  /** The block's arrival at the SHiP reader minus its timestamp, ms, per block of the window with a match. */
  readonly timestampOffset: Percentiles & { readonly min: number }
  /** Per block of the window with a match: last receipt minus first, all subscribers, ms (the fan-out's spread). */
  readonly spread: Percentiles
  /** Messages received in the window, all subscribers, per second. */
  readonly perSecond: number
  /** Blocks produced in the window, and those with a match. */
  readonly blocks: number
  readonly matchedTransactions: number
  /** Matches (transaction, subscriber) of the window's blocks not received by the end of the grace period. */
  readonly missed: number
  readonly undos: number
  /** Subscriptions that ended or failed during the run, with the first reasons. */
  readonly ended: number
  readonly endReasons: readonly string[]
  /** CPU this process used in the window, percent of one core. */
  readonly clientCpuPercent: number
}

const QUERY =
  'subscription { searchTransactionsForward(query: "receiver:eosio.token action:transfer") ' +
  '{ undo cursor block { num timestamp } trace { id } } }'
/** After the window, before missed messages are counted: at most the window's length (the smoke's is 1 s). */
const GRACE_MS = 3000
const CONNECT_BATCH = 50
const CONNECT_TIMEOUT_MS = 120_000

interface Payload {
  readonly data?: {
    readonly searchTransactionsForward?: {
      readonly undo: boolean
      readonly block: { readonly num: number | string; readonly timestamp: string }
      readonly trace: { readonly id: string }
    }
  } | null
  readonly errors?: readonly { message: string }[]
}

/** What one subscriber received: receipt times (performance.now()) with what they carried. */
class Subscriber {
  /** Settles at the first message; fails if the subscription ends before it. */
  first: Promise<void>
  private markFirst!: () => void
  private failFirst!: (error: Error) => void
  readonly received: { at: number; wall: number; num: number; timestamp: number; id: string; undo: boolean }[] = []
  close: () => void = () => {}

  constructor(private readonly onEnd: (reason: string) => void) {
    this.first = new Promise((resolve, reject) => {
      this.markFirst = resolve
      this.failFirst = reject
    })
    this.first.catch(() => {})
  }

  receive(at: number, wall: number, payload: Payload): void {
    const r = payload.data?.searchTransactionsForward
    if (!r) return this.end(`an answer without data: ${JSON.stringify(payload).slice(0, 200)}`)
    const timestamp = Date.parse(r.block.timestamp.endsWith('Z') ? r.block.timestamp : `${r.block.timestamp}Z`)
    this.record(at, wall, { num: Number(r.block.num), timestamp, id: r.trace.id, undo: r.undo })
  }

  /** A message received; `timestamp` NaN when it carries none (filled in from the block times at the end). */
  record(at: number, wall: number, r: { num: number; timestamp: number; id: string; undo: boolean }): void {
    this.received.push({ at, wall, ...r })
    this.markFirst()
  }

  end(reason: string): void {
    this.onEnd(reason)
    this.failFirst(new Error(`a subscription ended before its first message: ${reason}`))
  }
}

interface SocketMessage {
  readonly type: string
  readonly payload?: Payload
  readonly data: Record<string, unknown>
}

/** What a socket's messages are handed to: when it started, what it received, and how to answer or end it. */
interface SocketEvents {
  readonly at: number
  readonly wall: number
  started(): void
  send(message: object): void
  end(reason: string): void
}

/**
 * A subscriber's WebSocket (raw frames): `first` sent once open, pings answered, every other message to `handle`;
 * the promise settles when `handle` says it started, or fails if the socket fails or closes first.
 */
function openSocket(
  url: string,
  protocol: string | undefined,
  s: Subscriber | undefined,
  first: object,
  handle: (message: SocketMessage, events: SocketEvents) => void,
): Promise<void> {
  const socket = new WebSocket(url, protocol)
  let ended = false
  const end = (reason: string) => {
    if (ended) return
    ended = true
    s?.end(reason)
  }
  if (s)
    s.close = () => {
      ended = true
      socket.terminate()
    }
  const send = (message: object) => socket.send(JSON.stringify(message))
  return new Promise((resolve, reject) => {
    socket.on('open', () => send(first))
    socket.on('message', (data) => {
      const [at, wall] = [performance.now(), Date.now()]
      const message = JSON.parse(data.toString()) as SocketMessage
      if (message.type === 'ping') send({ type: 'pong' })
      else handle(message, { at, wall, started: resolve, send, end })
    })
    socket.on('error', (error) => {
      reject(error)
      end(`socket error: ${error.message}`)
    })
    socket.on('close', (code, reason) => {
      reject(new Error(`closed (${code}) before it started: ${reason.toString()}`))
      end(`socket closed (${code}): ${reason.toString()}`)
    })
  })
}

/** A GraphQL subscription over the WebSocket (the modern `graphql-transport-ws` subprotocol). */
function openWebSocket(config: SubscribersConfig, s: Subscriber): Promise<void> {
  const url = `${config.api.replace(/^http/, 'ws')}/graphql`
  const init = { type: 'connection_init', payload: { Authorization: config.token } }
  return openSocket(url, 'graphql-transport-ws', s, init, (message, { at, wall, started, send, end }) => {
    if (message.type === 'next') s.receive(at, wall, message.payload!)
    else if (message.type === 'connection_ack') {
      send({ id: '1', type: 'subscribe', payload: { query: QUERY } })
      started()
    } else if (message.type === 'error' || message.type === 'complete')
      end(`${message.type}: ${JSON.stringify(message.payload ?? null).slice(0, 200)}`)
  })
}

/** Block timestamps by number, from a `get_head_info` listener (table deltas carry no block time). */
const blockTimes = new Map<number, number>()

/** Where a `/v1/stream` listener (one connection each, raw frames) starts. */
function streamRequest(transport: 'stream-actions' | 'stream-rows'): object {
  return transport === 'stream-actions'
    ? {
        type: 'get_action_traces',
        req_id: 'r',
        listen: true,
        data: { accounts: 'eosio.token', action_name: 'transfer' },
      }
    : {
        type: 'get_table_rows',
        req_id: 'r',
        listen: true,
        data: { code: 'eosio.token', scope: 'alice', table: 'accounts', json: true },
      }
}

function openStream(config: SubscribersConfig, s: Subscriber | undefined, request: object): Promise<void> {
  const url = `${config.api.replace(/^http/, 'ws')}/v1/stream?token=${config.token}`
  /** A delta's id: its block and its place among the block's deltas. */
  let lastNum = 0
  let inBlock = 0
  const time = (t: unknown) => Date.parse(`${String(t).replace(/Z$/, '')}Z`)
  return openSocket(url, undefined, s, request, ({ type, data: d }, { at, wall, started, end }) => {
    if (type === 'listening') started()
    else if (type === 'head_info') {
      // get_head_info sends no `listening`: its first head_info is the start.
      started()
      blockTimes.set(d.head_block_num as number, time(d.head_block_time))
    } else if (type === 'action_trace') {
      const id = `${d.trx_id as string}/${d.idx as number}`
      s?.record(at, wall, { num: d.block_num as number, timestamp: time(d.block_time), id, undo: false })
    } else if (type === 'table_delta') {
      inBlock = d.block_num === lastNum ? inBlock + 1 : ((lastNum = d.block_num as number), 0)
      s?.record(at, wall, { num: lastNum, timestamp: NaN, id: `${lastNum}/${inBlock}`, undo: d.step === 'undo' })
    } else if (type === 'error') end(`error: ${JSON.stringify(d).slice(0, 200)}`)
  })
}

interface GrpcResponse {
  readonly data: string
  readonly errors: readonly { message: string }[]
}

type ExecuteClient = {
  Execute(request: object, metadata: Metadata): ClientReadableStream<GrpcResponse>
  close(): void
}

function grpcClientConstructor(protoPath: string) {
  const definition = loadSync(protoPath, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true })
  const antler = loadPackageDefinition(definition).antler as GrpcObject
  const v1 = (antler.graphql as GrpcObject).v1 as GrpcObject
  return v1.GraphQL as unknown as new (address: string, creds: unknown, options: object) => ExecuteClient
}

function openGrpc(config: SubscribersConfig, GraphQL: ReturnType<typeof grpcClientConstructor>, s: Subscriber) {
  // A subchannel pool of its own: one HTTP/2 connection per subscriber, as separate clients would have.
  const client = new GraphQL(config.grpc, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 })
  const metadata = new Metadata()
  metadata.set('authorization', `Bearer ${config.token}`)
  const call = client.Execute({ query: QUERY, variables: '', operationName: '' }, metadata)
  let ended = false
  s.close = () => {
    ended = true
    call.cancel()
    client.close()
  }
  call.on('data', (response: GrpcResponse) => {
    const at = performance.now()
    const wall = Date.now()
    if (response.errors.length > 0) return s.end(`errors: ${JSON.stringify(response.errors).slice(0, 200)}`)
    s.receive(at, wall, { data: JSON.parse(response.data) as Payload['data'] })
  })
  call.on('error', (error: Error) => {
    if (!ended) s.end(`gRPC error: ${error.message}`)
    ended = true
  })
  call.on('end', () => {
    if (!ended) s.end('the call ended')
    ended = true
  })
}

/** A SHiP reader that fetches nothing: the arrival time of each block from the head on. */
function shipReference(url: string): { arrivals: Map<number, number>; walls: Map<number, number>; close(): void } {
  const arrivals = new Map<number, number>()
  const walls = new Map<number, number>()
  const socket = new WebSocket(url)
  let acked = 0
  socket.on('message', (data: Buffer, isBinary: boolean) => {
    const at = performance.now()
    const wall = Date.now()
    if (!isBinary) return socket.send(encodeRequest({ kind: 'status', v1: false }))
    const message = decodeResult(new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
    if (message.kind === 'status') {
      const request = {
        v1: false,
        startBlockNum: message.status.head.blockNum + 1,
        endBlockNum: 0xffffffff,
        maxMessagesInFlight: 1000,
        havePositions: [],
        irreversibleOnly: false,
        fetchBlock: false,
        fetchTraces: false,
        fetchDeltas: false,
        fetchFinalityData: false,
      }
      return socket.send(encodeRequest({ kind: 'blocks', request }))
    }
    const num = message.result.thisBlock?.blockNum
    if (num !== undefined) {
      arrivals.set(num, at)
      walls.set(num, wall)
    }
    if (++acked % 500 === 0) socket.send(encodeRequest({ kind: 'ack', numMessages: 500 }))
  })
  socket.on('error', (error) => fail(`SHiP reference: ${error.message}`))
  return { arrivals, walls, close: () => socket.terminate() }
}

const send = (message: SubscribersMessage) => new Promise<void>((resolve) => process.send!(message, () => resolve()))

function fail(error: string): never {
  process.send!({ kind: 'failed', error } satisfies SubscribersMessage, () => process.exit(1))
  setTimeout(() => process.exit(1), 2000)
  throw new Error(error)
}

async function main(config: SubscribersConfig): Promise<SubscribersResult> {
  const endReasons: string[] = []
  let ended = 0
  const onEnd = (reason: string) => {
    ended++
    if (endReasons.length < 3) endReasons.push(reason)
  }
  const ship = shipReference(config.ship)
  const subscribers = Array.from({ length: config.count }, () => new Subscriber(onEnd))
  const connecting = performance.now()
  const GraphQL = config.transport === 'grpc' ? grpcClientConstructor(config.protoPath!) : undefined
  const deadline = delay(CONNECT_TIMEOUT_MS).then(() => fail(`not every subscriber had a message within 120 s`))
  const transport = config.transport
  if (transport === 'stream-rows') await openStream(config, undefined, { type: 'get_head_info', listen: true })
  for (let i = 0; i < subscribers.length; i += CONNECT_BATCH) {
    const batch = subscribers.slice(i, i + CONNECT_BATCH)
    if (GraphQL) batch.forEach((s) => openGrpc(config, GraphQL, s))
    else if (transport === 'stream-actions' || transport === 'stream-rows')
      await Promise.race([Promise.all(batch.map((s) => openStream(config, s, streamRequest(transport)))), deadline])
    else await Promise.race([Promise.all(batch.map((s) => openWebSocket(config, s))), deadline])
  }
  await Promise.race([Promise.all(subscribers.map((s) => s.first)), deadline])
  await send({ kind: 'subscribed', connectSeconds: (performance.now() - connecting) / 1000 })

  const start = performance.now()
  const cpu = process.cpuUsage()
  await delay(config.seconds * 1000)
  const end = performance.now()
  const cpuUsed = process.cpuUsage(cpu)
  await delay(Math.min(GRACE_MS, config.seconds * 1000))
  // The window's blocks: those that reached the SHiP reader inside it.
  const blocks = [...ship.arrivals].filter(([, at]) => at >= start && at < end).map(([num]) => num)
  const from = Math.min(...blocks)
  const to = Math.max(...blocks)
  const sinceTimestamp: number[] = []
  const sinceShip: number[] = []
  const matched = new Set<string>()
  const offsets = new Map<number, number>()
  const firstLast = new Map<number, [number, number]>()
  let inWindow = 0
  let undos = 0
  for (const s of subscribers)
    for (const r of s.received) {
      if (r.at >= start && r.at < end) inWindow++
      if (r.num < from || r.num > to) continue
      if (Number.isNaN(r.timestamp)) r.timestamp = blockTimes.get(r.num) ?? NaN
      if (r.undo) undos++
      matched.add(r.id)
      sinceTimestamp.push(r.wall - r.timestamp)
      sinceShip.push(r.at - ship.arrivals.get(r.num)!)
      offsets.set(r.num, ship.walls.get(r.num)! - r.timestamp)
      const seen = firstLast.get(r.num)
      if (!seen) firstLast.set(r.num, [r.at, r.at])
      else {
        seen[0] = Math.min(seen[0], r.at)
        seen[1] = Math.max(seen[1], r.at)
      }
    }
  let missed = 0
  for (const s of subscribers) {
    const got = new Set(s.received.filter((r) => r.num >= from && r.num <= to && !r.undo).map((r) => r.id))
    missed += matched.size - got.size
  }
  for (const s of subscribers) s.close()
  ship.close()
  return {
    sinceTimestamp: percentiles(sinceTimestamp),
    sinceShip: percentiles(sinceShip),
    spread: percentiles([...firstLast.values()].map(([first, last]) => last - first)),
    timestampOffset: { ...percentiles([...offsets.values()]), min: Math.min(...offsets.values()) },
    perSecond: inWindow / ((end - start) / 1000),
    blocks: blocks.length,
    matchedTransactions: matched.size,
    missed,
    undos,
    ended,
    endReasons,
    clientCpuPercent: ((cpuUsed.user + cpuUsed.system) / 1000 / (end - start)) * 100,
  }
}

process.on('disconnect', () => process.exit(0))
try {
  const result = await main(JSON.parse(process.argv[2]) as SubscribersConfig)
  await send({ kind: 'result', result })
  process.exit(0)
} catch (error) {
  fail(error instanceof Error ? error.message : String(error))
}
