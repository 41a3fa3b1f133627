import { test } from 'node:test'
import assert from 'node:assert/strict'
import { WebSocketServer } from 'ws'
import type { BlockRef } from '../../src/antelope/index.ts'
import {
  SHIP_ABI_TEXT,
  createShipReader,
  decodeRequest,
  encodeBlocksResult,
  encodeStatusResult,
} from '../../src/ship/index.ts'
import { startDevchain } from '../../src/devchain/index.ts'
import { tempDir } from '../_helpers/devchain.ts'
import { onCleanup } from '../_helpers/cleanup.ts'

test('createShipReader() reconnects with have_positions and is rewound past a fork it missed', async (t) => {
  const config = {
    dataDir: tempDir(t),
    host: '127.0.0.1',
    chainPort: 0,
    shipPort: 0,
    blockTimeMs: 0,
    libDepth: 12,
    producers: 1,
    forkRate: 0,
    workload: 'none' as const,
  }
  let devchain = await startDevchain(config)
  onCleanup(t, () => devchain.close())
  for (let i = 0; i < 6; i++) devchain.chain.produceBlock()
  const ports = { chainPort: Number(new URL(devchain.chainApi).port), shipPort: Number(new URL(devchain.ship).port) }

  const held: BlockRef[] = []
  const events: string[] = []
  const reader = createShipReader({
    url: devchain.ship,
    startBlockNum: 1,
    havePositions: () => held.slice(-12),
    resumeFrom: () => (held.at(-1)?.blockNum ?? 0) + 1,
    reconnect: { minDelayMs: 50, maxDelayMs: 200 },
    onEvent: (e) => events.push(e.type),
  })
  onCleanup(t, () => reader.close())
  const iterator = reader.blocks()
  const next = async () => {
    const { value } = await iterator.next()
    const ref = value!.thisBlock!
    while (held.length && held.at(-1)!.blockNum >= ref.blockNum) held.pop()
    held.push(ref)
    return ref
  }
  while ((await next()).blockNum < devchain.chain.head.num);
  const staleHead = held.at(-1)!

  // The chain restarts and forks while the reader is away: its last two blocks are gone.
  await devchain.close()
  devchain = await startDevchain({ ...config, ...ports })
  const fork = devchain.chain.fork(2)
  const first = await next()
  assert.equal(first.blockNum, fork.fork_block_num, 'the server rewound to the first position that no longer matches')
  assert.ok(first.blockNum < staleHead.blockNum + 1)
  while ((await next()).blockId !== devchain.chain.head.id);
  assert.deepEqual(
    held.slice(-4).map((p) => p.blockId),
    [4, 3, 2, 1].map((d) => devchain.chain.blockIdAt(devchain.chain.head.num - d + 1)),
  )
  assert.ok(
    events.includes('disconnected') &&
      events.includes('reconnecting') &&
      events.filter((e) => e === 'connected').length === 2,
  )
})

async function fakeShip(
  t: import('node:test').TestContext,
  onConnection: (send: (data: string | Uint8Array) => void) => void,
): Promise<string> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 })
  await new Promise((r) => wss.once('listening', r))
  wss.on('connection', (ws) => onConnection((data) => ws.send(data)))
  onCleanup(t, () => new Promise<void>((r) => wss.close(() => r())))
  return `ws://127.0.0.1:${(wss.address() as { port: number }).port}`
}

const status = encodeStatusResult({
  v1: false,
  head: { blockNum: 5, blockId: '0'.repeat(64) },
  lastIrreversible: { blockNum: 1, blockId: '0'.repeat(64) },
  traceBeginBlock: 1,
  traceEndBlock: 6,
  chainStateBeginBlock: 1,
  chainStateEndBlock: 6,
  chainId: 'a'.repeat(64),
})

for (const [what, frames] of [
  ['a binary first frame instead of the ABI', [new Uint8Array([0])]],
  ['an ABI that does not parse', ['{not json']],
  ['a truncated status result', [SHIP_ABI_TEXT, status.subarray(0, 20)]],
  ['an unknown result variant', [SHIP_ABI_TEXT, new Uint8Array([9, 0, 0])]],
  ['a text frame after the ABI', [SHIP_ABI_TEXT, 'hello']],
] as const) {
  test(`createShipReader() stops with ship_protocol_error on ${what}`, async (t) => {
    const url = await fakeShip(t, (send) => {
      for (const frame of frames) send(frame)
    })
    const reader = createShipReader({ url, startBlockNum: 1, reconnect: { maxAttempts: 1, minDelayMs: 10 } })
    onCleanup(t, () => reader.close())
    await assert.rejects(reader.blocks().next(), (e: { code?: string }) => e.code === 'ship_protocol_error')
  })
}

test('createShipReader() gives up with ship_unavailable_error after its attempts', async (t) => {
  const url = await fakeShip(t, () => undefined)
  const port = new URL(url).port
  const reader = createShipReader({
    url: `ws://127.0.0.1:${Number(port) === 1 ? 2 : 1}`,
    startBlockNum: 1,
    reconnect: { maxAttempts: 2, minDelayMs: 10, maxDelayMs: 20 },
  })
  onCleanup(t, () => reader.close())
  await assert.rejects(reader.blocks().next(), (e: { code?: string }) => e.code === 'ship_unavailable_error')
})

test('createShipReader() acks consumed results in groups and never lets the server run out of credits or exceed them', async (t) => {
  const blocks = 60
  const credits = 8
  const acks: number[] = []
  let outstanding = 0
  let maxOutstanding = 0
  const ref = (n: number) => ({ blockNum: n, blockId: n.toString(16).padStart(64, '0') })
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
    let next = 1
    let available = 0
    const pump = () => {
      for (; available > 0 && next <= blocks; next++, available--) {
        outstanding++
        maxOutstanding = Math.max(maxOutstanding, outstanding)
        const result = {
          v1: false,
          head: ref(blocks),
          lastIrreversible: ref(1),
          thisBlock: ref(next),
          prevBlock: next > 1 ? ref(next - 1) : undefined,
          block: undefined,
          traces: undefined,
          deltas: undefined,
        }
        ws.send(encodeBlocksResult(result))
      }
    }
    ws.send(SHIP_ABI_TEXT)
    ws.on('message', (data: Buffer) => {
      const request = decodeRequest(new Uint8Array(data))
      if (request.kind === 'status') ws.send(status)
      else if (request.kind === 'blocks') available = request.request.maxMessagesInFlight
      else {
        acks.push(request.numMessages)
        outstanding -= request.numMessages
        available += request.numMessages
      }
      pump()
    })
  })
  const url = `ws://127.0.0.1:${(wss.address() as { port: number }).port}`
  const reader = createShipReader({ url, startBlockNum: 1, endBlockNum: blocks + 1, maxMessagesInFlight: credits })
  onCleanup(t, () => reader.close())
  const seen: number[] = []
  for await (const result of reader.blocks()) {
    seen.push(result.thisBlock!.blockNum)
    // A slow consumer: the server must still never have more than `credits` results out.
    await new Promise((r) => setImmediate(r))
  }
  assert.deepEqual(
    seen,
    Array.from({ length: blocks }, (_, i) => i + 1),
  )
  assert.ok(maxOutstanding <= credits, `at most ${credits} results out at once, saw ${maxOutstanding}`)
  assert.ok(acks.length > 0 && acks.every((n) => n === credits / 4), `acks of ${credits / 4}: ${acks.join(',')}`)
})
