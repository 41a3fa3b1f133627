import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { APIClient } from '@wharfkit/antelope'
import { io, type Socket } from 'socket.io-client'
import { issueToken, startPlatform, type Platform } from '../_helpers/platform.ts'
import { pollUntil, pushActions, waitIndexed } from '../_helpers/push.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'

type Json = Record<string, unknown>
type Ack = { status: string; reqUUID?: string; currentBlockNum?: number; message?: string }
interface Received {
  readonly order: string[]
  readonly history: Json[]
  readonly live: Json[]
  readonly forks: Json[]
  /** Error messages and `stream_error` events of the request. */
  readonly errors: Json[]
  historyEnd?: Json
}

/** A socket.io client on Antler's `/stream`, as Hyperion's clients connect (websocket only), acking every batch. */
async function connect(
  t: { after: (fn: () => void) => void },
  p: Platform,
): Promise<{ socket: Socket; handshake: Json }> {
  const socket = io(p.api, { path: '/stream', transports: ['websocket'], reconnection: false, timeout: 10_000 })
  t.after(() => void socket.close())
  const handshake = await new Promise<Json>((resolve, reject) => {
    socket.once('handshake', resolve)
    socket.once('connect_error', reject)
  })
  return { socket, handshake }
}

/** Every stream event a socket received, in order (one log per socket, whatever request it is for). */
const logs = new WeakMap<Socket, { event: string; m: Json }[]>()
function eventLog(socket: Socket): { event: string; m: Json }[] {
  let log = logs.get(socket)
  if (log) return log
  logs.set(socket, (log = []))
  const entries = log
  socket.on('message', (m: Json, ack?: (a: unknown) => void) => {
    entries.push({ event: 'message', m })
    // History batches are acked (`{status: true}`) as Hyperion's client does.
    ack?.({ status: true })
  })
  for (const event of ['stream_error', 'fork_event']) socket.on(event, (m: Json) => entries.push({ event, m }))
  return log
}

/**
 * What one request received, read from the socket's log when asked: the request's id is known only once its ack
 * arrives, and its first batch may be handled before the code awaiting the ack runs.
 */
function collect(socket: Socket, reqUUID: () => string | undefined): Received {
  const log = eventLog(socket)
  const mine = () =>
    log.filter(({ m }) => m.reqUUID === reqUUID() || (Array.isArray(m.targets) && m.targets.includes(reqUUID() ?? '')))
  const view = (): Received => {
    const r: Received = { order: [], history: [], live: [], forks: [], errors: [] }
    for (const { event, m } of mine()) {
      if (event === 'fork_event') r.forks.push(m)
      else if (event === 'stream_error' || typeof m.error === 'string') r.errors.push(m)
      else if (m.mode === 'history' && Array.isArray(m.messages)) {
        r.history.push(...(m.messages as Json[]))
        r.order.push('history')
      } else if (m.type === 'history_end') {
        r.historyEnd = m
        r.order.push('history_end')
      } else if (m.mode === 'live') {
        r.live.push(JSON.parse(Buffer.from(m.message as Uint8Array).toString()) as Json)
        r.order.push('live')
      }
    }
    return r
  }
  return {
    get order() {
      return view().order
    },
    get history() {
      return view().history
    },
    get live() {
      return view().live
    },
    get forks() {
      return view().forks
    },
    get errors() {
      return view().errors
    },
    get historyEnd() {
      return view().historyEnd
    },
  }
}

const request = (socket: Socket, event: string, body: unknown): Promise<Ack> =>
  socket.timeout(10_000).emitWithAck(event, body) as Promise<Ack>

async function transfer(chain: APIClient, from: string, to: string, memo: string) {
  return pushActions(chain, [
    {
      account: 'eosio.token',
      name: 'transfer',
      actor: from,
      data: { from, to, quantity: '0.0001 EOS', memo },
    },
  ])
}

const libOf = async (chain: APIClient) => (await chain.v1.chain.get_info()).last_irreversible_block_num.toNumber()

