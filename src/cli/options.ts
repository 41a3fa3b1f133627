import { InvalidArgumentError, type Command } from 'commander'

/** `--flag-name` → `ANTLER_FLAG_NAME`: every common flag can come from the environment. */
export function envName(flag: string): string {
  return `ANTLER_${flag.replace(/^--/, '').replace(/-/g, '_').toUpperCase()}`
}

export function parseIntArg(min: number, max: number) {
  return (value: string): number => {
    if (!/^[0-9]+$/.test(value)) throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}`)
    const n = Number(value)
    if (n < min || n > max) throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}`)
    return n
  }
}

export function parseRate(value: string): number {
  const n = Number(value)
  if (!/^[0-9.]+$/.test(value) || !(n >= 0 && n <= 1)) throw new InvalidArgumentError('expected a probability from 0 to 1')
  return n
}

/** Adds an option whose default comes from its `ANTLER_*` variable, else `fallback`. */
export function option<T>(command: Command, flags: string, description: string, parse: ((v: string) => T) | undefined, fallback: T | string): Command {
  const long = flags.split(/[ ,]+/).find((f) => f.startsWith('--'))!
  const env = process.env[envName(long)]
  const value = env !== undefined ? (parse ? parse(env) : env) : fallback
  return parse ? command.option(flags, `${description} (env ${envName(long)})`, parse, value as T) : command.option(flags, `${description} (env ${envName(long)})`, value as string)
}

/** The devchain flags shared by `dev` and `devchain`. */
export function addDevchainOptions(command: Command, defaults: { workload: 'demo' | 'none' }): Command {
  option(command, '--data-dir <dir>', 'data directory', undefined, './.antler')
  option(command, '--store <store>', 'sqlite (a file in the data dir) or a postgres:// URL (dev only)', undefined, 'sqlite')
  option(command, '--host <host>', 'listen address', undefined, '127.0.0.1')
  option(command, '--chain-port <port>', 'devchain /v1/chain port (0 = a free port)', parseIntArg(0, 65535), 8888)
  option(command, '--ship-port <port>', 'devchain SHiP port (0 = a free port)', parseIntArg(0, 65535), 8089)
  option(command, '--block-time <ms>', 'block interval; 0 = a block as soon as a transaction arrives', parseIntArg(0, 600_000), 500)
  option(command, '--lib-depth <n>', 'blocks between head and LIB', parseIntArg(1, 1000), 12)
  option(command, '--producers <n>', 'producers rotating every 12 blocks', parseIntArg(1, 21), 3)
  option(command, '--fork-rate <p>', 'chance of a random fork after each block', parseRate, 0)
  option(command, '--workload <kind>', 'demo | none', (v: string) => {
    if (v !== 'demo' && v !== 'none') throw new InvalidArgumentError('expected demo or none')
    return v
  }, defaults.workload)
  return command
}
