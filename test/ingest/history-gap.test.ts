import { test } from 'node:test'
import assert from 'node:assert/strict'
import { WebSocketServer } from 'ws'
import type { AntlerError } from '../../src/antelope/index.ts'
import { createIndexer } from '../../src/ingest/index.ts'
import {
  SHIP_ABI_TEXT,
  decodeRequest,
  encodeBlocksResult,
  encodeStatusResult,
  type ShipReaderEvent,
} from '../../src/ship/index.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { withDevchain } from '../_helpers/devchain.ts'
import { startShipProxy } from '../_helpers/ship-proxy.ts'
import { tempSqliteStore } from '../_helpers/store.ts'

/** A devchain with 40 blocks and a store holding its first 10. */
async function storeAtTen(t: import('node:test').TestContext) {
  const devchain = await withDevchain(t, { libDepth: 3 })
  for (let i = 0; i < 40; i++) devchain.chain.produceBlock()
  const store = tempSqliteStore(t)
  await createIndexer({ shipUrl: devchain.ship, store, endBlockNum: 10 }).run()
  assert.equal((await store.position())?.head.blockNum, 10)
  return { devchain, store }
}

/** Runs an indexer to its end; its error, the reader events and how long it took. */
async function runToError(config: Omit<Parameters<typeof createIndexer>[0], 'onReaderEvent'>) {
  const events: ShipReaderEvent[] = []
  const started = Date.now()
  const indexer = createIndexer({
    reconnect: { minDelayMs: 50, maxDelayMs: 400 },
    ...config,
    onReaderEvent: (e) => events.push(e),
  })
  // An indexer that never stops on its own (the relink loop this replaces) is stopped after 15 s.
  const timer = setTimeout(() => void indexer.stop(), 15_000)
  const error = await indexer.run().then(
    () => undefined,
    (e: unknown) => e as AntlerError,
  )
  clearTimeout(timer)
  await indexer.stop()
  return { error, events, ms: Date.now() - started, sessions: events.filter((e) => e.type === 'connected').length }
}

for (const statusShowsRetention of [true, false]) {
  const how = statusShowsRetention
    ? 'its status at connect'
    : 'results without a block, then block 30 (its status claims history from block 1)'
  test(`a node whose history starts above the store's head + 1 (seen from ${how}) stops the indexer with ship_history_gap_error after one session`, async (t) => {
    const { devchain, store } = await storeAtTen(t)
    const proxy = await startShipProxy(t, devchain.ship, { retainFrom: 30, statusShowsRetention })
    const { error, events, ms, sessions } = await runToError({ shipUrl: proxy.url, store })
    assert.ok(error, 'the indexer stopped with an error')
    assert.equal(error.code, 'ship_history_gap_error', error.message)
    assert.deepEqual(error.details, {
      needed: 11,
      available: 30,
      storeHead: 10,
      source: statusShowsRetention ? 'status' : 'results',
    })
    assert.match(error.message, /head is block 10 and needs block 11 next/)
    assert.match(error.message, /block 30/)
    assert.match(error.message, /--start-block 30/)
    assert.ok(
      sessions <= 2 && proxy.sessions() <= 2,
      `at most a handful of sessions: ${sessions} connected, ${proxy.sessions()} opened`,
    )
    assert.equal(events.filter((e) => e.type === 'reconnecting').length, 0, 'no reconnect')
    assert.ok(ms < 10_000, `stopped within ${ms} ms`)
    assert.equal((await store.position())?.head.blockNum, 10, 'nothing past the gap was written')
    assert.equal(await store.blockByNum(30), undefined)
  })
}

test('an empty store whose start block the node no longer holds stops with the gap error naming --start-block; that start block then works', async (t) => {
  const devchain = await withDevchain(t, { libDepth: 3 })
  for (let i = 0; i < 40; i++) devchain.chain.produceBlock()
  const proxy = await startShipProxy(t, devchain.ship, { retainFrom: 30 })
  const store = tempSqliteStore(t)
  const { error, sessions } = await runToError({ shipUrl: proxy.url, store })
  assert.equal(error?.code, 'ship_history_gap_error')
  assert.deepEqual(error.details, { needed: 1, available: 30, storeHead: null, source: 'status' })
  assert.match(error.message, /store is empty and starts at block 1.*--start-block 30/)
  assert.equal(sessions, 1)
  assert.equal(await store.position(), undefined)

  await createIndexer({ shipUrl: proxy.url, store, startBlockNum: 30, endBlockNum: 40 }).run()
  const first = await store.blockByNum(30)
  assert.equal(first?.id, devchain.chain.blockIdAt(30))
  assert.equal((await store.position())?.head.blockNum, 40)
})

