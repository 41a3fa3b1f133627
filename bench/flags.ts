import { parseArgs, type ParseArgsOptionsConfig } from 'node:util'

/** A flag of the table: a value type, its default and smoke value, a line of help and the benches that read it. */
interface Flag {
  readonly name: string
  /** `count`: a whole number, at least 1 (or the minimum after ≥); `list`: whole numbers, comma-separated. */
  readonly type: string
  readonly default: string | undefined
  /** The value `--smoke` gives it. */
  readonly smoke: string | undefined
  readonly benches: string
  readonly help: string
}

/**
 * Every flag of `npm run bench`: parseArgs' options and `--help` both come from this table (`-`: none). `--smoke` gives
 * each flag its smoke value unless the flag is given.
 */
const TABLE = `
name                    type        default     smoke  benches                                 help
only                    text        -           -      all                                     run this bench alone (see the list above)
smoke                   switch      -           -      all                                     a tiny workload, every figure checked (NaN, missing, zero)
help                    switch      -           -      all                                     this text
actions                 count≥1000  1000000     1000   devchain                                actions the chain builder builds
transfers-per-block     count       20          -      devchain                                eosio.token transfers per built block
rawdb-per-block         count       5           -      devchain                                rawdb puts per built block
ingest-actions          count       100000      25000  ingest,ingest-savanna                   actions of the SHiP feed (20 transfers + 5 rawdb puts a block)
dense-blocks            count       200         3      ingest-dense                            blocks of the dense feed (about 300 transactions, 1,260 action traces a block)
savanna-actions         count       -           5000   ingest-savanna                          actions per chain (without it: --ingest-actions)
against-actions         count       -           5000   ingest                                  actions of --against's feed (without it: --ingest-actions)
against                 text        -           -      ingest                                  this build's ingest against REV's (a git worktree; the smoke: HEAD)
against-pairs           count       3           1      ingest                                  pairs per store of --against, the sides taking turns
keep-sqlite             text        -           -      ingest                                  keep the SQLite store ingest wrote at PATH (name it store.sqlite)
keep-postgres           switch      -           -      ingest                                  keep the PostgreSQL database ingest wrote
savanna                 switch      -           -      ingest                                  with the ingest figures, Savanna against legacy too
savanna-rounds          count       3           1      ingest-savanna                          rounds of Savanna against legacy, best of
sqlite                  text        -           -      search,state-api,search-api,hyperion    a kept SQLite store (DIR/store.sqlite)
postgres                text        -           -      search,state-api,search-api,hyperion    a kept PostgreSQL store (URL)
warmup-seconds          count≥0     3           0      api,state-api,search-api,search-devchain,graphql,replicas,hyperion warm-up run of each configuration (0: none)
api-seconds             count       5           1      api,state-api,search-api,search-devchain,hyperion length of each measured run
api-connections         count       10          -      api,graphql,replicas                    autocannon connections
api-rounds              count       4           1      api,state-api,search-api,search-devchain,replicas,hyperion runs of each configuration, taking turns
api-backlog             count≥0     6000        100    api                                     blocks of backlog for the latency during catch-up (0 skips it)
state-slow-seconds      count       20          1      state-api                               runs of the chain's own scope (answers that take seconds)
search-pages-only       switch      -           -      search-api                              only the 25-transaction pages (issue 26), not issue 16's set
hyperion-variants       count       8           2      hyperion                                distinct requests of each question, cycled (over 500: beyond both routes' kept pages)
search-connections      count       32          -      search-devchain                         autocannon connections
streams-seconds         count       20          1      streams                                 window of each subscriber count
streams-subscribers     list        1,100,1000  1      streams                                 subscriber counts (the first is the limit of the others)
graphql-seconds         count       30          1      graphql                                 window of each subscriber count
graphql-subscribers     list        1,100,1000  1      graphql                                 subscriber counts (the first is the limit of the others)
graphql-rounds          count       3           1      graphql                                 rounds of query runs
graphql-query-seconds   count       10          1      graphql                                 length of each query run
replica-seconds         count       5           1      replicas                                length of each load run
replica-stream-seconds  count       60          1      replicas                                window of the replica stream latency
startup-runs            count       10          1      startup                                 rounds of starts, taking turns
webhook-seconds         count       20          1      webhooks                                window of each subscription count
webhook-subs            list        1,100,1000  1      webhooks                                subscription counts (the first is the limit of the others)
portal-keys             count       200         5      portal                                  keys of the portal's account
portal-rounds           count       50          3      portal                                  loads of each page
`

const FLAGS: readonly Flag[] = TABLE.trim()
  .split('\n')
  .slice(1)
  .map((line) => {
    const [name, type, fallback, smoke, benches, ...help] = line.split(/ +/)
    const value = (v: string) => (v === '-' ? undefined : v)
    return { name, type, default: value(fallback), smoke: value(smoke), benches, help: help.join(' ') }
  })

/** The flags as given, or their defaults (their smoke values with `--smoke`). */
export interface Options {
  text(name: string): string | undefined
  count(name: string): number
  list(name: string): number[]
  on(name: string): boolean
}

export function parseFlags(args: string[]): Options {
  const options = Object.fromEntries(FLAGS.map((f) => [f.name, { type: f.type === 'switch' ? 'boolean' : 'string' }]))
  const { values } = parseArgs({ args, options: options as ParseArgsOptionsConfig, strict: true })
  const given = values as Record<string, string | boolean | undefined>
  const flag = (name: string) => {
    const found = FLAGS.find((f) => f.name === name)
    if (!found) throw new Error(`bench: no flag --${name} in bench/flags.ts`)
    return found
  }
  const text = (name: string) => {
    const f = flag(name)
    return (given[name] as string | undefined) ?? (given.smoke ? (f.smoke ?? f.default) : f.default)
  }
  const whole = (name: string, n: number) => {
    const min = Number(/≥(\d+)/.exec(flag(name).type)?.[1] ?? 1)
    if (Number.isInteger(n) && n >= min) return n
    console.error(`bench: --${name} must be whole numbers of at least ${min}`)
    process.exit(2)
  }
  return {
    text,
    count: (name) => whole(name, Number(text(name))),
    list: (name) => (text(name) ?? '').split(',').map((n) => whole(name, Number(n))),
    on: (name) => flag(name) && given[name] === true,
  }
}

/** `--help`: the benches, then the flags of the table. */
export function helpText(benches: readonly { name: string; about: string }[]): string {
  const lines = [
    'npm run bench -- [--only NAME] [--smoke] [--FLAG VALUE …]',
    '',
    'benches (without --only: devchain, ingest, reads, api):',
  ]
  for (const b of benches) lines.push(`  ${b.name.padEnd(16)} ${b.about}`)
  lines.push('', 'flags (default; value under --smoke) [benches that read it]:')
  for (const f of FLAGS) {
    const value = f.type === 'switch' ? '' : f.type === 'list' ? ' N,N' : f.type === 'text' ? ' VALUE' : ' N'
    const defaults = [f.default, f.smoke && `smoke ${f.smoke}`].filter(Boolean).join('; ')
    lines.push(`${`  --${f.name}${value}`.padEnd(30)} ${f.help}${defaults ? ` (${defaults})` : ''} [${f.benches}]`)
  }
  return lines.join('\n')
}
