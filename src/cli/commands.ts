import { Command, Help } from 'commander'

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
  accounts: async () => (await import('./accounts-command.ts')).registerAccountsCommand,
  verify: async () => (await import('./verify-command.ts')).registerVerifyCommand,
}

/**
 * The top-level commands in the order their modules register them, as `antler --help` lists them: the module that
 * registers each (`dev` lives with `devchain`, `api` with `serve`) and its line in the list. The list is drawn from
 * here so `antler --help` loads no command module; test/cli/commands.test.ts holds it to what the modules register.
 */
const COMMANDS: readonly { name: string; module: string; options: boolean; description: string }[] = [
  {
    name: 'devchain',
    module: 'devchain',
    options: true,
    description: 'run the embedded devchain alone (SHiP + /v1/chain)',
  },
  {
    name: 'dev',
    module: 'devchain',
    options: true,
    description: 'devchain + indexer + API in one command, embedded store (npm start)',
  },
  {
    name: 'index',
    module: 'index',
    options: true,
    description: 'the indexer alone: follow a SHiP feed into the store (one writer per store)',
  },
  {
    name: 'serve',
    module: 'platform',
    options: true,
    description: 'indexer + API against a real chain: --ship ws://… --chain-api http://…',
  },
  {
    name: 'api',
    module: 'platform',
    options: true,
    description: 'the API alone on an existing store (any number of replicas on one PostgreSQL store)',
  },
  {
    name: 'keys',
    module: 'keys',
    options: false,
    description: 'API keys: create, list, revoke (works while the platform runs)',
  },
  {
    name: 'accounts',
    module: 'accounts',
    options: false,
    description: 'portal accounts: create, list, disable, enable (works while the platform runs)',
  },
  {
    name: 'verify',
    module: 'verify',
    options: true,
    description: 'check the store for gaps, duplicates and broken block links; exit 0 only when clean',
  },
]

/** The `antler` program, with no command yet. */
export function antlerProgram(): Command {
  return new Command('antler').description('Antler: self-hosted chain data platform for Antelope chains')
}

/** Registers every command in full (loading every command module). */
export async function registerAllCommands(program: Command): Promise<void> {
  for (const load of Object.values(COMMAND_MODULES)) (await load())(program)
}

/**
 * Registers what `argv` (process.argv) needs: the module of the command it names (`antler dev …`, `antler help dev`)
 * in full, otherwise (`--help`, no command, an unknown one) each command's name and line only, which is all commander
 * needs to list them or name an unknown command.
 */
export async function registerCommandsFor(program: Command, argv: readonly string[]): Promise<void> {
  const named = argv[2] === 'help' ? argv[3] : argv[2]
  const entry = COMMANDS.find((command) => command.name === named)
  if (entry) return (await COMMAND_MODULES[entry.module]())(program)
  for (const { name, description } of COMMANDS) program.command(name).description(description)
  // The list shows `[options]` after a command that has any; these stand-ins have none of their own.
  const standard = new Help()
  program.configureHelp({
    subcommandTerm: (command) => {
      const listed = COMMANDS.find(({ name }) => name === command.name())
      return listed ? `${listed.name}${listed.options ? ' [options]' : ''}` : standard.subcommandTerm(command)
    },
  })
}
