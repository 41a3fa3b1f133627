import { Option, type Command } from 'commander'
import { createAccountsService, type AccountsService } from '../accounts/index.ts'
import { openStore, type AccountRecord } from '../store/index.ts'
import { addStoreOptions, parseNonEmpty } from './options.ts'

interface StoreFlags {
  dataDir: string
  store: string
}

/** Runs `work` on the store's accounts and closes the store, whatever happens. */
async function withAccounts<T>(flags: StoreFlags, work: (accounts: AccountsService) => Promise<T>): Promise<T> {
  const store = await openStore({ store: flags.store, dataDir: flags.dataDir })
  try {
    return await work(createAccountsService({ store }))
  } finally {
    await store.close()
  }
}

/** One line of the command's output on stdout. */
function printLine(line: string): void {
  process.stdout.write(`${line}\n`)
}

/** The password from stdin (its first line): never from the command line, where `ps` would show it. */
async function readPassword(): Promise<string> {
  if (process.stdin.isTTY)
    throw new Error('give the password on stdin, e.g. `antler accounts create --login ana < password.txt`')
  let text = ''
  for await (const chunk of process.stdin) text += String(chunk)
  return text.split(/\r?\n/)[0] ?? ''
}

const accountLine = (a: AccountRecord) =>
  [
    a.id,
    a.login,
    a.disabledAtMs === undefined ? 'enabled' : `disabled ${new Date(a.disabledAtMs).toISOString()}`,
    new Date(a.createdAtMs).toISOString(),
  ].join('\t')

/** `antler accounts create|list|disable|enable`: the operator's side of portal accounts (works while antler runs). */
export function registerAccountsCommand(program: Command): void {
  const accounts = program
    .command('accounts')
    .description('portal accounts: create, list, disable, enable (works while the platform runs)')

  const create = accounts
    .command('create')
    .description('create a portal account; the password is read from stdin (first line)')
  addStoreOptions(create)
  create.addOption(new Option('--login <name>', 'the sign-in name').argParser(parseNonEmpty).makeOptionMandatory())
  create.action(async (flags: StoreFlags & { login: string }) => {
    const password = await readPassword()
    const account = await withAccounts(flags, (a) => a.create({ login: flags.login, password }))
    printLine(`created account ${account.id} (${account.login})`)
  })

  const list = accounts.command('list').description('list accounts: id, sign-in name, state, created')
  addStoreOptions(list)
  list.addOption(new Option('--json', 'one JSON array (without password hashes)'))
  list.action(async (flags: StoreFlags & { json?: boolean }) => {
    const records = await withAccounts(flags, (a) => a.list())
    if (flags.json) return printLine(JSON.stringify(records.map(({ passwordHash: _hidden, ...shown }) => shown)))
    for (const record of records) printLine(accountLine(record))
  })

  for (const [name, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    const command = accounts
      .command(name)
      .description(
        disabled
          ? 'disable an account (by id or sign-in name): it cannot sign in, its sessions end at once'
          : 'enable a disabled account again',
      )
      .argument('<account>', 'the id or sign-in name')
    addStoreOptions(command)
    command.action(async (account: string, flags: StoreFlags) => {
      const record = await withAccounts(flags, (a) => a.setDisabled(account, disabled))
      printLine(`${disabled ? 'disabled' : 'enabled'} ${record.id} (${record.login})`)
    })
  }
}
