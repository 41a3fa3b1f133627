import { join } from 'node:path'
import type { Command } from 'commander'
import { startDevchain, type Devchain } from '../devchain/index.ts'
import { addDevchainOptions } from './options.ts'
import { onShutdown, printReady } from './process.ts'
import { createProgressReporter } from './progress.ts'
import { createIndexer } from '../ingest/index.ts'
import { openStore } from '../store/index.ts'

interface DevchainFlags {
  dataDir: string
  store: string
  host: string
  chainPort: number
  shipPort: number
  blockTime: number
  libDepth: number
  producers: number
  forkRate: number
  workload: 'demo' | 'none'
}

export async function runDevchain(flags: DevchainFlags): Promise<Devchain> {
  return startDevchain({
    dataDir: join(flags.dataDir, 'devchain'),
    host: flags.host,
    chainPort: flags.chainPort,
    shipPort: flags.shipPort,
    blockTimeMs: flags.blockTime,
    libDepth: flags.libDepth,
    producers: flags.producers,
    forkRate: flags.forkRate,
    workload: flags.workload,
    onError: (error) => console.error(`devchain: ${(error as Error).message}`),
  })
}

export function registerDevchainCommands(program: Command): void {
  addDevchainOptions(program.command('devchain').description('run the embedded devchain alone (SHiP + /v1/chain)'), { workload: 'none' }).action(async (flags: DevchainFlags) => {
    const devchain = await runDevchain(flags)
    onShutdown(() => devchain.close())
    printReady({ chainApi: devchain.chainApi, ship: devchain.ship, chainId: devchain.chainId })
  })
  addDevchainOptions(program.command('dev').description('devchain + indexer + API in one command, embedded store (npm start)'), { workload: 'demo' }).action(async (flags: DevchainFlags) => {
    // devchain + indexer into the embedded store; the API joins this command with its issue.
    const devchain = await runDevchain(flags)
    const store = await openStore({ store: flags.store, dataDir: flags.dataDir })
    const indexer = createIndexer({
      shipUrl: devchain.ship,
      store,
      onBlock: createProgressReporter().onBlock,
      onFork: (f) => console.error(`index: fork at block ${f.blockNum}, ${f.undone} blocks undone`),
    })
    const indexing = indexer.run().catch((error: unknown) => {
      console.error(`antler: the indexer stopped: ${(error as Error).message}`)
      process.exit(1)
    })
    onShutdown(async () => {
      await indexer.stop()
      await indexing
      await store.close()
      await devchain.close()
    })
    const head = devchain.chain.head.num
    while (((await store.position())?.head.blockNum ?? 0) < head) await new Promise((r) => setTimeout(r, 50))
    printReady({ chainApi: devchain.chainApi, ship: devchain.ship, chainId: devchain.chainId })
  })
}
