import { execFile, fork, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import os, { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { startBenchFeed, type BenchFeed } from './ship-feed.ts'
import { Children, cpuSeconds, startAntler } from './children.ts'

export interface ApiBenchOptions {
  /** Length of each measured run, seconds. */
  readonly seconds: number
  /** Length of the warm-up run of each server, seconds. */
  readonly warmupSeconds: number
  readonly connections: number
  /** Runs of each configuration (configurations of a group take turns). */
  readonly rounds: number
  /** Blocks of backlog (20 transfers + 5 rawdb puts each) for the catch-up latency figures; 0 skips them. */
  readonly backlogBlocks: number
  /** Request rate of the latency runs during catch-up and idle (all connections together), req/s. */
  readonly latencyRate: number
}

const ANTLER = fileURLToPath(new URL('../bin/antler.js', import.meta.url))
const AUTOCANNON = createRequire(import.meta.url).resolve('autocannon')

/** Limits high enough that nothing in a run is refused: the figures measure cost, not refusals. */
const LIFTED_LIMITS = JSON.stringify({
  callsPerIp: { server: { limit: 100_000_000, windowMs: 60_000 } },
  issuancePerKey: { server: { limit: 100_000_000, windowMs: 60_000 } },
  issuancePerIp: { limit: 100_000_000, windowMs: 60_000 },
})

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref())

interface Load {
  readonly url: string
  readonly method?: 'GET' | 'POST'
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string
}

interface Cannon {
  /** Mean of autocannon's per-second samples. */
  readonly perSecond: number
  /** Latency percentiles of 2xx answers, ms (autocannon's histogram has 1 ms resolution). */
  readonly p50: number
  readonly p99: number
  readonly answered2xx: number
  /** Non-2xx answers, connection errors and time-outs. */
  readonly failed: number
  readonly codes: string
  /** CPU the server process used per 2xx answer during the run, ms (all its threads); undefined without /proc. */
  readonly serverCpuMs?: number
}

/** One autocannon run in a process of its own (never on the event loop of a server under test). */
async function cannon(
  children: Children,
  load: Load,
  run: { seconds: number; connections: number; rate?: number; serverPid?: number },
): Promise<Cannon> {
  const args = [
    AUTOCANNON,
    '--json',
    '-c',
    String(run.connections),
    '-d',
    String(run.seconds),
    '-m',
    load.method ?? 'GET',
  ]
  for (const [name, value] of Object.entries(load.headers ?? {})) args.push('-H', `${name}=${value}`)
  if (load.body !== undefined) args.push('-b', load.body)
  if (run.rate !== undefined) args.push('-R', String(run.rate))
  args.push(load.url)
  const cpuBefore = cpuSeconds(run.serverPid)
  const child = children.track(spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] }))
  let out = ''
  let err = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
  const timer = setTimeout(() => child.kill('SIGKILL'), (run.seconds + 60) * 1000)
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null]
  clearTimeout(timer)
  const cpuAfter = cpuSeconds(run.serverPid)
  if (code !== 0) throw new Error(`autocannon ${load.url} exited (${code ?? signal}): ${err.trim().slice(-500)}`)
  const r = JSON.parse(out.trim().split('\n').at(-1)!) as {
    requests: { average: number }
    latency: { p50: number; p99: number }
    non2xx: number
    errors: number
    timeouts: number
    '2xx': number
    statusCodeStats: Record<string, { count: number }>
  }
  return {
    perSecond: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    answered2xx: r['2xx'],
    failed: r.non2xx + r.errors + r.timeouts,
    codes: Object.entries(r.statusCodeStats)
      .map(([status, { count }]) => `${status}×${count}`)
      .join(' '),
    serverCpuMs:
      cpuBefore !== undefined && cpuAfter !== undefined && r['2xx'] > 0
        ? ((cpuAfter - cpuBefore) * 1000) / r['2xx']
        : undefined,
  }
}

