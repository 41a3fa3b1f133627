import { execFile, fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { setTimeout as delay } from 'node:timers/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import {
  cannon,
  describeRuns,
  inProcesses,
  issueToken,
  LIFTED_LIMITS,
  startAntler,
  startDev,
  type BenchRun,
  type Cannon,
  type Children,
} from './children.ts'
import type { LoadRequest } from './load-process.ts'
import { startBenchFeed } from './ship-feed.ts'
import { cpuPerAnswer, fmt, mean, takeTurns, type Figures } from './timing.ts'

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
  /** One `antler dev` with auth for every configuration that needs one (and one --no-auth), 1-s latency runs. */
  readonly smoke?: boolean
}

/** Request rate of the latency runs during catch-up and idle (all connections together), req/s. */
const LATENCY_RATE = 200
const ANTLER = fileURLToPath(new URL('../bin/antler.js', import.meta.url))

interface Configuration {
  readonly key: string
  readonly name: string
  readonly server: { readonly child: ChildProcess }
  /** The server's origin, and the request loaded on it. */
  readonly url: string
  readonly request: LoadRequest
}

/**
 * The API's own costs over HTTP, against freshly started `antler dev` servers (`--workload none`, limits lifted), each
 * in a process of its own, loaded by autocannon in another. Two groups, each configuration with a server of its own:
 * (1) a bare Fastify route (bench/bare-fastify.ts, the reference the API's own cost is measured against), the ceiling
 * (the cheapest public route, JWKS), `/healthz`, a 1-row state read with a token and token issuance; (2)
 * `/v1/chain/get_info` through the passthrough with a token and with `--no-auth` (the passthrough is the only
 * authenticated HTTP route), and the devchain answering get_info directly (the passthrough's limit, in the with-token
 * server's process). Within a group every server is warmed up, then the configurations take turns, `rounds` runs of
 * `seconds` each, the order rotated each round: this machine is shared and noisy, and taking turns spreads the
 * disturbances evenly, which separate runs minutes apart do not. Then, if `backlogBlocks`, the latency of `/healthz`
 * and the passthrough at a fixed rate while `antler serve` indexes a backlog, and once it has caught up.
 */
