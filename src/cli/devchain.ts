import { join } from 'node:path'
import type { Command } from 'commander'
import { startDevchain, type Devchain } from '../devchain/index.ts'
import { addDevchainOptions } from './options.ts'
import { onShutdown, printReady } from './process.ts'

interface DevchainFlags {
  dataDir: string
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
    // The indexer and API join this command as they are built (issues 3 onward).
    const devchain = await runDevchain(flags)
    onShutdown(() => devchain.close())
    printReady({ chainApi: devchain.chainApi, ship: devchain.ship, chainId: devchain.chainId })
  })
}
