import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import WebSocket from 'ws'
import { Chain, bootChain, buildChain } from '../src/devchain/index.ts'
import { startShipServer } from '../src/devchain/ship-server.ts'
import { decodeResult, decodeShipType, encodeRequest } from '../src/ship/index.ts'

export interface DevchainBenchOptions {
  readonly actions: number
  readonly transfersPerBlock: number
  readonly rawdbPutsPerBlock: number
}

/** Counts SHiP frames and bytes as fast as they come (no decoding): the serving rate. */
async function countFrames(
  url: string,
  from: number,
  to: number,
): Promise<{ blocks: number; bytes: number; seconds: number; sample: Uint8Array[] }> {
  const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 })
  const credits = 1000
  let blocks = 0
  let bytes = 0
  let acked = 0
  const sample: Uint8Array[] = []
  const step = Math.min(50, Math.max(1, Math.floor((to - from + 1) / 200)))
  const started = performance.now()
  await new Promise<void>((resolve, reject) => {
    ws.on('error', reject)
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary) {
        ws.send(
          encodeRequest({
            kind: 'blocks',
            request: {
              v1: false,
              startBlockNum: from,
              endBlockNum: to + 1,
              maxMessagesInFlight: credits,
              havePositions: [],
              irreversibleOnly: false,
              fetchBlock: true,
              fetchTraces: true,
              fetchDeltas: true,
              fetchFinalityData: false,
            },
          }),
        )
        return
      }
      blocks++
      bytes += data.length
      // Every 50th block, the first 200 of them (every block of a chain of under 10,000: the smoke's).
      if (sample.length < 200 && blocks % step === 0) sample.push(new Uint8Array(data))
      if (blocks - acked >= credits / 2) {
        ws.send(encodeRequest({ kind: 'ack', numMessages: blocks - acked }))
        acked = blocks
      }
      if (blocks === to - from + 1) resolve()
    })
  })
  const seconds = (performance.now() - started) / 1000
  ws.close()
  return { blocks, bytes, seconds, sample }
}

/** Decodes sampled frames fully (envelope, block, traces, deltas) with wharfkit: the decode-only reference. */
function decodeRate(frames: Uint8Array[]): number {
  const started = performance.now()
  for (const frame of frames) {
    const message = decodeResult(frame)
    if (message.kind !== 'blocks') continue
    decodeShipType('signed_block', message.result.block!)
    decodeShipType('transaction_trace[]', message.result.traces!)
    decodeShipType('table_delta[]', message.result.deltas!)
  }
  return frames.length / ((performance.now() - started) / 1000)
}

export async function benchDevchain(options: DevchainBenchOptions): Promise<Record<string, string | number>> {
  const dir = mkdtempSync(join(tmpdir(), 'antler-bench-'))
  try {
    const chain = new Chain({ dataDir: dir, producers: 3, libDepth: 12, signBlocks: false })
    bootChain(chain)
    const perBlock = options.transfersPerBlock + options.rawdbPutsPerBlock
    const blocks = Math.ceil(options.actions / perBlock)
    const firstBuilt = chain.head.num + 1
    const started = performance.now()
    let lastReport = started
    const built = buildChain(
      chain,
      { blocks, transfersPerBlock: options.transfersPerBlock, rawdbPutsPerBlock: options.rawdbPutsPerBlock },
      (p) => {
        if (performance.now() - lastReport > 10_000) {
          lastReport = performance.now()
          console.error(`  built ${p.blocks}/${blocks} blocks, ${p.actions} actions`)
        }
      },
    )
    const buildSeconds = (performance.now() - started) / 1000
    const rss = process.memoryUsage().rss

    const server = await startShipServer({ chain, host: '127.0.0.1', port: 0 })
    const served = await countFrames(`ws://127.0.0.1:${server.port}`, firstBuilt, chain.head.num)
    await server.close()
    const decodePerSecond = decodeRate(served.sample)
    chain.close()
    return {
      'chain builder: actions': built.actions,
      'chain builder: blocks': built.blocks,
      'chain builder: seconds': buildSeconds.toFixed(1),
      'chain builder: actions/s': Math.round(built.actions / buildSeconds),
      'chain builder: minutes per 1,000,000 actions': (1_000_000 / (built.actions / buildSeconds) / 60).toFixed(1),
      'chain builder: peak RSS MiB': Math.round(rss / 2 ** 20),
      'SHiP serving: blocks': served.blocks,
      'SHiP serving: blocks/s': Math.round(served.blocks / served.seconds),
      'SHiP serving: MB/s': (served.bytes / 1e6 / served.seconds).toFixed(1),
      'SHiP serving: mean frame bytes': Math.round(served.bytes / served.blocks),
      'wharfkit full decode of the same frames: blocks/s': Math.round(decodePerSecond),
      'serving / decode-only ratio': (served.blocks / served.seconds / decodePerSecond).toFixed(1),
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