export async function benchApi(options: ApiBenchOptions): Promise<Figures> {
  const failuresName = 'failed requests (non-2xx, errors, time-outs), all runs'
  return inProcesses('api', failuresName, async ({ dir, children, figures, failures, check }) => {
    const started = performance.now()
    let servers = 0
    const dev = (flags: string[] = []) => startDev(children, dir, `dev-${++servers}`, { workload: 'none', flags })
    const { connections } = options

    /** Warms every configuration up, then runs them in turns; returns each one's runs. */
    const turns = async (configurations: readonly Configuration[]): Promise<Map<string, Cannon[]>> => {
      const runs = new Map<string, Cannon[]>(configurations.map((c) => [c.key, []]))
      for (const c of options.warmupSeconds > 0 ? configurations : []) {
        const warm = await cannon(children, c.url, [c.request], { seconds: options.warmupSeconds, connections })
        check(`${c.name} (warm-up)`, warm)
      }
      await takeTurns(configurations, options.rounds, async (c, round) => {
        const run = { seconds: options.seconds, connections, pid: c.server.child.pid }
        const result = await cannon(children, c.url, [c.request], run)
        check(`${c.name}, round ${round + 1}`, result)
        runs.get(c.key)!.push(result)
      })
      for (const c of configurations) figures[c.name] = describeRuns(runs.get(c.key)!)
      return runs
    }

    // Under --smoke one server with auth serves every configuration that needs one, its --no-auth peer started with it.
    const [shared, sharedOpen] = options.smoke ? await Promise.all([dev(), dev(['--no-auth'])]) : []
    const publicServers = shared ? [shared, shared, shared, shared] : await Promise.all([dev(), dev(), dev(), dev()])
    const jwks = await (await fetch(`${publicServers[0].ready.api}/.well-known/jwks.json`)).text()
    const bare = await startBareFastify(children, jwks)
    const [p0, p1, p2, p3] = publicServers
    const runs1 = await turns([
      {
        key: 'bare',
        name: 'GET /bare: a bare Fastify route answering the same JWKS (its own process, no plugin, hook or log)',
        server: bare,
        url: bare.url,
        request: { path: '/bare' },
      },
      {
        key: 'ceiling',
        name: 'GET /.well-known/jwks.json (the ceiling: public, no store read)',
        server: p0,
        url: p0.ready.api,
        request: { path: '/.well-known/jwks.json' },
      },
      {
        key: 'health',
        name: 'GET /healthz (public, reads the store)',
        server: p1,
        url: p1.ready.api,
        request: { path: '/healthz' },
      },
      {
        key: 'row',
        name: "GET /v0/state/table/row with a token (a 1-row state read: alice's EOS balance, json)",
        server: p3,
        url: p3.ready.api,
        request: {
          path: '/v0/state/table/row?account=eosio.token&scope=alice&table=accounts&primary_key=EOS&key_type=symbol_code&json=true',
          headers: { authorization: `Bearer ${p3.token}` },
        },
      },
      {
        key: 'issue',
        name: 'POST /v1/auth/issue (token issuance: an API key looked up, an ES256 signature)',
        server: p2,
        url: p2.ready.api,
        request: {
          path: '/v1/auth/issue',
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ api_key: p2.ready.apiKey }),
        },
      },
    ])
    for (const server of [...publicServers, bare]) if (server !== shared) await children.stop(server.child)

    const [withToken, open] = await Promise.all([shared ?? dev(), sharedOpen ?? dev(['--no-auth'])])
    const getInfo = '/v1/chain/get_info'
    const runs2 = await turns([
      {
        key: 'auth',
        name: 'GET /v1/chain/get_info via the passthrough, with a token',
        server: withToken,
        url: withToken.ready.api,
        request: { path: getInfo, headers: { authorization: `Bearer ${withToken.token}` } },
      },
      {
        key: 'noAuth',
        name: 'GET /v1/chain/get_info via the passthrough, --no-auth',
        server: open,
        url: open.ready.api,
        request: { path: getInfo },
      },
      {
        key: 'direct',
        name: 'GET /v1/chain/get_info from the devchain directly (the passthrough limit, same process)',
        server: withToken,
        url: withToken.ready.chainApi,
        request: { path: getInfo },
      },
    ])
    await children.stop(withToken.child)
    await children.stop(open.child)

    const all = new Map([...runs1, ...runs2])
    const rate = (key: string) => mean(all.get(key)!.map((c) => c.perSecond))
    const ratio = (a: string, b: string) => (rate(a) / rate(b)).toFixed(2)
    const [auth, noAuth] = [runs2.get('auth')!, runs2.get('noAuth')!]
    figures['passthrough with a token / --no-auth, req/s'] =
      `${ratio('auth', 'noAuth')} (round by round: ${auth.map((c, i) => (c.perSecond / noAuth[i].perSecond).toFixed(2)).join(', ')})`
    figures['passthrough --no-auth / with a token, server CPU per request'] = (
      cpuPerAnswer(all.get('noAuth')!)! / cpuPerAnswer(all.get('auth')!)!
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

    if (options.backlogBlocks > 0) await catchUp(options, { dir, children, figures, failures, check })
  })
}

/** bench/bare-fastify.ts in a process of its own, answering `body` on GET /bare. */
async function startBareFastify(children: Children, body: string): Promise<{ child: ChildProcess; url: string }> {
  const child = children.track(fork(new URL('./bare-fastify.ts', import.meta.url), [body], { stdio: 'inherit' }))
  const [message] = (await Promise.race([
    once(child, 'message'),
    once(child, 'exit').then(([code]) => Promise.reject(new Error(`bare Fastify exited with ${code}`))),
  ])) as [{ url: string }]
  return { child, url: message.url }
}

/**
 * Latency of `/healthz` and of the passthrough (with a token) at a fixed rate while `antler serve` indexes a backlog
 * served by the bench feed (its own process), then the same once it has caught up. The passthrough goes to an idle
 * `antler devchain` of its own (the feed serves SHiP only).
 */
