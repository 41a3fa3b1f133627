import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { TestContext } from 'node:test'
import { stopChild } from './child.ts'
import { onCleanup } from './cleanup.ts'
import { staleBuild } from '../../bin/build-state.js'

export const ANTLER_BIN = fileURLToPath(new URL('../../bin/antler.js', import.meta.url))

// Every antler a test spawns (this process's environment is theirs) runs the compiled dist/ when it is a build of the
// current sources (as after `npm ci`: what users run, and it starts in half the CPU), else the sources through tsx, so
// an edit is always tested. `ANTLER_FROM_SOURCE=1 npm test` runs the sources regardless. test/cli/build.test.ts runs a
// fresh build.
export const ANTLER_FROM_SOURCE = (process.env.ANTLER_FROM_SOURCE ??= staleBuild() === undefined ? '0' : '1')

/** This process's environment without the `ANTLER_*` variables that set flags (not ANTLER_FROM_SOURCE), plus `env`. */
export function envWithoutFlags(env: Record<string, string> = {}): Record<string, string> {
  const kept = Object.entries(process.env).filter(
    (entry): entry is [string, string] =>
      entry[1] !== undefined && (!entry[0].startsWith('ANTLER_') || entry[0] === 'ANTLER_FROM_SOURCE'),
  )
  return { ...Object.fromEntries(kept), ...env }
}

export interface RunningCli {
  readonly child: ChildProcessWithoutNullStreams
  readonly ready: Record<string, string>
  stdout(): string
  stderr(): string
  exited: Promise<number | null>
}

/**
 * Spawns `antler …` (`bin`: another copy's bin/antler.js) and waits for its `antler ready {…}` line; stopped after the
 * test (`stopChild`).
 */
export async function spawnAntler(
  t: TestContext,
  args: string[],
  env: Record<string, string> = {},
  bin = ANTLER_BIN,
): Promise<RunningCli> {
  const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env } })
  let stdout = ''
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  onCleanup(t, () => stopChild(child))
  const ready = await new Promise<Record<string, string>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line within 60 s; stderr: ${stderr}`)), 60_000)
    child.stdout.on('data', (d) => {
      stdout += d
      const line = stdout.split('\n').find((l) => l.startsWith('antler ready '))
      if (line) {
        clearTimeout(timer)
        resolve(JSON.parse(line.slice('antler ready '.length)))
      }
    })
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`exited ${code} before ready; stderr: ${stderr}`))
    })
  })
  return { child, ready, stdout: () => stdout, stderr: () => stderr, exited }
}
