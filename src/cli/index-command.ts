import type { Command } from 'commander'
import {
  addFetchFinalityDataOption,
  addIrreversibleOnlyOption,
  addLogLevelOption,
  addStoreOptions,
  option,
  parseIntArg,
  parseUrl,
} from './options.ts'
import type { IndexFlags } from './index-run.ts'

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
  command.action(async (flags: IndexFlags) => (await import('./index-run.ts')).runIndexCommand(flags))
}
