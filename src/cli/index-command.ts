import type { Command } from 'commander'
import { createIndexer } from '../ingest/index.ts'
import { openStore } from '../store/index.ts'
import { option } from './options.ts'
import { onShutdown } from './process.ts'
import { createProgressReporter } from './progress.ts'

interface IndexFlags {
  ship: string
  dataDir: string
  store: string
  startBlock: number
}

export function registerIndexCommand(program: Command): void {
  const command = program.command('index').description('the indexer alone: follow a SHiP feed into the store (one writer per store)')
  option(command, '--ship <url>', 'SHiP endpoint, e.g. ws://127.0.0.1:8080', undefined, '')
  option(command, '--data-dir <dir>', 'data directory', undefined, './.antler')
  option(command, '--store <store>', 'sqlite (a file in the data dir) or a postgres:// URL', undefined, 'sqlite')
  option(command, '--start-block <n>', 'first block for an empty store', (v: string) => Number(v), 1)
  command.action(async (flags: IndexFlags) => {
    if (!flags.ship) throw new Error('--ship is required (or ANTLER_SHIP)')
    const store = await openStore({ store: flags.store, dataDir: flags.dataDir })
    const indexer = createIndexer({
      shipUrl: flags.ship,
      store,
      startBlockNum: flags.startBlock,
      reconnect: { minDelayMs: 250, maxDelayMs: 5000 },
      onBlock: createProgressReporter().onBlock,
      onFork: (f) => console.error(`index: fork at block ${f.blockNum}, ${f.undone} blocks undone`),
      onReaderEvent: (e) => {
        if (e.type !== 'connected') console.error(`index: ship ${e.type}${'reason' in e ? `: ${e.reason}` : ''}`)
      },
    })
    onShutdown(async () => {
      await indexer.stop()
      await store.close()
    })
    await indexer.run()
    await store.close()
  })
}
