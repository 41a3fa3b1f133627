import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { WebSocketServer } from 'ws'
import { SHIP_ABI_TEXT, decodeRequest, encodeBlocksResult, encodeStatusResult } from '../../src/ship/index.ts'
import { buildChain, startDevchain, pushSigned } from '../../src/devchain/index.ts'
import { createIndexer } from '../../src/ingest/index.ts'
import { CATCH_UP_BATCH, CATCH_UP_RECORDS } from '../../src/ingest/indexer.ts'
import { openSqliteStore } from '../../src/store/index.ts'
import { tempDir, withDevchain } from '../_helpers/devchain.ts'
import { dumpSqliteStore, until } from '../_helpers/store.ts'
import { onCleanup } from '../_helpers/cleanup.ts'

test('the indexer survives SHiP disconnects and a devchain restart mid-stream without a gap', async (t) => {
  const dir = tempDir(t)
  const config = {
    dataDir: join(dir, 'chain'),
    host: '127.0.0.1',
    chainPort: 0,
    shipPort: 0,
    blockTimeMs: 0,
    libDepth: 6,
    producers: 3,
    forkRate: 0,
    workload: 'none' as const,
  }
  let devchain = await startDevchain(config)
  onCleanup(t, () => devchain.close())
  const ports = { chainPort: Number(new URL(devchain.chainApi).port), shipPort: Number(new URL(devchain.ship).port) }
  const transfer = (memo: string) => {
    pushSigned(devchain.chain, [
      {
        account: 'eosio.token',
        name: 'transfer',
        authorization: [{ actor: 'alice', permission: 'active' }],
        data: { from: 'alice', to: 'bob', quantity: '0.0001 EOS', memo },
      },
    ])
    devchain.chain.produceBlock()
  }
  for (let i = 0; i < 5; i++) transfer(`a${i}`)
  const store = openSqliteStore(join(dir, 'live.sqlite'))
  onCleanup(t, () => store.close())
  const events: string[] = []
  const indexer = createIndexer({
    shipUrl: devchain.ship,
    store,
    reconnect: { minDelayMs: 50, maxDelayMs: 200 },
    onReaderEvent: (e) => events.push(e.type),
  })
  const running = indexer.run()
  onCleanup(t, () => indexer.stop())
  await until(async () => (await store.position())?.head.blockNum === devchain.chain.head.num, 'catch-up')

  await devchain.close()
  devchain = await startDevchain({ ...config, ...ports })
  for (let i = 0; i < 5; i++) transfer(`b${i}`)
  devchain.chain.fork(2)
  await until(
    async () => (await store.position())?.head.blockId === devchain.chain.head.id,
    'the indexer to follow the restarted chain',
  )
  await indexer.stop()
  await running
  assert.ok(events.includes('reconnecting'))

  const fresh = openSqliteStore(join(dir, 'fresh.sqlite'))
  await createIndexer({ shipUrl: devchain.ship, store: fresh, endBlockNum: devchain.chain.head.num }).run()
  await fresh.close()
  const live = dumpSqliteStore(join(dir, 'live.sqlite'))
  const freshDump = dumpSqliteStore(join(dir, 'fresh.sqlite'))
  for (const table of Object.keys(freshDump)) assert.deepEqual(live[table], freshDump[table], table)
})

const ZERO = '0'.repeat(64)
const pos = (n: number) => ({ blockNum: n, blockId: n.toString(16).padStart(8, '0') + 'a'.repeat(56) })

/** A SHiP server that answers with `frames(request)` after the ABI and status. */
async function fakeShip(t: import('node:test').TestContext, blockFrame: () => Uint8Array | string): Promise<string> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 })
  await new Promise((r) => wss.once('listening', r))
  wss.on('connection', (ws) => {
    ws.send(SHIP_ABI_TEXT)
    ws.on('message', (data: Buffer) => {
      const message = decodeRequest(new Uint8Array(data))
      if (message.kind === 'status')
        ws.send(
          encodeStatusResult({
            v1: false,
            head: pos(1),
            lastIrreversible: pos(1),
            traceBeginBlock: 1,
            traceEndBlock: 2,
            chainStateBeginBlock: 1,
            chainStateEndBlock: 2,
            chainId: ZERO,
          }),
        )
      if (message.kind === 'blocks') ws.send(blockFrame())
    })
  })
  onCleanup(t, () => new Promise<void>((r) => wss.close(() => r())))
  return `ws://127.0.0.1:${(wss.address() as { port: number }).port}`
}

const header = new Uint8Array(14 + 32 + 32 + 32 + 4 + 1 + 1 + 66 + 1 + 1)

