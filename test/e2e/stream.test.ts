import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import WebSocket from 'ws'
import { APIClient } from '@wharfkit/antelope'
import type { DfuseClient, InboundMessage, Stream } from '@dfuse/client'
import { dfuseClient, issueToken, type Platform, startPlatform } from '../_helpers/platform.ts'
import { pollUntil, pushActions, waitIndexed } from '../_helpers/push.ts'

/** The sockets the client opens, so a test can cut one as a network failure would (close code 1006). */
const sockets: WebSocket[] = []
class TrackedWebSocket extends WebSocket {
  constructor(...args: ConstructorParameters<typeof WebSocket>) {
    super(...args)
    sockets.push(this)
  }
}
;(globalThis as { WebSocket?: unknown }).WebSocket = TrackedWebSocket

type Json = Record<string, unknown>
const transfer = (memo: string, to = 'bob') => ({
  account: 'eosio.token',
  name: 'transfer',
  actor: 'alice',
  data: { from: 'alice', to, quantity: '0.0001 EOS', memo },
})

/** A client that reconnects within 200 ms, so the reconnect check is quick. */
function dfuse(t: TestContext, p: Platform): DfuseClient {
  return dfuseClient(t, p, { streamClientOptions: { socketOptions: { reconnectDelayInMs: 200 } } })
}

/** Messages of one stream, with a wait for a condition on them. */
function collector() {
  const messages: InboundMessage[] = []
  return {
    messages,
    onMessage: (message: InboundMessage) => void messages.push(message),
    of: (type: string) => messages.filter((m) => m.type === type).map((m) => m.data as Json),
    until: (done: (all: InboundMessage[]) => boolean, what: string, timeoutMs = 20_000) =>
      pollUntil(async () => messages, done, timeoutMs).catch(() =>
        assert.fail(`${what}; got ${JSON.stringify(messages.map((m) => m.type))}`),
      ),
  }
}

