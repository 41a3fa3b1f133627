import { Command } from 'commander'
import { registerDevchainCommands } from './devchain.ts'
import { registerIndexCommand } from './index-command.ts'
import { registerKeysCommand } from './keys-command.ts'
import { registerPlatformCommands } from './platform-commands.ts'
import { registerVerifyCommand } from './verify-command.ts'

// A bad flag or ANTLER_* value is one `error: option '…' …` line from commander (exit 1), no help
// dump; a failure while a command starts is one `antler: <message>` line, no stack.
const program = new Command('antler').description('Antler: self-hosted chain data platform for Antelope chains')
registerDevchainCommands(program)
registerIndexCommand(program)
registerPlatformCommands(program)
registerKeysCommand(program)
registerVerifyCommand(program)

program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`antler: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})
