import { Command } from 'commander'

type Registrar = (program: Command) => void

/**
 * Each command's module, loaded on demand: `antler keys` or `antler verify` need not load the
 * devchain, Fastify and gRPC (loading everything took seconds on a busy machine).
 */
const COMMAND_MODULES: Record<string, () => Promise<Registrar>> = {
  devchain: async () => (await import('./devchain.ts')).registerDevchainCommands,
  index: async () => (await import('./index-command.ts')).registerIndexCommand,
  platform: async () => (await import('./platform-commands.ts')).registerPlatformCommands,
  keys: async () => (await import('./keys-command.ts')).registerKeysCommand,
  verify: async () => (await import('./verify-command.ts')).registerVerifyCommand,
}
/** The module that registers each command name (`dev` lives with `devchain`, `api` with `serve`). */
const MODULE_OF: Record<string, string> = {
  devchain: 'devchain',
  dev: 'devchain',
  index: 'index',
  serve: 'platform',
  api: 'platform',
  keys: 'keys',
  verify: 'verify',
}

// A bad flag or ANTLER_* value is one `error: option '…' …` line from commander (exit 1), no help
// dump; a failure while a command starts is one `antler: <message>` line, no stack.
async function main(): Promise<void> {
  const program = new Command('antler').description('Antler: self-hosted chain data platform for Antelope chains')
  const only = MODULE_OF[process.argv[2] ?? '']
  // An unknown command or --help: every command registered, so commander can list them all.
  for (const name of only ? [only] : Object.keys(COMMAND_MODULES)) (await COMMAND_MODULES[name]())(program)
  await program.parseAsync(process.argv)
}

main().catch((error: unknown) => {
  process.stderr.write(`antler: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})