/** History then live on a store: `extraArgs` picks it (PostgreSQL with `--store <url>`). */
async function historyThenLive(t: TestContext, extraArgs: string[]): Promise<void> {
  const p = await startPlatform(t, extraArgs)
  const chain = new APIClient({ url: p.chainApi })
  // History: transfers alice → bob, then LIB past them.
  const early: { id: string; blockNum: number }[] = []
  for (let i = 0; i < 4; i++) early.push(await transfer(chain, 'alice', 'bob', `early ${i}`))
  await pollUntil(
    () => libOf(chain),
    (lib) => lib > early.at(-1)!.blockNum,
    20_000,
  )
  await waitIndexed(p.api, (await chain.v1.chain.get_info()).head_block_num.toNumber())

  const { socket, handshake } = await connect(t, p)
  assert.equal(handshake.chain_id, p.chainId)
  assert.equal(handshake.chain, p.chainId.slice(0, 8))
  const ids: { action?: string; delta?: string } = {}
  const actions = collect(socket, () => ids.action)
  const deltas = collect(socket, () => ids.delta)
  const first = early[0].blockNum
  const actionAck = await request(socket, 'action_stream_request', {
    contract: 'eosio.token',
    action: 'transfer',
    account: '',
    start_from: first,
    read_until: 0,
    filters: [{ field: '@transfer.to', value: 'bob' }],
  })
  assert.equal(actionAck.status, 'OK', JSON.stringify(actionAck))
  ids.action = actionAck.reqUUID
  assert.ok((actionAck.currentBlockNum ?? 0) >= early.at(-1)!.blockNum)
  const deltaAck = await request(socket, 'delta_stream_request', {
    code: 'eosio.token',
    table: 'accounts',
    scope: 'bob',
    payer: '',
    start_from: first,
    read_until: 0,
  })
  assert.equal(deltaAck.status, 'OK', JSON.stringify(deltaAck))
  ids.delta = deltaAck.reqUUID

  // Live: more transfers while the stream runs; a transfer to carol the filter leaves out.
  const late: { id: string; blockNum: number }[] = []
  for (let i = 0; i < 4; i++) late.push(await transfer(chain, 'alice', 'bob', `late ${i}`))
  const other = await transfer(chain, 'alice', 'carol', 'not for bob')
  const all = [...early, ...late]
  const idsOf = (r: Received) => [...r.history, ...r.live].map((d) => d.trx_id as string)
  const deltaBlocksOf = (r: Received) => [...r.history, ...r.live].map((d) => d.block_num as number)
  const wantedBlocks = [...new Set(all.map((x) => x.blockNum))]
  const problems = () =>
    JSON.stringify({
      actionErrors: actions.errors,
      deltaErrors: deltas.errors,
      got: deltaBlocksOf(deltas),
      wantedBlocks,
    })
  await pollUntil(
    async () => idsOf(actions).length,
    (n) => n >= all.length,
    20_000,
  ).catch((e: Error) => assert.fail(`${e.message}: ${problems()}`))
  await pollUntil(
    async () => new Set(deltaBlocksOf(deltas)).size,
    (n) => n >= wantedBlocks.length,
    20_000,
  ).catch((e: Error) => assert.fail(`${e.message}: ${problems()}`))
  assert.deepEqual([...actions.errors, ...deltas.errors], [])
  await new Promise((resolve) => setTimeout(resolve, 500))

  // Actions: every transfer to bob exactly once, in order, history (irreversible) first.
  assert.deepEqual(
    idsOf(actions),
    all.map((x) => x.id),
  )
  assert.ok(!idsOf(actions).includes(other.id))
  assert.deepEqual(actions.order.slice(0, actions.order.indexOf('history_end') + 1).at(-1), 'history_end')
  assert.ok(
    !actions.order.slice(0, actions.order.indexOf('history_end')).includes('live'),
    'no live before history_end',
  )
  assert.ok(actions.history.length >= early.length, 'the irreversible transfers came as history')
  const lastBlock = (actions.historyEnd!.message as { lastBlock: number }).lastBlock
  for (const d of actions.history) assert.ok((d.block_num as number) <= lastBlock)
  for (const d of actions.live) assert.ok((d.block_num as number) > lastBlock)
  const doc = actions.history[0] as Json & { act: Json & { data: Json }; receipts: Json[] }
  assert.deepEqual(doc.act.data.to, 'bob')
  assert.equal(doc.act.data.symbol, 'EOS')
  assert.deepEqual(
    doc.receipts.map((r) => r.receiver),
    ['eosio.token', 'alice', 'bob'],
    'notifications folded into receipts',
  )
  assert.equal(typeof doc['@timestamp'], 'string')

  // Deltas: bob's balance row once per block that changed it, the last one equal to /v0/state/table.
  const deltaBlocks = [...deltas.history, ...deltas.live].map((d) => d.block_num as number)
  assert.deepEqual(deltaBlocks, [...new Set(all.map((x) => x.blockNum))])
  const token = await issueToken(p, p.apiKey)
  const rest = (await (
    await fetch(`${p.api}/v0/state/table?account=eosio.token&table=accounts&scope=bob&json=true`, {
      headers: { authorization: `Bearer ${token}` },
    })
  ).json()) as { rows: { json: { balance: string } }[] }
  const lastDelta = [...deltas.history, ...deltas.live].at(-1) as Json & { data: { balance: string } }
  assert.equal(lastDelta.data.balance, rest.rows[0].json.balance)
  assert.equal(lastDelta.present, 1)

  // The dfuse WebSocket on the same port still upgrades.
  const ws = new WebSocket(`${p.api.replace('http', 'ws')}/v1/stream?token=${token}`)
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve()
    ws.onerror = () => reject(new Error('/v1/stream did not upgrade'))
  })
  ws.close()
}

