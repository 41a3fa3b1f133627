import type { Command } from 'commander'
import { addDevchainOptions, addFetchFinalityDataOption, addIrreversibleOnlyOption } from './options.ts'
import { addApiOptions } from './api-options.ts'
import type { DevchainFlags, DevFlags } from './dev-run.ts'

/** `antler devchain` and `antler dev`. */
export function registerDevchainCommands(program: Command): void {
  addDevchainOptions(program.command('devchain').description('run the embedded devchain alone (SHiP + /v1/chain)'), {
    workload: 'none',
  }).action(async (flags: DevchainFlags) => (await import('./dev-run.ts')).runDevchainCommand(flags))
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
  dev.action(async (flags: DevFlags) => (await import('./dev-run.ts')).runDevCommand(flags))
}