for (const [what, frame, code] of [
  [
    'a truncated frame',
    () =>
      encodeBlocksResult({
        v1: false,
        head: pos(1),
        lastIrreversible: pos(1),
        thisBlock: pos(1),
        prevBlock: undefined,
        block: header,
        traces: new Uint8Array([0]),
        deltas: new Uint8Array([0]),
      }).subarray(0, 60),
    'ship_protocol_error',
  ],
  ['an unknown result variant', () => new Uint8Array([7, 1, 2]), 'ship_protocol_error'],
  [
    'traces that do not decode',
    () =>
      encodeBlocksResult({
        v1: false,
        head: pos(1),
        lastIrreversible: pos(1),
        thisBlock: pos(1),
        prevBlock: undefined,
        block: header,
        traces: new Uint8Array([5, 9, 9]),
        deltas: new Uint8Array([0]),
      }),
    'binary_decode_error',
  ],
  [
    'an unknown delta table variant',
    () =>
      encodeBlocksResult({
        v1: false,
        head: pos(1),
        lastIrreversible: pos(1),
        thisBlock: pos(1),
        prevBlock: undefined,
        block: header,
        traces: new Uint8Array([0]),
        deltas: new Uint8Array([1, 3, 0]),
      }),
    'binary_decode_error',
  ],
] as const) {
  test(`the indexer stops on ${what} with ${code} and writes no partial block`, async (t) => {
    const url = await fakeShip(t, frame)
    const store = openSqliteStore(join(tempDir(t), 'store.sqlite'))
    onCleanup(t, () => store.close())
    await assert.rejects(
      createIndexer({ shipUrl: url, store, reconnect: { maxAttempts: 1, minDelayMs: 10 } }).run(),
      (e: { code?: string; message: string }) => e.code === code && !/\n\s+at /.test(e.message),
    )
    assert.equal(await store.position(), undefined)
    assert.equal(await store.blockByNum(1), undefined)
  })
}

test('a batch write that fails while the next batch is being read stops the indexer with that error, the written batches intact', async (t) => {
  const dir = tempDir(t)
  const devchain = await withDevchain(t, { libDepth: 6 })
  for (let i = 0; i < 450; i++) devchain.chain.produceBlock()
  const store = openSqliteStore(join(dir, 'store.sqlite'))
  onCleanup(t, () => store.close())
  let writes = 0
  const diskFull = new Error('disk full (injected)')
  // The real store, with its second catch-up write failing as a full disk would make it fail.
  const failing = Object.assign(Object.create(store), {
    applyBlocks: async (batches: Parameters<typeof store.applyBlocks>[0], lib: number) => {
      if (++writes === 2) throw diskFull
      return store.applyBlocks(batches, lib)
    },
  }) as typeof store
  await assert.rejects(
    createIndexer({ shipUrl: devchain.ship, store: failing, endBlockNum: devchain.chain.head.num }).run(),
    (e) => e === diskFull,
  )
  assert.equal((await store.position())?.head.blockNum, CATCH_UP_BATCH, 'the first batch is stored')
  assert.deepEqual(await store.integrityFindings(), [])
})

test('far behind head, a catch-up write holds at most CATCH_UP_BATCH blocks and about CATCH_UP_RECORDS records', async (t) => {
  const dir = tempDir(t)
  const devchain = await withDevchain(t, { libDepth: 6 })
  // Light blocks, 60 busy ones (about 600 records each: 200 transfers of three traces, balances), light ones: the
  // first 120 are far behind the head.
  buildChain(devchain.chain, { blocks: 60, transfersPerBlock: 1, rawdbPutsPerBlock: 0 })
  buildChain(devchain.chain, { blocks: 60, transfersPerBlock: 200, rawdbPutsPerBlock: 0 })
  buildChain(devchain.chain, { blocks: 100, transfersPerBlock: 1, rawdbPutsPerBlock: 0 })
  const store = openSqliteStore(join(dir, 'store.sqlite'))
  onCleanup(t, () => store.close())
  const writes: { blocks: number; records: number; lastBlockRecords: number }[] = []
  const counted = Object.assign(Object.create(store), {
    applyBlocks: async (batches: Parameters<typeof store.applyBlocks>[0], lib: number) => {
      const records = batches.map((b) => b.actions.length + b.rows.length)
      writes.push({
        blocks: batches.length,
        records: records.reduce((a, b) => a + b, 0),
        lastBlockRecords: records.at(-1)!,
      })
      return store.applyBlocks(batches, lib)
    },
  }) as typeof store
  await createIndexer({ shipUrl: devchain.ship, store: counted, endBlockNum: devchain.chain.head.num }).run()
  assert.equal((await store.position())?.head.blockNum, devchain.chain.head.num)
  for (const w of writes) {
    assert.ok(w.blocks <= CATCH_UP_BATCH, JSON.stringify(w))
    assert.ok(w.records - w.lastBlockRecords < CATCH_UP_RECORDS, JSON.stringify(w))
  }
  const busy = writes.filter((w) => w.records / w.blocks > 500)
  assert.ok(busy.length > 0 && busy.every((w) => w.blocks > 1 && w.blocks < CATCH_UP_BATCH), JSON.stringify(busy))
  assert.ok(
    writes.some((w) => w.blocks === CATCH_UP_BATCH),
    'light blocks far behind still commit CATCH_UP_BATCH at a time',
  )
  assert.deepEqual(await store.integrityFindings(), [])
})
