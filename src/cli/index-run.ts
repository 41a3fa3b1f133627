import { createIndexer } from '../ingest/index.ts'
import { openStore } from '../store/index.ts'
import { createLogger, type LogLevel } from './logger.ts'
import { onShutdown } from './process.ts'
import { indexerLogCallbacks } from './progress.ts'

// What `antler index` does once its flags are read (src/cli/index-command.ts loads this module only then).

export interface IndexFlags {
  ship?: string
  dataDir: string
  store: string
  startBlock: number
  irreversibleOnly?: boolean
  fetchFinalityData?: boolean
  logLevel: LogLevel
}

/** `antler index`: the indexer alone, until it stops or is stopped. */
export async function runIndexCommand(flags: IndexFlags): Promise<void> {
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
}