test('a node whose history starts at block 2 (started from genesis: block 1 is never applied) is indexed from block 2 on a store starting at 1', async (t) => {
  const devchain = await withDevchain(t, { libDepth: 3 })
  for (let i = 0; i < 10; i++) devchain.chain.produceBlock()
  const proxy = await startShipProxy(t, devchain.ship, { retainFrom: 2 })
  const store = tempSqliteStore(t)
  await createIndexer({ shipUrl: proxy.url, store, endBlockNum: 10 }).run()
  assert.equal(await store.blockByNum(1), undefined)
  assert.equal((await store.blockByNum(2))?.id, devchain.chain.blockIdAt(2))
  assert.equal(proxy.requests[0].startBlockNum, 2, 'asked from block 2, never for the block-less 1')
})

const pos = (n: number, fork = 'a') => ({ blockNum: n, blockId: n.toString(16).padStart(8, '0') + fork.repeat(56) })
const header = new Uint8Array(14 + 32 + 32 + 32 + 4 + 1 + 1 + 66 + 1 + 1)

test('a block that never links (a fork the node will not rewind) makes the indexer reconnect with exponential back-off up to a cap, not in a tight loop', async (t) => {
  // Block 1, then a block 2 whose previous (zeros) is not block 1's id, on every session.
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 })
  await new Promise((r) => wss.once('listening', r))
  onCleanup(
    t,
    () =>
      new Promise<void>((r) => {
        for (const client of wss.clients) client.terminate()
        wss.close(() => r())
      }),
  )
  wss.on('connection', (ws) => {
    ws.send(SHIP_ABI_TEXT)
    ws.on('message', (data: Buffer) => {
      const message = decodeRequest(new Uint8Array(data))
      if (message.kind === 'status')
        ws.send(
          encodeStatusResult({
            v1: false,
            head: pos(2),
            lastIrreversible: pos(1),
            traceBeginBlock: 1,
            traceEndBlock: 3,
            chainStateBeginBlock: 1,
            chainStateEndBlock: 3,
            chainId: '0'.repeat(64),
          }),
        )
      if (message.kind !== 'blocks') return
      for (let n = message.request.startBlockNum; n <= 2; n++) {
        ws.send(
          encodeBlocksResult({
            v1: false,
            head: pos(2),
            lastIrreversible: pos(0),
            thisBlock: pos(n),
            prevBlock: n > 1 ? pos(n - 1) : undefined,
            block: header,
            traces: new Uint8Array([0]),
            deltas: new Uint8Array([0]),
          }),
        )
      }
    })
  })
  const store = tempSqliteStore(t)
  const events: ShipReaderEvent[] = []
  const indexer = createIndexer({
    shipUrl: `ws://127.0.0.1:${(wss.address() as { port: number }).port}`,
    store,
    reconnect: { minDelayMs: 50, maxDelayMs: 400 },
    onReaderEvent: (e) => events.push(e),
  })
  const running = indexer.run()
  await new Promise((r) => setTimeout(r, 3000))
  await indexer.stop()
  await running
  const sessions = events.filter((e) => e.type === 'connected').length
  const delays = events.flatMap((e) => (e.type === 'reconnecting' ? [e.delayMs] : []))
  // 50+100+200+400+400+… ms: about 9 sessions in 3 s (the loop it replaces opened hundreds per second).
  assert.ok(sessions >= 3 && sessions <= 12, `sessions in 3 s: ${sessions}`)
  assert.deepEqual(delays.slice(0, 5), [50, 100, 200, 400, 400], 'doubling from minDelayMs up to maxDelayMs')
  assert.ok(delays.every((d) => d <= 400))
  const reasons = events.flatMap((e) => (e.type === 'reconnecting' && e.reason ? [e.reason] : []))
  assert.match(reasons[0] ?? '', /block 2 does not link to the store's head 1/)
  assert.equal((await store.position())?.head.blockNum, 1)
})
