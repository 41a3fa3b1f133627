import type { TestContext } from 'node:test'
import { spawnSync } from 'node:child_process'
import { createDfuseClient, InMemoryApiTokenStore, type DfuseClient, type DfuseClientOptions } from '@dfuse/client'
import { onCleanup } from './cleanup.ts'
import { ANTLER_BIN, spawnAntler, type RunningCli } from './cli.ts'
import { tempDir } from './devchain.ts'

/** A running `antler dev` (devchain + indexer + API, real sockets) and what its ready line says. */
export interface Platform {
  readonly cli: RunningCli
  readonly dataDir: string
  /** The API's base URL, e.g. http://127.0.0.1:41234. */
  readonly api: string
  readonly grpc: string
  readonly chainApi: string
  readonly ship: string
  /** The development server key `antler dev` created. */
  readonly apiKey: string
  readonly chainId: string
}

/** `antler dev` in `dataDir` on free ports, 100 ms blocks, no workload, warnings only: what the e2e tests run. */
export function devArgs(dataDir: string): string[] {
  return [
    'dev',
    '--data-dir',
    dataDir,
    '--port',
    '0',
    '--grpc-port',
    '0',
    '--chain-port',
    '0',
    '--ship-port',
    '0',
    '--block-time',
    '100',
    '--workload',
    'none',
    '--log-level',
    'warn',
  ]
}

/**
 * Spawns `antler dev` on free ports in a fresh data dir (stopped, then removed, after the test). Flags
 * after the defaults override them (commander takes the last value), e.g. `['--block-time', '50']`.
 * The default workload is none, so tests see only their own transactions.
 */
export async function startPlatform(
  t: TestContext,
  extraArgs: string[] = [],
  env: Record<string, string> = {},
): Promise<Platform> {
  const dataDir = tempDir(t, 'antler-e2e-')
  const cli = await spawnAntler(t, [...devArgs(dataDir), ...extraArgs], env)
  const { api, grpc, chainApi, ship, apiKey, chainId } = cli.ready
  return { cli, dataDir, api, grpc, chainApi, ship, apiKey, chainId }
}

/** `POST /v1/auth/issue` with the key; throws unless it answers 200 with a token. */
export async function issueToken(
  platform: Pick<Platform, 'api'>,
  apiKey: string,
  headers: Record<string, string> = {},
): Promise<string> {
  const response = await fetch(`${platform.api}/v1/auth/issue`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ api_key: apiKey }),
  })
  const body = (await response.json()) as { token?: string }
  if (response.status !== 200 || typeof body.token !== 'string')
    throw new Error(`auth/issue answered ${response.status}: ${JSON.stringify(body)}`)
  return body.token
}

/** Runs `antler keys …` on the platform's data dir (while it runs) and returns stdout; throws on a non-zero exit. */
export function antlerKeys(platform: Pick<Platform, 'dataDir'>, args: string[]): string {
  const run = spawnSync(process.execPath, [ANTLER_BIN, 'keys', ...args, '--data-dir', platform.dataDir], {
    encoding: 'utf8',
    timeout: 30_000,
  })
  if (run.status !== 0) throw new Error(`antler keys ${args.join(' ')} exited ${run.status}: ${run.stderr}`)
  return run.stdout
}

/** The standard error object's shape check: code, trace_id, message, details (object when present). */
export function isStandardError(
  body: unknown,
): body is { code: string; trace_id: string; message: string; details?: Record<string, unknown> } {
  if (typeof body !== 'object' || body === null) return false
  const b = body as Record<string, unknown>
  const keys = Object.keys(b).sort()
  const allowed = ['code', 'details', 'message', 'trace_id']
  return (
    typeof b.code === 'string' &&
    /^[a-z0-9_]+$/.test(b.code) &&
    typeof b.trace_id === 'string' &&
    b.trace_id.length > 0 &&
    typeof b.message === 'string' &&
    (b.details === undefined || (typeof b.details === 'object' && b.details !== null)) &&
    keys.every((k) => allowed.includes(k))
  )
}

/**
 * An `@dfuse/client` for the platform (its server key, a fresh token store; `options` override), released when `t`
 * ends and before anything registered earlier stops: a client released after its server has gone reconnects forever,
 * and the test file never exits.
 */
export function dfuseClient(
  t: TestContext,
  platform: Pick<Platform, 'api' | 'apiKey'>,
  options: Partial<DfuseClientOptions> = {},
): DfuseClient {
  const client = createDfuseClient({
    apiKey: platform.apiKey,
    network: platform.api.replace('http://', ''),
    authUrl: platform.api,
    secure: false,
    apiTokenStore: new InMemoryApiTokenStore(),
    ...options,
  })
  onCleanup(t, () => client.release())
  return client
}
