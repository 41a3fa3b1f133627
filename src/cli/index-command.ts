import type { Command } from 'commander'
import { createIndexer } from '../ingest/index.ts'
import { openStore } from '../store/index.ts'
import { createLogger, type LogLevel } from './logger.ts'
import {
  addFetchFinalityDataOption,
  addIrreversibleOnlyOption,
  addLogLevelOption,
  addStoreOptions,
  option,
  parseIntArg,
  parseUrl,
} from './options.ts'
import { onShutdown } from './process.ts'
import { indexerLogCallbacks } from './progress.ts'

interface IndexFlags {
  ship?: string
  dataDir: string
  store: string
  startBlock: number
  irreversibleOnly?: boolean
  fetchFinalityData?: boolean
  logLevel: LogLevel
}

/** `antler index`: the indexer alone. */
export function registerIndexCommand(program: Command): void {
  const command = program
    .command('index')
    .description('the indexer alone: follow a SHiP feed into the store (one writer per store)')
  option(
    command,
    '--ship <url>',
    'SHiP endpoint, e.g. ws://127.0.0.1:8080 (required)',
    parseUrl(['ws:', 'wss:']),
    undefined,
  )
  addStoreOptions(command)
  option(command, '--start-block <n>', 'first block for an empty store', parseIntArg(1, 0xffff_ffff), 1)
  addIrreversibleOnlyOption(command)
  addFetchFinalityDataOption(command)
  addLogLevelOption(command)
  command.action(async (flags: IndexFlags) => {
    if (!flags.ship) throw new Error('--ship is required (or ANTLER_SHIP)')
    const log = createLogger({ level: flags.logLevel })
    const store = await openStore({ store: flags.store, dataDir: flags.dataDir })
    const indexer = createIndexer({
      shipUrl: flags.ship,
      store,
      startBlockNum: flags.startBlock,
      irreversibleOnly: flags.irreversibleOnly === true,
      ...(flags.fetchFinalityData ? { fetchFinalityData: true } : {}),
      reconnect: { minDelayMs: 250, maxDelayMs: 5000 },
      ...indexerLogCallbacks(log),
    })
    onShutdown(log, async () => {
      await indexer.stop()
      await store.close()
    })
    try {
      await indexer.run()
    } catch (error) {
      log.fatal({ err: error }, 'indexer stopped')
      process.exitCode = 1
    } finally {
      await store.close()
    }
  })
}