test('/v1/stream with @dfuse/client against a running antler dev: action traces from the past into live, table rows, a transaction lifecycle, head info, reconnect; protocol errors', async (t) => {
  const p = await startPlatform(t, ['--lib-depth', '6'])
  const chain = new APIClient({ url: p.chainApi })
  const client = dfuse(t, p)

  await t.test(
    'streamActionTraces from a past block: the past transfers, then live ones, once each and in order',
    async () => {
      const past = [await pushActions(chain, [transfer('past-1')]), await pushActions(chain, [transfer('past-2')])]
      await waitIndexed(p.api, past[1].blockNum)
      const c = collector()
      const stream: Stream = await client.streamActionTraces(
        { accounts: 'eosio.token', action_names: 'transfer', with_inline_traces: true },
        c.onMessage,
        { start_block: past[0].blockNum },
      )
      await c.until((all) => all.filter((m) => m.type === 'action_trace').length >= 2, 'the two past transfers')
      const live = [await pushActions(chain, [transfer('live-1')]), await pushActions(chain, [transfer('live-2')])]
      await c.until((all) => all.filter((m) => m.type === 'action_trace').length >= 4, 'the two live transfers')
      await new Promise((resolve) => setTimeout(resolve, 500))
      await stream.close()
      assert.deepEqual(c.of('listening')[0], { next_block: past[0].blockNum })
      const traces = c.of('action_trace')
      assert.deepEqual(
        traces.map((d) => ((d.trace as Json).act as Json & { data: Json }).data.memo),
        ['past-1', 'past-2', 'live-1', 'live-2'],
      )
      assert.deepEqual(
        traces.map((d) => d.trx_id),
        [...past, ...live].map((x) => x.id),
      )
      assert.deepEqual(
        traces.map((d) => d.block_num),
        [...past, ...live].map((x) => x.blockNum),
      )
      const first = traces[0] as Json & { trace: { receiver: string; inline_traces: { receiver: string }[] } }
      assert.equal(first.trace.receiver, 'eosio.token')
      assert.deepEqual(
        first.trace.inline_traces.map((x) => x.receiver),
        ['alice', 'bob'],
      )
      assert.equal(first.idx, 0)
      assert.match(String(first.block_time), /Z$/)
    },
  )

  await t.test(
    'streamTableRows with fetch: the snapshot, then a delta per transfer with the new balance decoded',
    async () => {
      const c = collector()
      const stream = await client.streamTableRows(
        { code: 'eosio.token', scope: 'carol', table: 'accounts' },
        c.onMessage,
        { fetch: true },
      )
      await c.until((all) => all.some((m) => m.type === 'table_snapshot'), 'the snapshot')
      const before = (c.of('table_snapshot')[0].rows as { key: string; json: { balance: string } }[])[0]
      assert.equal(before.key, '........ehbo5')
      const pushed = await pushActions(chain, [transfer('to carol', 'carol')])
      await c.until((all) => all.some((m) => m.type === 'table_delta'), 'the delta')
      await stream.close()
      const delta = c.of('table_delta')[0] as Json & {
        dbop: Json & { old: { json: { balance: string } }; new: { json: { balance: string } } }
      }
      assert.deepEqual(
        [delta.step, delta.block_num, delta.dbop.op, delta.dbop.key, delta.dbop.old.json.balance],
        ['new', pushed.blockNum, 'upd', '........ehbo5', before.json.balance],
      )
      const amount = (s: string) => Math.round(Number(s.split(' ')[0]) * 10_000)
      assert.equal(amount(delta.dbop.new.json.balance), amount(before.json.balance) + 1)
    },
  )

  await t.test('streamTransaction of a delayed transfer: delayed, then executed, then irreversible', async () => {
    const pushed = await pushActions(chain, [transfer('delayed stream')], { delaySec: 1 })
    const c = collector()
    const stream = await client.streamTransaction({ id: pushed.id }, c.onMessage)
    await c.until(
      (all) =>
        all.some(
          (m) =>
            m.type === 'transaction_lifecycle' && ((m.data as Json).lifecycle as Json).execution_irreversible === true,
        ),
      'an irreversible execution',
      30_000,
    )
    await stream.close()
    const statuses = c.of('transaction_lifecycle').map((d) => (d.lifecycle as Json).transaction_status)
    assert.equal(statuses.at(-1), 'executed')
    assert.ok(
      statuses.every((s) => s === 'delayed' || s === 'executed'),
      JSON.stringify(statuses),
    )
  })

  await t.test('streamHeadInfo: the head now, then each new head with LIB behind it', async () => {
    const c = collector()
    const stream = await client.streamHeadInfo(c.onMessage)
    await c.until((all) => all.filter((m) => m.type === 'head_info').length >= 5, 'five heads')
    await stream.close()
    const heads = c.of('head_info') as {
      head_block_num: number
      last_irreversible_block_num: number
      head_block_producer: string
    }[]
    for (let i = 1; i < heads.length; i++) assert.ok(heads[i].head_block_num > heads[i - 1].head_block_num)
    assert.ok(heads.every((h) => h.last_irreversible_block_num < h.head_block_num && h.head_block_producer.length > 0))
  })

  await t.test(
    "a cut connection: the library's own reconnect resumes from its mark without a gap or a duplicate",
    async () => {
      const c = collector()
      const seen: number[] = []
      const stream = await client.streamActionTraces(
        { accounts: 'eosio.token', action_names: 'transfer' },
        (message, s) => {
          c.onMessage(message)
          if (message.type === 'action_trace') {
            const block = (message.data as Json).block_num as number
            seen.push(block)
            s.mark({ atBlockNum: block + 1 })
          }
        },
      )
      const before = await pushActions(chain, [transfer('before cut')])
      await c.until((all) => all.some((m) => m.type === 'action_trace'), 'the transfer before the cut')
      const open = sockets.filter((s) => s.readyState === WebSocket.OPEN && s.url.includes('/v1/stream'))
      assert.equal(open.length, 1, 'one stream socket to cut')
      const opened = sockets.length
      ;(open[0] as unknown as { _socket: { destroy(): void } })._socket.destroy()
      const during = await pushActions(chain, [transfer('during cut')])
      const after = await pushActions(chain, [transfer('after cut')])
      await c.until(() => seen.length >= 3, 'the transfers during and after the cut', 30_000)
      assert.ok(sockets.length > opened, 'the client opened a new socket')
      await stream.close()
      assert.deepEqual(
        c.of('action_trace').map((d) => d.trx_id),
        [before.id, during.id, after.id],
      )
    },
  )

  await t.test(
    'protocol errors on a raw socket: bad frames, validation, duplicate req_id, unlisten of nothing, too many streams',
    async () => {
      const token = await issueToken(p, p.apiKey)
      const ws = new WebSocket(`${p.api.replace('http', 'ws')}/v1/stream?token=${token}`)
      const received: Json[] = []
      ws.on('message', (data: Buffer) => received.push(JSON.parse(data.toString()) as Json))
      await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)))
      const send = (m: unknown) => ws.send(typeof m === 'string' ? m : JSON.stringify(m))
      const codeFor = async (reqId: string) =>
        (
          (await pollUntil(
            async () => received.find((m) => m.req_id === reqId && m.type === 'error'),
            (m) => m !== undefined,
            10_000,
          ))!.data as Json
        ).code
      send({ type: 'get_action_traces', req_id: 'a', data: { accounts: 'eosio.token' } })
      assert.equal(await codeFor('a'), 'ws_message_data_validation_error')
      send({ type: 'get_action_traces', req_id: 'b', listen: true, data: {} })
      assert.equal(await codeFor('b'), 'ws_message_data_validation_error')
      send({ type: 'get_action_traces', req_id: 'c', listen: 'yes', data: { accounts: 'eosio' } })
      assert.equal(await codeFor('c'), 'ws_invalid_json_message_data_error')
      send({ type: 'get_nothing', req_id: 'd' })
      assert.equal(await codeFor('d'), 'ws_unknown_message_error')
      send({ type: 'unlisten', req_id: 'e', data: { req_id: 'nope' } })
      assert.equal(await codeFor('e'), 'ws_stream_not_found_error')
      send({
        type: 'get_table_rows',
        req_id: 'f',
        fetch: true,
        start_block: 999_999_999,
        data: { code: 'eosio.token', scope: 'bob', table: 'accounts' },
      })
      assert.equal(await codeFor('f'), 'app_table_rows_cannot_fetch_in_future_error')
      for (let i = 0; i < 12; i++) send({ type: 'get_head_info', req_id: `h${i}`, listen: true })
      send({ type: 'get_head_info', req_id: 'h0', listen: true })
      assert.equal(await codeFor('h0'), 'ws_stream_already_exist_error')
      send({ type: 'get_head_info', req_id: 'h12', listen: true })
      assert.equal(await codeFor('h12'), 'ws_too_much_stream_error')
      send({ type: 'unlisten', req_id: 'u', data: { req_id: 'h3' } })
      await pollUntil(
        async () => received.find((m) => m.type === 'unlistened' && m.req_id === 'u'),
        (m) => m !== undefined,
        10_000,
      )
      send('not json')
      await pollUntil(
        async () =>
          received.filter((m) => m.type === 'error' && (m.data as Json).code === 'ws_invalid_json_message_error'),
        (l) => l.length === 1,
        10_000,
      )
      ws.close()
    },
  )
})
