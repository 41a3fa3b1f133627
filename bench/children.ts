import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

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
