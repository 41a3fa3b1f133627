import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { REPO_ROOT } from '../_helpers/source-tree.ts'
import { ANTLER_FROM_SOURCE } from '../_helpers/cli.ts'

/** The whole smoke's bound: about 2 minutes on a quiet 2-core machine with the PostgreSQL benches, 4 to 5 when busy. */
const TIMEOUT_MS = 8 * 60_000

// Every bench on a tiny workload (`npm run bench -- --smoke`, bench/smoke.ts): a bench that throws, fails, or prints a
// figure that is NaN, missing or zero fails it, so no bench rots unseen. The PostgreSQL benches run when ANTLER_TEST_PG
// is set and are reported skipped otherwise.
test(
  'npm run bench -- --smoke: every bench prints its figures on a tiny workload',
  { timeout: TIMEOUT_MS },
  async (t) => {
    // The antlers the benches start run dist/ when it is current: the smoke's figures measure nothing, so it may.
    const env = { ...process.env, ANTLER_FROM_SOURCE }
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'bench/run.ts'), '--smoke'], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk))
    const timer = setTimeout(() => child.kill('SIGTERM'), TIMEOUT_MS - 30_000)
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
    clearTimeout(timer)
    const verdicts = out.split('\n').filter((line) => line.startsWith('smoke: ') || line.startsWith('  '))
    for (const line of verdicts.filter((l) => l.startsWith('smoke: '))) t.diagnostic(line)
    const skipped = /skipped \(no PostgreSQL\): (.*);/.exec(out)?.[1]
    if (skipped) t.diagnostic(`skipped without ANTLER_TEST_PG: ${skipped}`)
    assert.equal(code, 0, `the smoke failed (exit ${code}):\n${verdicts.join('\n')}\n${err.slice(-3000)}`)
    assert.match(out, /^smoke: every bench ok/m)
  },
)
