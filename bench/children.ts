import { fork, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { openPostgresStore, openSqliteStore, type Store } from '../src/store/index.ts'
import type { LoadConfig, LoadRequest, LoadResult } from './load-process.ts'
import { cpuPerAnswer, fmt, loadAverage, loop, mean, median, percentiles, takeTurns, type Figures } from './timing.ts'

/**
 * Every child process: stopped at the end, on error, and killed (and `dir` removed) if the bench process exits or is
 * interrupted.
 */
export class Children {
  private readonly live = new Set<ChildProcess>()
  private readonly onExit = () => {
    for (const child of this.live) child.kill('SIGKILL')
    rmSync(this.dir, { recursive: true, force: true })
  }
  private readonly onSignal = (signal: NodeJS.Signals) => {
    this.onExit()
    process.exit(signal === 'SIGINT' ? 130 : 143)
  }

  constructor(private readonly dir: string) {
    process.on('exit', this.onExit)
    process.once('SIGINT', this.onSignal)
    process.once('SIGTERM', this.onSignal)
  }

  /** Tracks `child`, and kills it (SIGKILL) if it still runs after `timeoutMs` when one is given. */
  track<C extends ChildProcess>(child: C, timeoutMs?: number): C {
    this.live.add(child)
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    timer?.unref()
    child.once('exit', () => {
      clearTimeout(timer)
      this.live.delete(child)
    })
    return child
  }

  /** SIGTERM (a clean shutdown), SIGKILL after 15 s. */
  async stop(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = once(child, 'exit')
    child.kill('SIGTERM')
    const delay = (ms: number) => new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref())
    if (await Promise.race([exited.then(() => true), delay(15_000)])) return
    child.kill('SIGKILL')
    await Promise.race([exited, delay(5_000)])
  }

  async close(): Promise<void> {
    await Promise.all([...this.live].map((child) => this.stop(child)))
    process.off('exit', this.onExit)
    process.off('SIGINT', this.onSignal)
    process.off('SIGTERM', this.onSignal)
  }
}

/** CPU seconds a process (all its threads) has used so far, from /proc (Linux); undefined elsewhere. */
export function cpuSeconds(pid: number | undefined): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100 // utime + stime, in USER_HZ (100 on Linux)
  } catch {
    return undefined
  }
}

/** Resident memory of a process, MiB (Linux /proc); undefined elsewhere or once it has gone. */
export function rssMiB(pid: number | undefined): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? Number(match[1]) / 1024 : undefined
  } catch {
    return undefined
  }
}

/** Samples a process's RSS every 100 ms until `stop()`, which answers the peak (MiB). */
export function peakRss(pid: number | undefined): { stop(): number | undefined } {
  let peak = rssMiB(pid)
  const sampler = setInterval(() => {
    const rss = rssMiB(pid)
    if (rss !== undefined) peak = Math.max(peak ?? 0, rss)
  }, 100)
  return {
    stop: () => {
      clearInterval(sampler)
      return peak
    },
  }
}

export const logTail = (path: string) => {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-15).join('\n')
  } catch {
    return '(no log)'
  }
}

const ANTLER = fileURLToPath(new URL('../bin/antler.js', import.meta.url))

// Every antler a benchmark spawns (this process's environment is theirs) runs the current sources through tsx, as the
// figures before the build did; `ANTLER_FROM_SOURCE=0 npm run bench` runs dist/ when it is current (npm run build).
// bench/startup.ts compares the two.
process.env.ANTLER_FROM_SOURCE ??= '1'

/**
 * Runs `node bin/antler.js ARGS` (stderr to `logPath`) and returns the fields of its `antler ready {…}` line; killed
 * after `killAfterMs` when given.
 */
