import { InvalidArgumentError, Option, type Command } from 'commander'
import { LOG_LEVELS, type LogLevel } from './logger.ts'

/** `--flag-name` → `ANTLER_FLAG_NAME`: every flag can come from the environment. */
export function envName(flag: string): string {
  return `ANTLER_${flag.replace(/^--/, '').replace(/-/g, '_').toUpperCase()}`
}

/**
 * Adds `flags` to `command`, read from the command line or else its `ANTLER_*` variable, else
 * `fallback` (none when undefined). Commander runs `parse` on both sources and turns its
 * `InvalidArgumentError` into one line naming the flag (or the variable) and exits 1.
 */
export function option<T>(
  command: Command,
  flags: string,
  description: string,
  parse: (value: string) => T,
  fallback: T | undefined,
): Command {
  const long = flags.split(/[ ,|]+/).find((f) => f.startsWith('--'))!
  const built = new Option(flags, description).env(envName(long)).argParser(parse)
  return command.addOption(fallback === undefined ? built : built.default(fallback))
}

/** A whole number from `min` to `max`. */
export function parseIntArg(min: number, max: number): (value: string) => number {
  return (value: string): number => {
    const n = Number(value)
    if (!/^[0-9]+$/.test(value) || n < min || n > max)
      throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}`)
    return n
  }
}

/** A probability from 0 to 1. */
export function parseRate(value: string): number {
  const n = Number(value)
  if (!/^[0-9.]+$/.test(value) || !(n >= 0 && n <= 1))
    throw new InvalidArgumentError('expected a probability from 0 to 1')
  return n
}

/** One of `choices`. */
export function parseChoice<C extends string>(choices: readonly C[]): (value: string) => C {
  return (value: string): C => {
    if (!(choices as readonly string[]).includes(value))
      throw new InvalidArgumentError(`expected one of ${choices.join(', ')}`)
    return value as C
  }
}

/** Any non-empty text (a directory, a listen address). */
export function parseNonEmpty(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('expected a non-empty value')
  return value
}

/** An absolute URL with one of `protocols` (e.g. `['ws:', 'wss:']`) and a host. */
export function parseUrl(protocols: readonly string[]): (value: string) => string {
  const expected = `expected a URL (${protocols.map((p) => `${p}//`).join(' or ')})`
  return (value: string): string => {
    let url: URL
    try {
      url = new URL(value)
    } catch {
      throw new InvalidArgumentError(expected)
    }
    if (!protocols.includes(url.protocol) || url.hostname === '') throw new InvalidArgumentError(expected)
    return value
  }
}

const postgresUrl = parseUrl(['postgres:', 'postgresql:'])

/** `sqlite` (a file in the data dir) or a `postgres://` / `postgresql://` URL. */
export function parseStore(value: string): string {
  if (value === 'sqlite') return value
  try {
    return postgresUrl(value)
  } catch {
    throw new InvalidArgumentError('expected sqlite or a postgres:// or postgresql:// URL')
  }
}

/** `--log-level`, for the long-running commands. */
export function addLogLevelOption(command: Command): Command {
  return option<LogLevel>(
    command,
    '--log-level <level>',
    `log lines on stderr at this level and above (${LOG_LEVELS.join(' | ')})`,
    parseChoice(LOG_LEVELS),
    'info',
  )
}

/** `--data-dir` and `--store`, shared by every command that opens the store. */
export function addStoreOptions(
  command: Command,
  storeHelp = 'sqlite (a file in the data dir) or a postgres:// URL',
): Command {
  option(command, '--data-dir <dir>', 'data directory', parseNonEmpty, './.antler')
  return option(command, '--store <store>', storeHelp, parseStore, 'sqlite')
}

/** The devchain flags shared by `dev` and `devchain`, with `--log-level`. */
export function addDevchainOptions(command: Command, defaults: { workload: 'demo' | 'none' }): Command {
  addStoreOptions(command, 'sqlite (a file in the data dir) or a postgres:// URL (dev only)')
  option(command, '--host <host>', 'listen address', parseNonEmpty, '127.0.0.1')
  option(command, '--chain-port <port>', 'devchain /v1/chain port (0 = a free port)', parseIntArg(0, 65535), 8888)
  option(command, '--ship-port <port>', 'devchain SHiP port (0 = a free port)', parseIntArg(0, 65535), 8089)
  option(
    command,
    '--block-time <ms>',
    'block interval; 0 = a block as soon as a transaction arrives',
    parseIntArg(0, 600_000),
    500,
  )
  option(command, '--lib-depth <n>', 'blocks between head and LIB', parseIntArg(1, 1000), 12)
  option(command, '--producers <n>', 'producers rotating every 12 blocks', parseIntArg(1, 21), 3)
  option(command, '--fork-rate <p>', 'chance of a random fork after each block', parseRate, 0)
  option(
    command,
    '--workload <kind>',
    'demo | dense (~300 transactions a block, modelled on mainnet) | none',
    parseChoice(['demo', 'dense', 'none'] as const),
    defaults.workload,
  )
  command.addOption(
    new Option(
      '--savanna',
      'Spring/Savanna finality: finality extension and finality_data from the next block on, LIB at head - 2 (--lib-depth then applies to legacy blocks only), POST /v1/devchain/finality; a Savanna chain stays one',
    ).env(envName('--savanna')),
  )
  return addLogLevelOption(command)
}

/**
 * `--fetch-finality-data` (`index`, `serve`, `dev`): Spring's v1 requests with `fetch_finality_data`;
 * `ANTLER_FETCH_FINALITY_DATA` sets it too.
 */
export function addFetchFinalityDataOption(command: Command): Command {
  const description =
    'Spring nodes: send get_status_request_v1/get_blocks_request_v1 asking for finality_data (the node needs --finality-data-history), so Savanna blocks show their real action_mroot; a Leap node refuses these requests'
  return command.addOption(new Option('--fetch-finality-data', description).env(envName('--fetch-finality-data')))
}

/**
 * `--irreversible-only` (`index`, `serve`, `dev`): store only blocks at or below LIB; `ANTLER_IRREVERSIBLE_ONLY` (any
 * value) sets it too.
 */
export function addIrreversibleOnlyOption(command: Command): Command {
  const description =
    'store only irreversible blocks (at or below LIB, SHiP irreversible_only): no forks ever reach the store; the store trails head by the LIB lag'
  return command.addOption(new Option('--irreversible-only', description).env(envName('--irreversible-only')))
}
