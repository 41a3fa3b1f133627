import { join } from 'node:path'
import { startDevchain, type Devchain } from '../devchain/index.ts'
import { createLogger, type Logger, type LogLevel } from './logger.ts'
import { onShutdown, printReady } from './process.ts'
import type { ApiFlags } from './api-options.ts'
import { describeAllowList, parseAllowCidrs } from '../webhooks/index.ts'
import { devApiKey } from './dev-key.ts'
import { devGuide } from './dev-guide.ts'
import { logStatus, startPlatform } from './platform.ts'
import { openStore } from '../store/index.ts'

/*
 * What `antler devchain` and `antler dev` do once their flags are read (src/cli/devchain.ts registers them and loads
 * this module only then, so a refused flag or `--help` does not load the devchain, the store and the API).
 */

export interface DevchainFlags {
  dataDir: string
  store: string
  host: string
  chainPort: number
  shipPort: number
  blockTime: number
  libDepth: number
  producers: number
  forkRate: number
  workload: 'demo' | 'dense' | 'none'
  savanna?: boolean
  logLevel: LogLevel
}

/** Starts the embedded devchain from the `dev`/`devchain` flags; its errors go to `log`. */
async function runDevchain(flags: DevchainFlags, log: Logger): Promise<Devchain> {
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

export type DevFlags = DevchainFlags & ApiFlags & { irreversibleOnly?: boolean; fetchFinalityData?: boolean }

/** `antler devchain`: the devchain alone. */
export async function runDevchainCommand(flags: DevchainFlags): Promise<void> {
  const log = createLogger({ level: flags.logLevel })
  const devchain = await runDevchain(flags, log)
  onShutdown(log, () => devchain.close())
  printReady({ chainApi: devchain.chainApi, ship: devchain.ship, chainId: devchain.chainId })
}

/** `antler dev`: devchain, indexer and API in one process on the embedded store. */
export async function runDevCommand(flags: DevFlags): Promise<void> {
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
}
