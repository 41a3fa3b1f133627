import { join } from 'node:path'
import type { Command } from 'commander'
import { startDevchain, type Devchain } from '../devchain/index.ts'
import { createLogger, type Logger, type LogLevel } from './logger.ts'
import { addDevchainOptions } from './options.ts'
import { onShutdown, printReady } from './process.ts'
import { indexerLogCallbacks } from './progress.ts'
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
  logLevel: LogLevel
}

/** Starts the embedded devchain from the `dev`/`devchain` flags; its errors go to `log`. */
export async function runDevchain(flags: DevchainFlags, log: Logger): Promise<Devchain> {
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
    onError: (error) => log.error({ err: error }, 'devchain error'),
  })
}

/** `antler devchain` and `antler dev`. */
export function registerDevchainCommands(program: Command): void {
  addDevchainOptions(program.command('devchain').description('run the embedded devchain alone (SHiP + /v1/chain)'), { workload: 'none' }).action(async (flags: DevchainFlags) => {
    const log = createLogger({ level: flags.logLevel })
    const devchain = await runDevchain(flags, log)
    onShutdown(log, () => devchain.close())
    printReady({ chainApi: devchain.chainApi, ship: devchain.ship, chainId: devchain.chainId })
  })
  addDevchainOptions(program.command('dev').description('devchain + indexer + API in one command, embedded store (npm start)'), { workload: 'demo' }).action(async (flags: DevchainFlags) => {
    // devchain + indexer into the embedded store; the API joins this command with its issue.
    const log = createLogger({ level: flags.logLevel })
    const devchain = await runDevchain(flags, log)
    const store = await openStore({ store: flags.store, dataDir: flags.dataDir })
    const indexer = createIndexer({ shipUrl: devchain.ship, store, ...indexerLogCallbacks(log) })
    const indexing = indexer.run().catch((error: unknown) => {
      log.fatal({ err: error }, 'indexer stopped')
      process.exit(1)
    })
    onShutdown(log, async () => {
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