async function getJson<T>(url: string, init?: RequestInit): Promise<T> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) })
  if (!response.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: HTTP ${response.status} ${await response.text()}`)
  return (await response.json()) as T
}

async function issueToken(api: string, apiKey: string): Promise<string> {
  const { token } = await getJson<{ token: string }>(`${api}/v1/auth/issue`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: apiKey }),
  })
  return token
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US')
const cpu = (c: Cannon) => (c.serverCpuMs === undefined ? '' : `, server CPU ${c.serverCpuMs.toFixed(3)} ms/request`)
const show = (c: Cannon) => `${fmt(c.perSecond)} req/s, p50 ${c.p50} ms, p99 ${c.p99} ms${cpu(c)}`

interface Server {
  readonly child: ChildProcess
  readonly ready: Record<string, string>
  /** A token of the dev server key; undefined with `--no-auth`. */
  readonly token: string | undefined
}

interface Configuration {
  readonly key: string
  readonly name: string
  readonly server: Server
  readonly load: Load
}

/** The runs of one configuration taken together: mean req/s, median p50 and p99, CPU per request over all runs. */
function summary(runs: readonly Cannon[]): Cannon {
  const median = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b)
    return sorted.length % 2
      ? sorted[(sorted.length - 1) / 2]
      : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2
  }
  const answered = runs.reduce((sum, c) => sum + c.answered2xx, 0)
  const cpuMs = runs.every((c) => c.serverCpuMs !== undefined)
    ? runs.reduce((sum, c) => sum + c.serverCpuMs! * c.answered2xx, 0) / answered
    : undefined
  return {
    perSecond: runs.reduce((sum, c) => sum + c.perSecond, 0) / runs.length,
    p50: median(runs.map((c) => c.p50)),
    p99: median(runs.map((c) => c.p99)),
    answered2xx: answered,
    failed: runs.reduce((sum, c) => sum + c.failed, 0),
    codes: '',
    serverCpuMs: cpuMs,
  }
}

/**
 * The API's own costs over HTTP, against freshly started `antler dev` servers (`--workload none`,
 * limits lifted), each in a process of its own, loaded by autocannon in another. Two groups, each
 * configuration with a server of its own: (1) a bare Fastify route (bench/bare-fastify.ts, the reference the
 * API's own cost is measured against), the ceiling (the cheapest public route, JWKS), `/healthz`, a 1-row state read
 * with a token and token issuance; (2) `/v1/chain/get_info` through the passthrough with a token and with
 * `--no-auth` (the passthrough is the only authenticated HTTP route), and the devchain answering
 * get_info directly (the passthrough's limit, in the with-token server's process). Within a group
 * every server is warmed up, then the configurations take turns, `rounds` runs of `seconds` each,
 * the order rotated each round: this machine is shared and noisy, and taking turns spreads the
 * disturbances evenly, which separate runs minutes apart do not. Then, if `backlogBlocks`, the
 * latency of `/healthz` and the passthrough at a fixed rate while `antler serve` indexes a
 * backlog, and once it has caught up.
 */
export async function benchApi(options: ApiBenchOptions): Promise<Record<string, string | number>> {
  const dir = mkdtempSync(join(tmpdir(), 'antler-api-'))
  const children = new Children(dir)
  const figures: Record<string, string | number> = {}
  const failures: string[] = []
  const check = (name: string, c: Cannon) => {
    if (c.failed > 0 || c.answered2xx === 0)
      failures.push(`${name}: ${c.failed} failed, ${c.answered2xx} 2xx (${c.codes || 'no answers'})`)
  }
  let servers = 0
  const loadAverage = () =>
    os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')
  figures['load average (1, 5, 15 min) at the start'] = loadAverage()
  const started = performance.now()

  const startDev = async (flags: string[]): Promise<Server> => {
    const n = ++servers
    const devFlags = [
      '--port',
      '0',
      '--grpc-port',
      '0',
      '--chain-port',
      '0',
      '--ship-port',
      '0',
      '--block-time',
      '500',
      '--workload',
      'none',
      '--rate-limits',
      LIFTED_LIMITS,
    ]
    const { child, ready } = await startAntler(
      children,
      ['dev', '--data-dir', join(dir, `dev-${n}`), ...devFlags, ...flags],
      join(dir, `dev-${n}.log`),
    )
    return { child, ready, token: flags.includes('--no-auth') ? undefined : await issueToken(ready.api, ready.apiKey) }
  }

  /** Warms every configuration up, then runs them in turns; returns each one's runs. */
  const takeTurns = async (configurations: readonly Configuration[]): Promise<Map<string, Cannon[]>> => {
    const runs = new Map<string, Cannon[]>(configurations.map((c) => [c.key, []]))
    for (const c of configurations)
      check(
        `${c.name} (warm-up)`,
        await cannon(children, c.load, { seconds: options.warmupSeconds, connections: options.connections }),
      )
    for (let round = 0; round < options.rounds; round++) {
      for (let i = 0; i < configurations.length; i++) {
        const c = configurations[(round + i) % configurations.length]
        const run = await cannon(children, c.load, {
          seconds: options.seconds,
          connections: options.connections,
          serverPid: c.server.child.pid,
        })
        check(`${c.name}, round ${round + 1}`, run)
        runs.get(c.key)!.push(run)
      }
    }
    return runs
  }

  const record = (configurations: readonly Configuration[], runs: Map<string, Cannon[]>) => {
    for (const c of configurations)
      figures[c.name] = `${show(summary(runs.get(c.key)!))}; each run: ${runs
        .get(c.key)!
        .map((r) => fmt(r.perSecond))
        .join(', ')} req/s`
  }

  try {
    const publicServers = [await startDev([]), await startDev([]), await startDev([]), await startDev([])]
    const jwks = await getJson<unknown>(`${publicServers[0].ready.api}/.well-known/jwks.json`)
    const bare = await startBareFastify(children, JSON.stringify(jwks))
    const group1: Configuration[] = [
      {
        key: 'bare',
        name: 'GET /bare: a bare Fastify route answering the same JWKS (its own process, no plugin, hook or log)',
        server: bare,
        load: { url: `${bare.ready.api}/bare` },
      },
      {
        key: 'ceiling',
        name: 'GET /.well-known/jwks.json (the ceiling: public, no store read)',
        server: publicServers[0],
        load: { url: `${publicServers[0].ready.api}/.well-known/jwks.json` },
      },
      {
        key: 'health',
        name: 'GET /healthz (public, reads the store)',
        server: publicServers[1],
        load: { url: `${publicServers[1].ready.api}/healthz` },
      },
      {
        key: 'row',
        name: "GET /v0/state/table/row with a token (a 1-row state read: alice's EOS balance, json)",
        server: publicServers[3],
        load: {
          url: `${publicServers[3].ready.api}/v0/state/table/row?account=eosio.token&scope=alice&table=accounts&primary_key=EOS&key_type=symbol_code&json=true`,
          headers: { authorization: `Bearer ${publicServers[3].token}` },
        },
      },
      {
        key: 'issue',
        name: 'POST /v1/auth/issue (token issuance: an API key looked up, an ES256 signature)',
        server: publicServers[2],
        load: {
          url: `${publicServers[2].ready.api}/v1/auth/issue`,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ api_key: publicServers[2].ready.apiKey }),
        },
      },
    ]
    const runs1 = await takeTurns(group1)
    for (const server of [...publicServers, bare]) await children.stop(server.child)
    record(group1, runs1)

    const withToken = await startDev([])
    const open = await startDev(['--no-auth'])
    const group2: Configuration[] = [
      {
        key: 'auth',
        name: 'GET /v1/chain/get_info via the passthrough, with a token',
        server: withToken,
        load: {
          url: `${withToken.ready.api}/v1/chain/get_info`,
          headers: { authorization: `Bearer ${withToken.token}` },
        },
      },
      {
        key: 'noAuth',
        name: 'GET /v1/chain/get_info via the passthrough, --no-auth',
        server: open,
        load: { url: `${open.ready.api}/v1/chain/get_info` },
      },
      {
        key: 'direct',
        name: 'GET /v1/chain/get_info from the devchain directly (the passthrough limit, same process)',
        server: withToken,
        load: { url: `${withToken.ready.chainApi}/v1/chain/get_info` },
      },
    ]
    const runs2 = await takeTurns(group2)
    await children.stop(withToken.child)
    await children.stop(open.child)
    record(group2, runs2)

    const all = new Map([...runs1, ...runs2].map(([key, cs]) => [key, summary(cs)]))
    const ratio = (a: string, b: string) => (all.get(a)!.perSecond / all.get(b)!.perSecond).toFixed(2)
    const auth = runs2.get('auth')!
    const noAuth = runs2.get('noAuth')!
    figures['passthrough with a token / --no-auth, req/s'] =
      `${ratio('auth', 'noAuth')} (round by round: ${auth.map((c, i) => (c.perSecond / noAuth[i].perSecond).toFixed(2)).join(', ')})`
    figures['passthrough --no-auth / with a token, server CPU per request'] = (
      all.get('noAuth')!.serverCpuMs! / all.get('auth')!.serverCpuMs!
    ).toFixed(2)
    figures['passthrough with a token / devchain directly (bar: ≥ 0.5)'] = ratio('auth', 'direct')
    figures['passthrough --no-auth / devchain directly'] = ratio('noAuth', 'direct')
    figures['jwks (public, reads nothing) / bare Fastify route (bar: ≥ 0.6)'] = ratio('ceiling', 'bare')
    figures['/healthz / bare Fastify route (bar: ≥ 0.5)'] = ratio('health', 'bare')
    figures['1-row state read with a token / bare Fastify route'] = ratio('row', 'bare')
    figures['/healthz / ceiling'] = ratio('health', 'ceiling')
    figures['passthrough with a token / ceiling'] = ratio('auth', 'ceiling')
    figures['token issuance / ceiling'] = ratio('issue', 'ceiling')
    figures['seconds for the figures above'] = ((performance.now() - started) / 1000).toFixed(0)

    if (options.backlogBlocks > 0) await catchUp(options, dir, children, figures, check)
  } finally {
    await children.close()
    rmSync(dir, { recursive: true, force: true })
  }
  figures['load average (1, 5, 15 min) at the end'] = loadAverage()
  figures['failed requests (non-2xx, errors, time-outs), all runs'] = failures.length === 0 ? 0 : failures.join('; ')
  if (failures.length > 0) {
    console.error(
      `\n!!! api bench: requests failed, the figures above them are not valid:\n!!! ${failures.join('\n!!! ')}\n`,
    )
    process.exitCode = 1
  }
  return figures
}

interface Health {
  head_block_num: number | null
}

/** bench/bare-fastify.ts in a process of its own, answering `body` on GET /bare. */
async function startBareFastify(children: Children, body: string): Promise<Server> {
  const child = children.track(fork(new URL('./bare-fastify.ts', import.meta.url), [body], { stdio: 'inherit' }))
  const [message] = (await Promise.race([
    once(child, 'message'),
    once(child, 'exit').then(([code]) => Promise.reject(new Error(`bare Fastify exited with ${code}`))),
  ])) as [{ url: string }]
  return { child, ready: { api: message.url }, token: undefined }
}

/**
 * Latency of `/healthz` and of the passthrough (with a token) at a fixed rate while `antler serve`
 * indexes a backlog served by the bench feed (its own process), then the same once it has caught
 * up. The passthrough goes to an idle `antler devchain` of its own (the feed serves SHiP only).
 */
async function catchUp(
  options: ApiBenchOptions,
  dir: string,
  children: Children,
  figures: Record<string, string | number>,
  check: (name: string, c: Cannon) => void,
): Promise<void> {
  console.error(`  api bench: building a backlog of ${options.backlogBlocks} blocks`)
  let feed: BenchFeed | undefined
  try {
    const building = performance.now()
    // No handle on the feed process until it serves; if it never does, it exits with this process (its IPC channel
    // closes).
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>(
      (_resolve, reject) =>
        (timer = setTimeout(() => reject(new Error('the backlog was not built within 10 minutes')), 600_000)),
    )
    feed = await Promise.race([startBenchFeed(options.backlogBlocks), timeout]).finally(() => clearTimeout(timer))
    figures['catch-up: seconds to build the backlog (its own process, before any load)'] = (
      (performance.now() - building) /
      1000
    ).toFixed(0)
    const chain = await startAntler(
      children,
      [
        'devchain',
        '--data-dir',
        join(dir, 'chain'),
        '--chain-port',
        '0',
        '--ship-port',
        '0',
        '--block-time',
        '500',
        '--workload',
        'none',
      ],
      join(dir, 'chain.log'),
    )
    const dataDir = join(dir, 'serve')
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [ANTLER, 'keys', 'create', '--data-dir', dataDir, '--type', 'server', '--name', 'bench', '--json'],
      { timeout: 60_000 },
    )
    const apiKey = (JSON.parse(stdout.trim().split('\n').at(-1)!) as { key: string }).key
    const started = performance.now()
    const serve = await startAntler(
      children,
      [
        'serve',
        '--data-dir',
        dataDir,
        '--port',
        '0',
        '--grpc-port',
        '0',
        '--ship',
        feed.url,
        '--chain-api',
        chain.ready.chainApi,
        '--rate-limits',
        LIFTED_LIMITS,
      ],
      join(dir, 'serve.log'),
    )
    const api = serve.ready.api
    const token = await issueToken(api, apiKey)
    const head = async () => (await getJson<Health>(`${api}/healthz`)).head_block_num ?? 0
    const loads: [string, Load][] = [
      ['GET /healthz', { url: `${api}/healthz` }],
      [
        'GET /v1/chain/get_info via the passthrough, with a token',
        { url: `${api}/v1/chain/get_info`, headers: { authorization: `Bearer ${token}` } },
      ],
    ]
    const rated = { connections: options.connections, rate: options.latencyRate }
    const phase = async (label: string, catchingUp: boolean) => {
      for (const [name, l] of loads) {
        check(`${name}, ${label} (warm-up)`, await cannon(children, l, { ...rated, seconds: options.warmupSeconds }))
        const from = await head()
        const c = await cannon(children, l, { ...rated, seconds: 2 * options.seconds })
        const to = await head()
        check(`${name}, ${label}`, c)
        figures[`${name} at ${options.latencyRate} req/s, ${label}`] =
          `p50 ${c.p50} ms, p99 ${c.p99} ms (${fmt(c.perSecond)} req/s answered; indexer ${from} → ${to} of ${feed!.head}${!catchingUp ? '' : from >= feed!.head ? ', NOT during catch-up: it had caught up before the run' : to >= feed!.head ? ', caught up during the run' : ''})`
      }
    }
    await phase('during catch-up', true)
    const deadline = Date.now() + 600_000
    let last = await head()
    while (last < feed.head) {
      if (Date.now() > deadline)
        throw new Error(`the indexer did not catch up within 10 minutes (at ${last} of ${feed.head})`)
      await delay(250)
      last = await head()
    }
    const seconds = (performance.now() - started) / 1000
    figures['catch-up: blocks, seconds from the start of antler serve (under the load above)'] =
      `${feed.head}, ${seconds.toFixed(1)} s (${fmt(feed.head / seconds)} blocks/s)`
    await phase('idle (caught up)', false)
    await children.stop(serve.child)
    await children.stop(chain.child)
    await feed.stop()
  } finally {
    feed?.kill()
  }
}