export async function startAntler(
  children: Children,
  args: string[],
  logPath: string,
  timeoutMs = 120_000,
  killAfterMs?: number,
): Promise<{ child: ChildProcess; ready: Record<string, string> }> {
  const log = openSync(logPath, 'a')
  const child = children.track(
    spawn(process.execPath, [ANTLER, ...args], { stdio: ['ignore', 'pipe', log] }),
    killAfterMs,
  )
  closeSync(log)
  const lines = createInterface({ input: child.stdout! })
  try {
    const ready = await new Promise<Record<string, string>>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`antler ${args[0]}: no ready line within ${timeoutMs} ms`)),
        timeoutMs,
      )
      lines.on('line', (line) => {
        if (!line.startsWith('antler ready ')) return
        clearTimeout(timer)
        resolve(JSON.parse(line.slice('antler ready '.length)))
      })
      child.once('exit', (code, signal) => {
        clearTimeout(timer)
        reject(new Error(`antler ${args[0]} exited (${code ?? signal}) before it was ready`))
      })
    })
    return { child, ready }
  } catch (error) {
    await children.stop(child)
    throw new Error(`${(error as Error).message}; its log ends:\n${logTail(logPath)}`, { cause: error })
  }
}

/** An `antler api` under load: a label for the figures, its process (for its CPU) and its base URL. */
export interface ApiServer {
  readonly label: string
  readonly child: ChildProcess
  readonly api: string
}

/** `antler api` on an existing store, auth off, alone in its process (killed after an hour at most). */
export async function startApiServer(
  children: Children,
  label: string,
  storeArgs: string[],
  logPath: string,
): Promise<ApiServer> {
  const args = ['api', ...storeArgs, '--no-auth', '--port', '0', '--grpc-port', '0']
  const { child, ready } = await startAntler(children, args, logPath, 120_000, 60 * 60_000)
  return { label, child, api: ready.api }
}

/** Limits high enough that nothing in a run is refused: the figures measure cost, not refusals. */
export const LIFTED_LIMITS = JSON.stringify({
  callsPerIp: { server: { limit: 100_000_000, windowMs: 60_000 } },
  issuancePerKey: { server: { limit: 100_000_000, windowMs: 60_000 } },
  issuancePerIp: { limit: 100_000_000, windowMs: 60_000 },
})

/** An `antler dev` of a bench: its process, the fields of its ready line, a token of its key ('' with --no-auth). */
export interface Antler {
  readonly child: ChildProcess
  readonly ready: Record<string, string>
  readonly token: string
}

export async function issueToken(api: string, apiKey: string): Promise<string> {
  const response = await fetch(`${api}/v1/auth/issue`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: apiKey }),
    signal: AbortSignal.timeout(30_000),
  })
  if (!response.ok) throw new Error(`token issuance: HTTP ${response.status} ${await response.text()}`)
  return ((await response.json()) as { token: string }).token
}

/**
 * `antler dev --block-time 500` on ports of its own, limits lifted, in `dir`/`name`: the demo workload (one transfer
 * every 500 ms) unless another is named; a token of its key unless `--no-auth` is among `flags`.
 */
export async function startDev(
  children: Children,
  dir: string,
  name: string,
  { workload = 'demo', flags = [] as string[] } = {},
): Promise<Antler> {
  const logPath = join(dir, `${name}.log`)
  const args = ['dev', '--data-dir', join(dir, name), '--port', '0', '--grpc-port', '0', '--chain-port', '0']
  args.push('--ship-port', '0', '--block-time', '500', '--workload', workload, '--rate-limits', LIFTED_LIMITS)
  const { child, ready } = await startAntler(children, [...args, ...flags], logPath, 180_000)
  try {
    return { child, ready, token: flags.includes('--no-auth') ? '' : await issueToken(ready.api, ready.apiKey) }
  } catch (error) {
    await children.stop(child)
    throw new Error(`${(error as Error).message}; its log ends:\n${logTail(logPath)}`, { cause: error })
  }
}

const LOAD = fileURLToPath(new URL('./load-process.ts', import.meta.url))

/** A load run (bench/load-process.ts) as the benches read it. */
export interface Cannon extends Omit<LoadResult, 'times'> {
  /** Per request of the run: the good answers' percentiles (ms) and rate. */
  readonly latencies: readonly { readonly p50: number; readonly p99: number; readonly perSecond: number }[]
  /** CPU the server process (`pid`) used per good answer during the run, ms; undefined without /proc. */
  readonly serverCpuMs?: number
}

/**
 * One autocannon run against `url` in a process of its own (never on the event loop of a server under test). The load
 * process runs without tsx (Node strips its types): it starts sooner, a second less per run on a busy machine.
 */