for (const store of ['sqlite', 'postgres'] as const)
  test(
    `/stream (${store}): irreversible history in acked batches, history_end, then live actions and deltas, each exactly once; /v1/stream still works beside it`,
    { timeout: 120_000, skip: store === 'postgres' && PG_SKIP_REASON },
    async (t) => historyThenLive(t, store === 'postgres' ? ['--store', await withPostgresDatabase(t)] : []),
  )

test(
  '/stream: fork_event when sent blocks are forked out, then the new chain; lib_update; cancel; bad requests acked with ERROR',
  { timeout: 120_000 },
  async (t) => {
    const limit = 3
    const p = await startPlatform(t, [
      '--lib-depth',
      '30',
      '--rate-limits',
      JSON.stringify({ publicCallsPerIp: { limit, windowMs: 60_000 } }),
    ])
    const chain = new APIClient({ url: p.chainApi })
    const { socket } = await connect(t, p)
    const libUpdates: Json[] = []
    socket.on('lib_update', (u: Json) => libUpdates.push(u))

    // Bad requests: each answered, none kills the connection.
    const bad: [string, unknown][] = [
      ['action_stream_request', 'not an object'],
      ['action_stream_request', {}],
      ['action_stream_request', { account: 'NotAName' }],
      ['action_stream_request', { account: 'a'.repeat(5000) }],
      ['action_stream_request', { contract: 'eosio.token', action: 'transfer', start_from: 200, read_until: 100 }],
      ['action_stream_request', { account: 'alice', filters: 'x' }],
      ['action_stream_request', { account: 'alice', filters: [{ field: 'act.name', value: 'x', operator: 'like' }] }],
      ['action_stream_request', { account: 'alice', start_from: { block: 1 } }],
      ['delta_stream_request', { table: 'accounts' }],
      ['delta_stream_request', null],
    ]
    for (const [event, body] of bad) {
      const ack = await request(socket, event, body)
      assert.equal(ack.status, 'ERROR', `${event} ${JSON.stringify(body)?.slice(0, 60)}: ${JSON.stringify(ack)}`)
      assert.equal(typeof ack.message, 'string')
    }
    // A delta request without scope (Hyperion never answers it) streams every scope.
    const noScope = await request(socket, 'delta_stream_request', { code: 'eosio.token', table: 'accounts' })
    assert.equal(noScope.status, 'OK')
    socket.emit('no_such_event', { x: 1 })
    assert.deepEqual(await request(socket, 'cancel_stream_request', { reqUUID: noScope.reqUUID }), { status: 'OK' })
    assert.deepEqual(await request(socket, 'cancel_stream_request', { reqUUID: noScope.reqUUID }), {
      status: 'NOT_FOUND',
    })

    // Live from head: bob's transfers, then a fork deep enough to undo the block that held the last one.
    const ids: { live?: string } = {}
    const received = collect(socket, () => ids.live)
    const ack = await request(socket, 'action_stream_request', { account: 'bob', start_from: 0, read_until: 0 })
    assert.equal(ack.status, 'OK')
    ids.live = ack.reqUUID
    const sent = await transfer(chain, 'alice', 'bob', 'before the fork')
    await pollUntil(
      async () => received.live.length,
      (n) => n >= 1,
      20_000,
    )
    const head = (await chain.v1.chain.get_info()).head_block_num.toNumber()
    const response = await fetch(`${p.chainApi}/v1/devchain/fork`, {
      method: 'POST',
      body: JSON.stringify({ depth: head - sent.blockNum + 2, drop: [] }),
    })
    assert.equal(response.status, 200, await response.clone().text())
    await pollUntil(
      async () => received.forks.length,
      (n) => n >= 1,
      20_000,
    )
    const fork = received.forks[0] as Json & {
      starting_block: number
      ending_block: number
      new_id: string
      forkedBlocks: { block_num: number; block_id: string }[]
    }
    assert.equal(fork.chain_id, p.chainId)
    assert.ok(fork.starting_block <= sent.blockNum && fork.ending_block >= sent.blockNum, JSON.stringify(fork))
    // The transfer again, from the new chain (the devchain re-includes it), after the fork notice.
    await pollUntil(
      async () => received.live.filter((d) => d.trx_id === sent.id).length,
      (n) => n >= 2,
      20_000,
    )
    const again = received.live.filter((d) => d.trx_id === sent.id)
    const newBlock = await chain.v1.chain.get_block(again[1].block_num as number)
    assert.equal(again[1].block_id, String(newBlock.id), 'the re-sent transfer is in the final chain')
    const replaced = await chain.v1.chain.get_block(fork.starting_block)
    assert.equal(fork.new_id, String(replaced.id), 'new_id is the new chain block at starting_block')
    for (const b of fork.forkedBlocks) {
      const final = await chain.v1.chain.get_block(b.block_num)
      assert.notEqual(String(final.id), b.block_id, `block ${b.block_num} was forked out`)
    }
    assert.ok(
      received.order.lastIndexOf('live') > received.order.indexOf('history_end'),
      'live messages follow history_end',
    )

    // lib_update as LIB moves.
    await pollUntil(
      async () => libUpdates.length,
      (n) => n >= 2,
      20_000,
    )
    const last = libUpdates.at(-1) as { chain_id: string; block_num: number; block_id: string }
    assert.equal(last.chain_id, p.chainId)
    assert.equal(last.block_id, String((await chain.v1.chain.get_block(last.block_num)).id))

    // Cancelled: nothing more for that request.
    assert.deepEqual(await request(socket, 'cancel_stream_request', { reqUUID: ids.live }), { status: 'OK' })
    const count = received.live.length
    await transfer(chain, 'alice', 'bob', 'after cancel')
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    assert.equal(received.live.length, count)

    // Public connections count against the per-IP limit (Hyperion's HTTP routes share it).
    let refusal: Error | undefined
    for (let i = 0; i < limit + 1 && !refusal; i++)
      refusal = await connect(t, p).then(
        () => undefined,
        (e: Error) => e,
      )
    assert.match(refusal?.message ?? '', /rate limit|exceeded/i)
  },
)

