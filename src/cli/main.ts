import { Command } from 'commander'
import { registerDevchainCommands } from './devchain.ts'
import { registerIndexCommand } from './index-command.ts'
import { registerVerifyCommand } from './verify-command.ts'

const program = new Command('antler').description('Antler: self-hosted chain data platform for Antelope chains').showHelpAfterError()
registerDevchainCommands(program)
registerIndexCommand(program)
registerVerifyCommand(program)

program.parseAsync(process.argv).catch((error: unknown) => {
  console.error(`antler: ${(error as Error).message}`)
  process.exit(1)
})