export async function cannon(
  children: Children,
  url: string,
  requests: readonly LoadRequest[],
  run: { seconds: number; connections: number; rate?: number; pid?: number; stopAfter?: number },
): Promise<Cannon> {
  const { connections, seconds, rate, stopAfter } = run
  const config: LoadConfig = { url, requests, connections, seconds, rate, stopAfter }
  const cpuBefore = cpuSeconds(run.pid)
  const child = children.track(
    fork(LOAD, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] }),
    (run.seconds + 60) * 1000,
  )
  const result = new Promise<LoadResult>((resolve, reject) => {
    child.once('message', (message: LoadResult) => resolve(message))
    child.once('exit', (code, signal) => reject(new Error(`load process (${url}) exited (${code ?? signal})`)))
  })
  child.send(config)
  const { times, ...r } = await result
  const cpuAfter = cpuSeconds(run.pid)
  return {
    ...r,
    latencies: times.map((t) => ({ ...percentiles(t), perSecond: t.length / r.seconds })),
    serverCpuMs:
      cpuBefore !== undefined && cpuAfter !== undefined && r.answered > 0
        ? ((cpuAfter - cpuBefore) * 1000) / r.answered
        : undefined,
  }
}

/** What a bench that runs processes works with. */
export interface BenchRun {
  readonly dir: string
  readonly children: Children
  readonly figures: Figures
  /** What went wrong: each makes the bench's figures invalid, and the bench fail (exit code 1). */
  readonly failures: string[]
  /** Notes a failure if the run had failed requests or no good answer. */
  check(label: string, run: { failed: number; answered: number; failures: readonly string[] }): void
}

/**
 * Runs `body` with a temporary directory and the child processes it starts (all stopped, the directory removed, at the
 * end), between the load averages at the start and at the end; then the failures (`failuresName`: 0 or what failed). A
 * bench with failures sets the exit code to 1.
 */
export async function inProcesses(name: string, failuresName: string, body: (run: BenchRun) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), `antler-${name}-`))
  const children = new Children(dir)
  const figures: Figures = { 'load average (1, 5, 15 min) at the start': loadAverage() }
  const failures: string[] = []
  const check: BenchRun['check'] = (label, r) => {
    if (r.failed > 0 || r.answered === 0)
      failures.push(`${label}: ${r.failed} failed, ${r.answered} answered ${r.failures.join(' | ')}`)
  }
  try {
    await body({ dir, children, figures, failures, check })
  } finally {
    await children.close()
    rmSync(dir, { recursive: true, force: true })
  }
  figures['load average (1, 5, 15 min) at the end'] = loadAverage()
  figures[failuresName] = failures.length === 0 ? 0 : failures.join('; ')
  if (failures.length > 0) {
    console.error(`\n!!! ${name} bench: ${failures.join('\n!!! ')}\n`)
    process.exitCode = 1
  }
  return figures
}

/** A load on an `antler api`, measured through HTTP next to the same reads in this process (the limit) if any. */
export interface Configuration<R extends LoadRequest = LoadRequest> {
  readonly key: string
  readonly name: string
  readonly server: ApiServer
  readonly requests: readonly R[]
  readonly connections: number
  /** Length of its runs when not the others' (answers that take seconds). */
  readonly seconds?: number
  /** The in-process reads of the same requests, cycled; each answers what it read (rows). */
  readonly local?: readonly (() => Promise<number>)[]
}

export interface Measured {
  readonly http: Cannon[]
  readonly local: Awaited<ReturnType<typeof loop>>[]
}

/**
 * Every configuration warmed up (HTTP `warmupSeconds`, in-process 1 s; none when 0), then `rounds` rounds of them
 * taking turns, each run followed by its in-process loop of the same length; every run checked.
 */
export async function measureTurns(
  { children, check }: BenchRun,
  configurations: readonly Configuration[],
  o: { readonly rounds: number; readonly seconds: number; readonly warmupSeconds: number },
): Promise<Map<string, Measured>> {
  const measured = new Map<string, Measured>()
  const load = (c: Configuration, seconds: number) =>
    cannon(children, c.server.api, c.requests, { seconds, connections: c.connections, pid: c.server.child.pid })
  for (const c of configurations) {
    measured.set(c.key, { http: [], local: [] })
    if (o.warmupSeconds === 0) continue
    check(`${c.name} (warm-up)`, await load(c, o.warmupSeconds))
    if (c.local) await loop(c.local, 1)
  }
  await takeTurns(configurations, o.rounds, async (c, round) => {
    const run = await load(c, c.seconds ?? o.seconds)
    check(`${c.name}, round ${round + 1}`, run)
    measured.get(c.key)!.http.push(run)
    if (c.local) measured.get(c.key)!.local.push(await loop(c.local, c.seconds ?? o.seconds))
  })
  return measured
}