async function catchUp(options: ApiBenchOptions, { dir, children, figures, check }: BenchRun): Promise<void> {
  console.error(`  api bench: building a backlog of ${options.backlogBlocks} blocks`)
  const building = performance.now()
  const dataDir = join(dir, 'serve')
  const chainArgs = ['devchain', '--data-dir', join(dir, 'chain'), '--chain-port', '0', '--ship-port', '0']
  chainArgs.push('--block-time', '500', '--workload', 'none')
  const keys = ['keys', 'create', '--data-dir', dataDir, '--type', 'server', '--name', 'bench', '--json']
  // The idle devchain and the key are made while the backlog is built (in processes of their own).
  const made = Promise.all([
    startAntler(children, chainArgs, join(dir, 'chain.log')),
    promisify(execFile)(process.execPath, [ANTLER, ...keys], { timeout: 60_000 }),
  ])
  made.catch(() => {}) // awaited below, once the feed is there to be killed
  const feed = await startBenchFeed(options.backlogBlocks, { timeoutMs: 600_000 })
  try {
    const built = (performance.now() - building) / 1000
    figures['catch-up: seconds to build the backlog (its own process, before any load)'] = built.toFixed(0)
    const [chain, { stdout }] = await made
    const apiKey = (JSON.parse(stdout.trim().split('\n').at(-1)!) as { key: string }).key
    const started = performance.now()
    const serveArgs = ['serve', '--data-dir', dataDir, '--port', '0', '--grpc-port', '0', '--ship', feed.url]
    serveArgs.push('--chain-api', chain.ready.chainApi, '--rate-limits', LIFTED_LIMITS)
    const serve = await startAntler(children, serveArgs, join(dir, 'serve.log'))
    const api = serve.ready.api
    const token = await issueToken(api, apiKey)
    const head = async () =>
      ((await (await fetch(`${api}/healthz`)).json()) as { head_block_num: number | null }).head_block_num ?? 0
    const loads: [string, LoadRequest][] = [
      ['GET /healthz', { path: '/healthz' }],
      [
        'GET /v1/chain/get_info via the passthrough, with a token',
        { path: '/v1/chain/get_info', headers: { authorization: `Bearer ${token}` } },
      ],
    ]
    const rated = { connections: options.connections, rate: LATENCY_RATE }
    const phase = async (label: string, catchingUp: boolean) => {
      for (const [name, l] of loads) {
        if (options.warmupSeconds > 0)
          check(
            `${name}, ${label} (warm-up)`,
            await cannon(children, api, [l], { ...rated, seconds: options.warmupSeconds }),
          )
        const from = await head()
        const c = await cannon(children, api, [l], { ...rated, seconds: (options.smoke ? 1 : 2) * options.seconds })
        const to = await head()
        check(`${name}, ${label}`, c)
        const when = !catchingUp
          ? ''
          : from >= feed.head
            ? ', NOT during catch-up: it had caught up before the run'
            : to >= feed.head
              ? ', caught up during the run'
              : ''
        figures[`${name} at ${LATENCY_RATE} req/s, ${label}`] =
          `p50 ${c.p50} ms, p99 ${c.p99} ms (${fmt(c.perSecond)} req/s answered; indexer ${from} → ${to} of ${feed.head}${when})`
      }
    }
    await phase('during catch-up', true)
    const deadline = Date.now() + 600_000
    for (let last = await head(); last < feed.head; last = await head()) {
      if (Date.now() > deadline)
        throw new Error(`the indexer did not catch up within 10 minutes (at ${last} of ${feed.head})`)
      await delay(250)
    }
    const seconds = (performance.now() - started) / 1000
    figures['catch-up: blocks, seconds from the start of antler serve (under the load above)'] =
      `${feed.head}, ${seconds.toFixed(1)} s (${fmt(feed.head / seconds)} blocks/s)`
    await phase('idle (caught up)', false)
    await children.stop(serve.child)
    await children.stop(chain.child)
    await feed.stop()
  } finally {
    feed.kill()
  }
}
