import { test } from 'node:test'
import assert from 'node:assert/strict'
import { APIClient } from '@wharfkit/antelope'
import { io, type Socket } from 'socket.io-client'
import { issueToken, startPlatform, type Platform } from '../_helpers/platform.ts'
import { pollUntil, pushActions, waitIndexed } from '../_helpers/push.ts'

type Json = Record<string, unknown>
type Ack = { status: string; reqUUID?: string; currentBlockNum?: number; message?: string }
interface Received {
  readonly order: string[]
  readonly history: Json[]
  readonly live: Json[]
  readonly forks: Json[]
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

/** Collects what a request receives; history batches are acked (`{status: true}`) as Hyperion's client does. */
function collect(socket: Socket, reqUUID: () => string | undefined): Received {
  const received: Received = { order: [], history: [], live: [], forks: [] }
  socket.on('message', (m: Json, ack?: (a: unknown) => void) => {
    if (m.mode === 'history' && Array.isArray(m.messages)) {
      if (m.reqUUID === reqUUID()) {
        received.history.push(...(m.messages as Json[]))
        received.order.push('history')
      }
      ack?.({ status: true })
    } else if (m.type === 'history_end' && m.reqUUID === reqUUID()) {
      received.historyEnd = m
      received.order.push('history_end')
    } else if (m.mode === 'live' && (m.targets as string[]).includes(reqUUID() ?? '')) {
      received.live.push(JSON.parse(Buffer.from(m.message as Uint8Array).toString()) as Json)
      received.order.push('live')
    }
  })
  socket.on('fork_event', (e: Json) => {
    if (e.reqUUID === reqUUID()) received.forks.push(e)
  })
  return received
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

test(
  '/stream: irreversible history in acked batches, history_end, then live actions and deltas, each exactly once; /v1/stream still works beside it',
  { timeout: 120_000 },
  async (t) => {
    const p = await startPlatform(t)
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
    await pollUntil(
      async () => idsOf(actions).length,
      (n) => n >= all.length,
      20_000,
    )
    await pollUntil(
      async () => new Set([...deltas.history, ...deltas.live].map((d) => d.block_num)).size,
      (n) => n >= new Set(all.map((x) => x.blockNum)).size,
      20_000,
    )
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
  },
)
