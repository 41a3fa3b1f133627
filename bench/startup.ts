import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildInstalledCopy } from '../test/_helpers/build.ts'
import { median } from './timing.ts'

const ANTLER = fileURLToPath(new URL('../bin/antler.js', import.meta.url))

/**
 * A preload that writes the process's peak RSS (KiB, all threads) and CPU time (ms, user + system, all threads) to the
 * file STARTUP_USAGE_FILE names, at exit. The peak is VmHWM on Linux, since getrusage's maxRSS keeps the high-water
 * mark of the spawning process across fork and exec (the bench's own RSS); maxRSS elsewhere. CPU time is the steadier
 * figure on a busy machine, where wall time mostly measures waiting for a core.
 */
const RECORD_USAGE = `data:text/javascript,${encodeURIComponent(`
import { readFileSync, writeFileSync } from 'node:fs'
const peakKiB = () => {
  try { return Number(/VmHWM:\\s+(\\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) }
  catch { return process.resourceUsage().maxRSS }
}
process.on('exit', () => {
  const { user, system } = process.cpuUsage()
  writeFileSync(process.env.STARTUP_USAGE_FILE, peakKiB() + ' ' + (user + system) / 1000)
})
`)}`

interface Start {
  readonly name: string
  readonly args: readonly string[]
  readonly env: Record<string, string>
}

interface Usage {
  readonly ms: number
  readonly cpuMs: number
  readonly rssMiB: number
}

/** One start to its end: wall time, CPU time (ms) and peak RSS (MiB). */
function startOnce(start: Start, usageFile: string): Usage {
  const started = performance.now()
  const run = spawnSync(process.execPath, ['--import', RECORD_USAGE, ...start.args], {
    encoding: 'utf8',
    env: { ...process.env, ...start.env, STARTUP_USAGE_FILE: usageFile },
    timeout: 60_000,
  })
  const ms = performance.now() - started
  if (run.status !== 0) throw new Error(`${start.name}: exit ${run.status ?? run.signal}: ${run.stderr}`)
  if (run.stderr !== '') throw new Error(`${start.name}: wrote on stderr: ${run.stderr}`)
  const [peakKiB, cpuMs] = readFileSync(usageFile, 'utf8').split(' ').map(Number)
  return { ms, cpuMs, rssMiB: peakKiB / 1024 }
}

/**
 * `npm run bench -- --only startup`: how long `antler --help` and `antler dev --help` take to start and end, their CPU
 * time and peak RSS, as users run them (the compiled build: a fresh build of the current sources into a temporary
 * install-like copy, so the tree's own dist/ need not be current) and through tsx (ANTLER_FROM_SOURCE=1, as the tests
 * run them). The same-run limit is `node -e 0`, Node's own start. Medians of `runs` rounds, the starts taking turns in
 * each round.
 */
export function benchStartup(runs: number, smoke = false): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'antler-bench-startup-'))
  try {
    const compiledBin = buildInstalledCopy(join(dir, 'copy'))
    const compiled = { ANTLER_FROM_SOURCE: '0' }
    const tsx = { ANTLER_FROM_SOURCE: '1' }
    const starts: Start[] = [
      { name: 'node -e 0 (limit)', args: ['-e', '0'], env: {} },
      { name: 'antler --help, compiled', args: [compiledBin, '--help'], env: compiled },
      { name: 'antler --help, through tsx', args: [ANTLER, '--help'], env: tsx },
      { name: 'antler dev --help, compiled', args: [compiledBin, 'dev', '--help'], env: compiled },
      { name: 'antler dev --help, through tsx', args: [ANTLER, 'dev', '--help'], env: tsx },
    ]
    const samples = starts.map((): Record<keyof Usage, number[]> => ({ ms: [], cpuMs: [], rssMiB: [] }))
    const usageFile = join(dir, 'usage')
    // One untimed round first (none under --smoke): the disk and tsx's transform caches are warm for each timed one.
    for (let round = smoke ? 1 : 0; round <= runs; round++)
      starts.forEach((start, i) => {
        const usage = startOnce(start, usageFile)
        if (round === 0) return
        for (const key of ['ms', 'cpuMs', 'rssMiB'] as const) samples[i][key].push(usage[key])
      })
    const nodeMs = median(samples[0].ms)
    return Object.fromEntries(
      starts.map((start, i) => {
        const ms = median(samples[i].ms)
        const ratio = i === 0 ? '' : ` (${(ms / nodeMs).toFixed(1)} × node -e 0)`
        const range = `${Math.min(...samples[i].ms).toFixed(0)}–${Math.max(...samples[i].ms).toFixed(0)}`
        const cpu = median(samples[i].cpuMs).toFixed(0)
        const figure = `median ${ms.toFixed(0)} ms wall${ratio}, range ${range} ms; CPU ${cpu} ms; peak RSS ${median(samples[i].rssMiB).toFixed(0)} MiB`
        return [`startup ${start.name}`, figure]
      }),
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
