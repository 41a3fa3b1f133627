import { Command } from 'commander'
import { registerDevchainCommands } from './devchain.ts'
import { registerIndexCommand } from './index-command.ts'

const program = new Command('antler').description('Antler: self-hosted chain data platform for Antelope chains').showHelpAfterError()
registerDevchainCommands(program)
registerIndexCommand(program)

program.parseAsync(process.argv).catch((error: unknown) => {
  console.error(`antler: ${(error as Error).message}`)
  process.exit(1)
})
