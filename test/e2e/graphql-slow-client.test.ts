import { test } from 'node:test'
import assert from 'node:assert/strict'
import { APIClient } from '@wharfkit/antelope'
import WebSocket from 'ws'
import { issueToken, startPlatform, type Platform } from '../_helpers/platform.ts'
import { pollUntil, pushActions } from '../_helpers/push.ts'

type Json = Record<string, unknown>

/**
 * A subscription whose results are large (aliases of the whole trace, within the documented 5,000 tokens): about
 * 1.7 MB a transfer, so a client that stops reading is megabytes behind after a few transfers.
 */
const HEAVY = `subscription { searchTransactionsForward(query: "receiver:eosio.token", lowBlockNum: -3) { cursor
  ${Array.from({ length: 700 }, (_, i) => `t${i}: trace { ...T }`).join(' ')} } }
fragment T on TransactionTrace { id executedActions { ...A } matchingActions { ...A } }
fragment A on ActionTrace { seq receiver account name hexData json authorization { actor permission }
  receipt { digest globalSequence } }`

/** How often the test pushes a transfer while the clients do not read (the demo workload's pace). */
const TRANSFER_EVERY_MS = 200

/** The server's write timeout (docs/API.md, "Limits"): a frame not written within 10 s ends the connection. */
const WRITE_TIMEOUT_MS = 10_000

/** How often a client that stopped reading pings (how soon it learns that the server closed the connection). */
const PING_INTERVAL_MS = 1_000

const rss = async (p: Platform) =>
  Number(/^antler_process_resident_memory_bytes (\S+)/m.exec(await (await fetch(`${p.api}/metrics`)).text())![1])

/**
 * A legacy socket running `count` heavy subscriptions. `stopReading()` pauses its TCP socket once it has read every
 * frame sent so far; from then on it writes a ping every second: once the server has closed its end, a ping is answered
 * with a reset, so the client learns of the close within about two seconds although it reads nothing. (Not more often:
 * the server ends a connection owing 60 pongs.)
 */
async function heavySubscriber(p: Platform, token: string, count: number) {
  const ws = new WebSocket(`${p.api.replace('http', 'ws')}/graphql`, 'graphql-ws')
  const frames: Json[] = []
  let closedAt: number | undefined
  let pausedAt: number | undefined
  let pinger: NodeJS.Timeout | undefined
  ws.on('message', (data: Buffer) => frames.push(JSON.parse(data.toString()) as Json))
  ws.on('close', () => {
    closedAt = Date.now()
    clearInterval(pinger)
  })
  ws.on('error', () => undefined)
  await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)))
  ws.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: token } }))
  await pollUntil(async () => frames.some((f) => f.type === 'connection_ack'), Boolean, 10_000)
  for (let i = 0; i < count; i++) ws.send(JSON.stringify({ type: 'start', id: `s${i}`, payload: { query: HEAVY } }))
  const data = () => frames.filter((f) => f.type === 'data').length
  return {
    frames,
    data,
    stopReading() {
      ;(ws as unknown as { _socket: { pause(): void } })._socket.pause()
      pausedAt = Date.now()
      pinger = setInterval(() => ws.readyState === ws.OPEN && ws.ping(), PING_INTERVAL_MS)
    },
    /** How long after it stopped reading the socket was closed (undefined: still open). */
    closedAfterMs: () => (closedAt === undefined || pausedAt === undefined ? undefined : closedAt - pausedAt),
    stop() {
      clearInterval(pinger)
      ws.terminate()
    },
  }
}

test('a /graphql subscriber that stops reading: its subscriptions end as too slow, memory stays bounded', async (t) => {
  const p = await startPlatform(t)
  const token = await issueToken(p, p.apiKey)
  const before = await rss(p)
  const chain = new APIClient({ url: p.chainApi })
  let transfers = 0
  const transfer = () =>
    pushActions(chain, [
      {
        account: 'eosio.token',
        name: 'transfer',
        actor: 'alice',
        data: { from: 'alice', to: 'bob', quantity: '0.0001 EOS', memo: `slow ${transfers++}` },
      },
    ])
  // Many heavy subscriptions on one socket (30 frames a transfer pass the 16 MiB bound at once), one on another
  // (one frame at a time stays under it).
  const many = await heavySubscriber(p, token, 30)
  const single = await heavySubscriber(p, token, 1)
  t.after(() => (many.stop(), single.stop()))
  // One transfer, read in full by both: nothing is waiting for either client when it stops reading, so the write
  // timeout cannot end a connection sooner than WRITE_TIMEOUT_MS after that.
  await transfer()
  await pollUntil(
    async () => many.data() + single.data(),
    (n) => n === 31,
    30_000,
  )
  many.stopReading()
  single.stopReading()

  // Transfers go on (each a frame for every subscription) until both sockets are closed.
  let pushing = true
  const pusher = (async () => {
    while (pushing) await Promise.all([transfer(), new Promise((resolve) => setTimeout(resolve, TRANSFER_EVERY_MS))])
  })()
  t.after(async () => {
    pushing = false
    await pusher
  })
  let peak = before
  const closedAfter = async (s: typeof many, what: string, withinMs: number) => {
    await pollUntil(
      async () => {
        peak = Math.max(peak, await rss(p))
        return s.closedAfterMs()
      },
      (ms) => ms !== undefined,
      withinMs,
    ).catch((error: unknown) =>
      assert.fail(`${what} still open ${withinMs} ms after the client stopped reading: ${error}`),
    )
    return s.closedAfterMs()!
  }
  const manyMs = await closedAfter(many, 'the socket of 30 subscriptions', WRITE_TIMEOUT_MS)
  const singleMs = await closedAfter(single, 'the socket of one subscription', 3 * WRITE_TIMEOUT_MS)
  pushing = false
  await pusher
  t.diagnostic(
    `closed ${manyMs} ms (30 subscriptions) and ${singleMs} ms (one) after the clients stopped reading, ` +
      `${transfers} transfers; RSS ${Math.round(before / 2 ** 20)} MiB before, ${Math.round(peak / 2 ** 20)} MiB at most`,
  )

  await t.test('the socket of many subscriptions ends on the 16 MiB bound, before the write timeout could', () => {
    // ws_consumer_too_slow_error: its error frame cannot pass a socket that does not read, so the close announces it.
    // Nothing was waiting when the client stopped reading, so a close sooner than the write timeout is the bound's.
    assert.ok(manyMs < WRITE_TIMEOUT_MS, `closed ${manyMs} ms after the client stopped reading`)
  })

  await t.test('a single subscription on a socket that stops reading ends too (docs/API.md, "Limits")', () => {
    assert.ok(singleMs < 3 * WRITE_TIMEOUT_MS, `closed ${singleMs} ms after the client stopped reading`)
  })

  await t.test('the server holds a bounded amount for the slow clients', () => {
    // Every frame the two clients did not read would be over 2 GB (31 frames of 1.7 MB a transfer); what the server
    // makes and collects as garbage meanwhile (one shared payload a transfer) is most of the growth.
    assert.ok(peak - before < 600 * 2 ** 20, `RSS grew by ${Math.round((peak - before) / 2 ** 20)} MiB`)
    assert.equal(p.cli.child.exitCode, null)
  })
})
