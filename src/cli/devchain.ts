import { join } from 'node:path'
import type { Command } from 'commander'
import { startDevchain, type Devchain } from '../devchain/index.ts'
import { createLogger, type Logger, type LogLevel } from './logger.ts'
import { addDevchainOptions, addFetchFinalityDataOption, addIrreversibleOnlyOption } from './options.ts'
import { onShutdown, printReady } from './process.ts'
import { addApiOptions, type ApiFlags } from './api-options.ts'
import { describeAllowList, parseAllowCidrs } from '../webhooks/index.ts'
import { devApiKey } from './dev-key.ts'
import { devGuide } from './dev-guide.ts'
import { logStatus, startPlatform } from './platform.ts'
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
  savanna?: boolean
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
    savanna: flags.savanna === true,
    onError: (error) => log.error({ err: error }, 'devchain error'),
    log,
  })
}

/** `antler devchain` and `antler dev`. */
export function registerDevchainCommands(program: Command): void {
  addDevchainOptions(program.command('devchain').description('run the embedded devchain alone (SHiP + /v1/chain)'), {
    workload: 'none',
  }).action(async (flags: DevchainFlags) => {
    const log = createLogger({ level: flags.logLevel })
    const devchain = await runDevchain(flags, log)
    onShutdown(log, () => devchain.close())
    printReady({ chainApi: devchain.chainApi, ship: devchain.ship, chainId: devchain.chainId })
  })
  const dev = addFetchFinalityDataOption(
    addIrreversibleOnlyOption(
      addApiOptions(
        addDevchainOptions(
          program.command('dev').description('devchain + indexer + API in one command, embedded store (npm start)'),
          { workload: 'demo' },
        ),
      ),
    ),
  )
  dev.action(async (flags: DevchainFlags & ApiFlags & { irreversibleOnly?: boolean; fetchFinalityData?: boolean }) => {
    const log = createLogger({ level: flags.logLevel })
    const devchain = await runDevchain(flags, log)
    const store = await openStore({ store: flags.store, dataDir: flags.dataDir })
    const apiKey = await devApiKey(store, flags.dataDir)
    // A developer's receiver runs on this machine: deliveries may reach loopback unless the flag says otherwise.
    const webhookAllowCidr = flags.webhookAllowCidr ?? parseAllowCidrs('loopback')
    log.info(`webhook deliveries may reach ${describeAllowList(webhookAllowCidr)} (--webhook-allow-cidr)`)
    const { api, indexer } = await startPlatform({
      flags: { ...flags, webhookAllowCidr },
      store,
      ship: devchain.ship,
      chainApi: devchain.chainApi,
      startBlockNum: 1,
      irreversibleOnly: flags.irreversibleOnly === true,
      fetchFinalityData: flags.fetchFinalityData === true,
      log,
    })
    let stopStatus = () => {}
    onShutdown(log, async () => {
      stopStatus()
      await api.close()
      await indexer.stop()
      await store.close()
      await devchain.close()
    })
    // Ready once the indexer accepted the devchain (a store of another chain stops it at connect: the process exits 1
    // with ship_history_mismatch_error) and the store has caught up with the chain as it was at start (with its LIB,
    // when only irreversible blocks are stored).
    const head = flags.irreversibleOnly ? devchain.chain.lib.blockNum : devchain.chain.head.num
    while (!indexer.nodeAccepted() || ((await store.position())?.head.blockNum ?? 0) < head)
      await new Promise((r) => setTimeout(r, 50))
    printReady({
      api: api.api,
      grpc: api.grpc,
      chainApi: devchain.chainApi,
      ship: devchain.ship,
      apiKey,
      chainId: devchain.chainId,
    })
    process.stderr.write(
      devGuide({
        api: api.api,
        grpc: api.grpc,
        chainApi: devchain.chainApi,
        apiKey,
        noAuth: !flags.auth,
        setup: api.setup,
      }),
    )
    stopStatus = logStatus(log, { head: indexer.lastBlock, requests: api.requests })
  })
}
