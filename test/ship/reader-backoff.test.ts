import { test } from 'node:test'
import assert from 'node:assert/strict'
import { WebSocketServer } from 'ws'
import { onCleanup } from '../_helpers/cleanup.ts'
import {
  SHIP_ABI_TEXT,
  createShipReader,
  decodeRequest,
  encodeBlocksResult,
  encodeStatusResult,
  type ShipReaderEvent,
} from '../../src/ship/index.ts'

const ref = (n: number) => ({ blockNum: n, blockId: n.toString(16).padStart(64, '0') })
const status = encodeStatusResult({
  v1: false,
  head: ref(5),
  lastIrreversible: ref(1),
  traceBeginBlock: 1,
  traceEndBlock: 6,
  chainStateBeginBlock: 1,
  chainStateEndBlock: 6,
  chainId: 'a'.repeat(64),
})

test('createShipReader() backs off exponentially (bounded sessions per second) from a server that drops every connection after the handshake, even after it once delivered a block', async (t) => {
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
  let connections = 0
  wss.on('connection', (ws) => {
    const first = ++connections === 1
    ws.send(SHIP_ABI_TEXT)
    ws.on('message', (data: Buffer) => {
      const request = decodeRequest(new Uint8Array(data))
      if (request.kind === 'status') return ws.send(status)
      if (request.kind !== 'blocks') return
      // The first connection delivers block 1; every later one drops as soon as blocks are asked for.
      if (first)
        ws.send(
          encodeBlocksResult({
            v1: false,
            head: ref(5),
            lastIrreversible: ref(1),
            thisBlock: ref(1),
            prevBlock: undefined,
            block: undefined,
            traces: undefined,
            deltas: undefined,
          }),
        )
      ws.close()
    })
  })
  const events: ShipReaderEvent[] = []
  const reader = createShipReader({
    url: `ws://127.0.0.1:${(wss.address() as { port: number }).port}`,
    startBlockNum: 1,
    reconnect: { minDelayMs: 20, maxDelayMs: 200 },
    onEvent: (e) => events.push(e),
  })
  onCleanup(t, () => reader.close())
  const iterator = reader.blocks()
  assert.equal((await iterator.next()).value?.thisBlock?.blockNum, 1)
  const pending = iterator.next()
  pending.catch(() => undefined)
  await new Promise((r) => setTimeout(r, 2000))
  await reader.close()
  const delays = events.flatMap((e) => (e.type === 'reconnecting' ? [e.delayMs] : []))
  // 20+40+80+160+200+200+… ms: about a dozen connections in 2 s (reset to 20 ms each time, it was ~80).
  assert.ok(connections <= 16, `connections in 2 s: ${connections} (delays ${delays.join(',')})`)
  assert.deepEqual(
    delays.slice(0, 6),
    [20, 40, 80, 160, 200, 200],
    'the connection that delivered block 1 restarts the back-off; the empty ones double it up to maxDelayMs',
  )
  assert.ok(delays.every((d) => d <= 200))
})
