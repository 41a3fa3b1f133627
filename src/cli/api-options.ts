import { Option, type Command } from 'commander'
import { DEFAULT_AUTH_LIMITS, parseAuthLimits, type AuthLimits } from '../auth/index.ts'
import { envName, option, parseIntArg, parseUrl } from './options.ts'
import { addWebhookOptions, type WebhookFlags } from './webhook-options.ts'
import { InvalidArgumentError } from 'commander'

/** The API flags of `dev`, `serve` and `api` (docs/OPERATIONS.md). */
export interface ApiFlags extends WebhookFlags {
  readonly port: number
  readonly grpcPort: number
  /** false with `--no-auth`. */
  readonly auth: boolean
  readonly requireOrigin: boolean
  readonly tokenTtl: number
  readonly redis: string | undefined
  readonly openChainApi: boolean
  readonly rateLimits: AuthLimits
  readonly trustProxy: boolean
  /** `/readyz` fails while the store trails the chain's head by more blocks than this (absent: not judged). */
  readonly maxLagBlocks?: number
  /** `--hyperion-token`: Hyperion's routes and `/stream` need a token like dfuse's (default: public, per-IP limit). */
  readonly hyperionToken: boolean
}

/**
 * `--max-lag-blocks`'s default: 2 minutes of 0.5 s blocks, about one LIB lag of a 21-producer legacy chain (325) less a
 * margin; a replica further behind than this is taken out of rotation by `/readyz`.
 */
export const DEFAULT_MAX_LAG_BLOCKS = 240

/** A boolean flag that its `ANTLER_*` variable can also set (any value sets it). */
function flag(command: Command, flags: string, description: string): void {
  const long = flags.split(/[ ,|]+/).find((f) => f.startsWith('--'))!
  command.addOption(new Option(flags, description).env(envName(long)))
}

function parseLimits(value: string): AuthLimits {
  try {
    return parseAuthLimits(value)
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message)
  }
}

/** Adds the API flags. */
export function addApiOptions(command: Command): Command {
  option(command, '--port <port>', 'API port (0 = a free port)', parseIntArg(0, 65535), 8080)
  option(
    command,
    '--grpc-port <port>',
    'gRPC port: GraphQL (antler.graphql.v1.GraphQL) and grpc.health.v1.Health (0 = a free port)',
    parseIntArg(0, 65535),
    9000,
  )
  flag(command, '--no-auth', 'serve every route without a token (local development only)')
  flag(command, '--require-origin', "web keys' tokens need a registered Origin header")
  option(
    command,
    '--token-ttl <seconds>',
    'lifetime of issued tokens (at most 26 days: @dfuse/client loops on longer ones)',
    parseIntArg(5, 2_246_400),
    86_400,
  )
  option(
    command,
    '--redis <url>',
    'Redis for rate-limit state shared by API replicas',
    parseUrl(['redis:', 'rediss:']),
    undefined,
  )
  flag(
    command,
    '--open-chain-api',
    'serve the /v1/chain passthrough without a token (a guaranteed push still needs one)',
  )
  option(
    command,
    '--rate-limits <json>',
    'override rate limits, e.g. {"callsPerIp":{"server":{"limit":100000,"windowMs":60000}}} (docs/API.md)',
    parseLimits,
    DEFAULT_AUTH_LIMITS,
  )
  flag(
    command,
    '--hyperion-token',
    "Hyperion's routes (/v2, /v1/history, /v1/trace_api, /stream) need a token like dfuse's (default: public, limited per IP)",
  )
  flag(command, '--trust-proxy', 'take client IPs from X-Forwarded-For (behind a reverse proxy)')
  option(
    command,
    '--max-lag-blocks <n>',
    "/readyz fails (503) while the store trails the chain's head by more blocks than this (judged with the chain API's get_info)",
    parseIntArg(0, 0xffff_ffff),
    DEFAULT_MAX_LAG_BLOCKS,
  )
  return addWebhookOptions(command)
}
