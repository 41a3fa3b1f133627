import { Option, type Command } from 'commander'
import { API_KEY_TYPES, createApiKeyService } from '../auth/index.ts'
import { openStore, type ApiKeyType } from '../store/index.ts'
import { addStoreOptions, parseChoice, parseNonEmpty } from './options.ts'

interface StoreFlags {
  dataDir: string
  store: string
}

/** Runs `work` on the store and closes it, whatever happens. */
async function withKeys<T>(
  flags: StoreFlags,
  work: (keys: ReturnType<typeof createApiKeyService>) => Promise<T>,
): Promise<T> {
  const store = await openStore({ store: flags.store, dataDir: flags.dataDir })
  try {
    return await work(createApiKeyService({ store }))
  } finally {
    await store.close()
  }
}

const collect = (value: string, previous: string[] = []) => [...previous, value]

/** One line of the command's output on stdout (logs go to stderr through the logger). */
function printLine(line: string): void {
  process.stdout.write(`${line}\n`)
}

/** `antler keys create|list|revoke`: work on the store while the platform runs. */
export function registerKeysCommand(program: Command): void {
  const keys = program.command('keys').description('API keys: create, list, revoke (works while the platform runs)')

  const create = keys
    .command('create')
    .description('create an API key; prints the key alone on the last line (it is shown only once)')
  addStoreOptions(create)
  create.addOption(
    new Option('--type <type>', 'server | web | mobile')
      .argParser(parseChoice<ApiKeyType>(API_KEY_TYPES))
      .makeOptionMandatory(),
  )
  create.addOption(
    new Option('--name <name>', 'a name to tell keys apart').argParser(parseNonEmpty).makeOptionMandatory(),
  )
  create.addOption(
    new Option('--origin <url>', 'a browser origin allowed to use a web key (repeatable)').argParser(collect),
  )
  create.addOption(new Option('--json', 'print {id, key, type, name, origins}'))
  create.action(async (flags: StoreFlags & { type: ApiKeyType; name: string; origin?: string[]; json?: boolean }) => {
    const { record, key } = await withKeys(flags, (k) =>
      k.create({ type: flags.type, name: flags.name, origins: flags.origin ?? [] }),
    )
    if (flags.json)
      printLine(JSON.stringify({ id: record.id, key, type: record.type, name: record.name, origins: record.origins }))
    else {
      printLine(
        `created ${record.type} key ${record.id} (${record.name})${record.origins.length ? ` for ${record.origins.join(', ')}` : ''}; store it now, it is not shown again:`,
      )
      printLine(key)
    }
  })

  const list = keys.command('list').description('list API keys: id, type, state, created, name, origins')
  addStoreOptions(list)
  list.addOption(new Option('--json', 'one JSON array'))
  list.action(async (flags: StoreFlags & { json?: boolean }) => {
    const records = await withKeys(flags, (k) => k.list())
    if (flags.json) return printLine(JSON.stringify(records))
    for (const r of records) {
      const state =
        r.revokedAtMs === undefined
          ? 'active'
          : r.revokedAtMs > Date.now()
            ? `rotated, works until ${new Date(r.revokedAtMs).toISOString()}`
            : `revoked ${new Date(r.revokedAtMs).toISOString()}`
      printLine(
        [r.id, r.type, state, new Date(r.createdAtMs).toISOString(), JSON.stringify(r.name), r.origins.join(',')].join(
          '\t',
        ),
      )
    }
  })

  const revoke = keys
    .command('revoke')
    .description('revoke a key by id: its new and existing tokens are refused within a second')
    .argument('<key_id>', 'the id create and list show')
  addStoreOptions(revoke)
  revoke.action(async (id: string, flags: StoreFlags) => {
    if (!(await withKeys(flags, (k) => k.revoke(id))))
      throw new Error(`no API key has the id ${JSON.stringify(id)} (see antler keys list)`)
    printLine(`revoked ${id}`)
  })
}