/** HTTP runs of one configuration: median p50 and p99, mean req/s (`extra` after it), CPU per answer, each run. */
export function describeRuns(runs: readonly Cannon[], extra = ''): string {
  const cpu = cpuPerAnswer(runs)
  const rate = (n: number) => (n < 100 ? n.toFixed(1) : fmt(n))
  return (
    `p50 ${median(runs.map((r) => r.p50))} ms, p99 ${median(runs.map((r) => r.p99))} ms, ` +
    `${rate(mean(runs.map((r) => r.perSecond)))} req/s${extra}` +
    (cpu === undefined ? '' : `, server CPU ${cpu.toFixed(2)} ms/request`) +
    `; each run: ${runs.map((r) => `${rate(r.perSecond)} req/s p99 ${r.p99}`).join(', ')}`
  )
}

/** In-process loops of one configuration: median p50 and p99, and what they read per second (`unit`). */
export function describeLoops(loops: Measured['local'], unit: string): string {
  const p = (q: 'p50' | 'p99') => median(loops.map((r) => r[q])).toFixed(2)
  return `p50 ${p('p50')} ms, p99 ${p('p99')} ms, ${fmt(mean(loops.map((r) => r.perSecond)))} ${unit}`
}

/** The options of a bench of `antler api` on the stores the ingest bench kept (runs of `seconds`, taking turns). */
export interface KeptStoresOptions {
  readonly sqlite?: string
  readonly postgres?: string
  readonly seconds: number
  readonly rounds: number
  readonly warmupSeconds: number
  readonly smoke?: boolean
}

/**
 * A bench on the kept stores (inProcesses()): `body` gets them, and opens them read-only in this process (closed at the
 * end); every answer is checked, so its failures are failed requests.
 */
export async function keptStoresBench(
  name: string,
  options: KeptStoresOptions,
  body: (run: BenchRun, stores: KeptStore[], readOnly: (store: KeptStore) => Promise<Store>) => Promise<void>,
): Promise<Figures> {
  const opened: Store[] = []
  const readOnly = async (kept: KeptStore) => {
    const store = await kept.open(true)
    opened.push(store)
    return store
  }
  const failuresName = 'failed requests (non-200, wrong length, errors, time-outs), all runs'
  try {
    return await inProcesses(name, failuresName, async (run) => {
      const started = performance.now()
      await body(run, keptStores(options, run.dir), readOnly)
      run.figures['seconds for the figures above'] = ((performance.now() - started) / 1000).toFixed(0)
    })
  } finally {
    for (const store of opened) await store.close()
  }
}

/** A store kept by the ingest bench (`--keep-sqlite` or `--keep-postgres`), as the benches on one open it. */
export interface KeptStore {
  readonly label: 'SQLite' | 'PostgreSQL'
  /** Its file or URL. */
  readonly where: string
  open(readOnly: boolean): Promise<Store>
  /** `antler api`'s arguments for it. */
  readonly storeArgs: string[]
}

/** The kept stores given (a SQLite one must be named store.sqlite: what `antler api --data-dir` opens). */
export function keptStores(o: { readonly sqlite?: string; readonly postgres?: string }, dir: string): KeptStore[] {
  const stores: KeptStore[] = []
  const { sqlite, postgres } = o
  if (sqlite && basename(sqlite) !== 'store.sqlite')
    throw new Error(`--sqlite ${sqlite}: antler api opens DIR/store.sqlite; name the kept file store.sqlite`)
  if (sqlite)
    stores.push({
      label: 'SQLite',
      where: sqlite,
      open: async (readOnly) => openSqliteStore(sqlite, { readOnly }),
      storeArgs: ['--store', 'sqlite', '--data-dir', dirname(sqlite)],
    })
  if (postgres)
    stores.push({
      label: 'PostgreSQL',
      where: postgres,
      open: (readOnly) => openPostgresStore(postgres, { readOnly }),
      storeArgs: ['--store', postgres, '--data-dir', join(dir, 'pg-data')],
    })
  return stores
}
