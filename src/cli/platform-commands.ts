import type { Command } from 'commander'
import { addApiOptions } from './api-options.ts'
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
import type { CommonFlags, ServeFlags } from './platform-run.ts'

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
  serve.action(async (flags: ServeFlags) => (await import('./platform-run.ts')).runServeCommand(flags))

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
  apiOnly.action(async (flags: CommonFlags & { chainApi?: string }) =>
    (await import('./platform-run.ts')).runApiCommand(flags),
  )
}
