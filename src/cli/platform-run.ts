import { openStore } from '../store/index.ts'
import type { ApiFlags } from './api-options.ts'
import { startApi } from './api-runtime.ts'
import { createLogger, type LogLevel } from './logger.ts'
import { startPlatform, logStatus, storeKind } from './platform.ts'
import { onShutdown, printReady } from './process.ts'
import { portalSetupLine } from './dev-guide.ts'

// What `antler serve` and `antler api` do once their flags are read (src/cli/platform-commands.ts loads this module
// only then, so a refused flag or `--help` does not load the store and the API).

export interface CommonFlags extends ApiFlags {
  dataDir: string
  store: string
  host: string
  logLevel: LogLevel
}

export type ServeFlags = CommonFlags & {
  ship?: string
  chainApi?: string
  startBlock: number
  irreversibleOnly?: boolean
  fetchFinalityData?: boolean
}

/** `antler serve`: indexer and API against a real chain. */
export async function runServeCommand(flags: ServeFlags): Promise<void> {
  if (!flags.ship) throw new Error('--ship is required (or ANTLER_SHIP)')
  if (!flags.chainApi) throw new Error('--chain-api is required (or ANTLER_CHAIN_API)')
  const log = createLogger({ level: flags.logLevel })
  const store = await openStore({ store: flags.store, dataDir: flags.dataDir })
  const { api, indexer } = await startPlatform({
    flags,
    store,
    ship: flags.ship,
    chainApi: flags.chainApi,
    startBlockNum: flags.startBlock,
    irreversibleOnly: flags.irreversibleOnly === true,
    fetchFinalityData: flags.fetchFinalityData === true,
    log,
  })
  const stopStatus = logStatus(log, { head: indexer.lastBlock, requests: api.requests })
  onShutdown(log, async () => {
    stopStatus()
    await api.close()
    await indexer.stop()
    await store.close()
  })
  printReady({ api: api.api, grpc: api.grpc, chainApi: flags.chainApi, ship: flags.ship })
  if (api.setup) process.stderr.write(`${portalSetupLine(api.api, api.setup)}\n`)
}

/** `antler api`: the API alone on an existing store, read-only. */
export async function runApiCommand(flags: CommonFlags & { chainApi?: string }): Promise<void> {
  const log = createLogger({ level: flags.logLevel })
  const store = await openStore({ store: flags.store, dataDir: flags.dataDir, readOnly: true })
  const api = await startApi({
    flags,
    host: flags.host,
    store,
    storeKind: storeKind(flags.store),
    chainApi: flags.chainApi,
    logger: log,
    storeReadOnly: true,
  })
  onShutdown(log, async () => {
    await api.close()
    await store.close()
  })
  printReady({ api: api.api, grpc: api.grpc, ...(flags.chainApi ? { chainApi: flags.chainApi } : {}) })
}