test(
  '/stream with --hyperion-token: the handshake needs a token (auth or ?token=); reconnect replays a request from where it stopped',
  { timeout: 120_000 },
  async (t) => {
    const p = await startPlatform(t, ['--hyperion-token'])
    const chain = new APIClient({ url: p.chainApi })
    const open = (options: { auth?: Json; query?: Json }) => {
      const socket = io(p.api, { path: '/stream', transports: ['websocket'], reconnection: false, ...options })
      t.after(() => void socket.close())
      return new Promise<Socket>((resolve, reject) => {
        socket.once('handshake', () => resolve(socket))
        socket.once('connect_error', reject)
      })
    }
    const refusedWithout = await open({}).then(
      () => undefined,
      (e: Error & { data?: { statusCode?: number } }) => e,
    )
    assert.equal(refusedWithout?.data?.statusCode, 401, refusedWithout?.message)
    const refusedBad = await open({ auth: { token: 'nope' } }).then(
      () => undefined,
      (e: Error & { data?: { statusCode?: number } }) => e,
    )
    assert.equal(refusedBad?.data?.statusCode, 401)
    const token = await issueToken(p, p.apiKey)
    await open({ query: { token } })
    const first = await open({ auth: { token } })

    // A live request kept for a reconnect; one transfer while connected, one while away.
    const ids: { first?: string; second?: string } = {}
    const before = collect(first, () => ids.first)
    const ack = await request(first, 'action_stream_request', { account: 'carol', replayOnReconnect: true })
    assert.equal(ack.status, 'OK')
    ids.first = ack.reqUUID
    const seen = await transfer(chain, 'alice', 'carol', 'seen')
    await pollUntil(
      async () => before.live.length,
      (n) => n >= 1,
      20_000,
    )
    const oldId = first.id
    first.close()
    const missed = await transfer(chain, 'alice', 'carol', 'missed')
    const second = await open({ auth: { token } })
    const after = collect(second, () => ids.second)
    const resumed = (await second.timeout(10_000).emitWithAck('reconnect', { last_id: oldId })) as {
      status: string
      reqUUIDs: string[]
    }
    assert.equal(resumed.status, 'OK')
    assert.equal(resumed.reqUUIDs.length, 1)
    ids.second = resumed.reqUUIDs[0]
    await pollUntil(
      async () => [...after.history, ...after.live].length,
      (n) => n >= 1,
      20_000,
    )
    await new Promise((resolve) => setTimeout(resolve, 500))
    assert.deepEqual(
      [...after.history, ...after.live].map((d) => d.trx_id),
      [missed.id],
      'the missed transfer, not the one already seen',
    )
    assert.ok(seen.blockNum < missed.blockNum)
    // An unknown socket id: the client is asked to resend its requests.
    const resend = new Promise<void>((resolve) => second.once('resend_requests', () => resolve()))
    assert.deepEqual(await second.timeout(10_000).emitWithAck('reconnect', { last_id: 'unknown' }), {
      status: 'NOT_FOUND',
    })
    await resend
  },
)
