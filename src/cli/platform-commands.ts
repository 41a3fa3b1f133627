import type { Command } from 'commander'
import { openStore } from '../store/index.ts'
import { addApiOptions, type ApiFlags } from './api-options.ts'
import { startApi } from './api-runtime.ts'
import { createLogger, type LogLevel } from './logger.ts'
import {
  addFetchFinalityDataOption,
  addIrreversibleOnlyOption,
  addLogLevelOption,
  addStoreOptions,
  option,
  parseIntArg,
  parseNonEmpty,
  parseUrl,
} from './options.ts'
import { startPlatform, logStatus, storeKind } from './platform.ts'
import { onShutdown, printReady } from './process.ts'
import { portalSetupLine } from './dev-guide.ts'

interface CommonFlags extends ApiFlags {
  dataDir: string
  store: string
  host: string
  logLevel: LogLevel
}

/** `antler serve` (indexer + API against a real chain) and `antler api` (the API alone on an existing store). */
export function registerPlatformCommands(program: Command): void {
  const serve = program
    .command('serve')
    .description('indexer + API against a real chain: --ship ws://… --chain-api http://…')
  option(serve, '--ship <url>', 'SHiP endpoint of the chain (required)', parseUrl(['ws:', 'wss:']), undefined)
  option(
    serve,
    '--chain-api <url>',
    'the chain API (nodeos /v1/chain) behind the passthrough and guaranteed push (required)',
    parseUrl(['http:', 'https:']),
    undefined,
  )
  option(serve, '--start-block <n>', 'first block for an empty store', parseIntArg(1, 0xffff_ffff), 1)
  addIrreversibleOnlyOption(serve)
  addFetchFinalityDataOption(serve)
  option(serve, '--host <host>', 'listen address', parseNonEmpty, '127.0.0.1')
  addStoreOptions(addApiOptions(serve))
  addLogLevelOption(serve)
  serve.action(
    async (
      flags: CommonFlags & {
        ship?: string
        chainApi?: string
        startBlock: number
        irreversibleOnly?: boolean
        fetchFinalityData?: boolean
      },
    ) => {
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
    },
  )

  const apiOnly = program
    .command('api')
    .description('the API alone on an existing store (any number of replicas on one PostgreSQL store)')
  option(
    apiOnly,
    '--chain-api <url>',
    'the chain API behind the passthrough and guaranteed push (optional)',
    parseUrl(['http:', 'https:']),
    undefined,
  )
  option(apiOnly, '--host <host>', 'listen address', parseNonEmpty, '127.0.0.1')
  addStoreOptions(addApiOptions(apiOnly))
  addLogLevelOption(apiOnly)
  apiOnly.action(async (flags: CommonFlags & { chainApi?: string }) => {
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
  })
}
