import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Chain, bootChain, buildChain } from '../src/devchain/index.ts'
import { startShipServer } from '../src/devchain/ship-server.ts'
import type { FeedMessage } from './ship-feed.ts'

// The process behind bench/ship-feed.ts: `node ship-feed-process.ts <blocks> [savanna] [dense]`, driven over IPC.
const send = (message: FeedMessage) => new Promise<void>((resolve) => process.send!(message, () => resolve()))
const dir = mkdtempSync(join(tmpdir(), 'antler-feed-'))
process.on('disconnect', () => {
  rmSync(dir, { recursive: true, force: true })
  process.exit(0)
})
const chain = new Chain({
  dataDir: join(dir, 'chain'),
  producers: 3,
  libDepth: 12,
  signBlocks: false,
  savanna: process.argv.slice(3).includes('savanna'),
})
bootChain(chain)
const blocks = Number(process.argv[2])
buildChain(
  chain,
  process.argv.slice(3).includes('dense')
    ? { profile: 'dense', blocks }
    : { blocks, transfersPerBlock: 20, rawdbPutsPerBlock: 5 },
)
const server = await startShipServer({ chain, host: '127.0.0.1', port: 0 })
process.on('message', async (message) => {
  if (message !== 'stop') return
  await server.close()
  chain.close()
  rmSync(dir, { recursive: true, force: true })
  await send({ kind: 'stopped', peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024) })
  process.exit(0)
})
await send({ kind: 'serving', port: server.port, head: chain.head.num })
