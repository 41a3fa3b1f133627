import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { TestContext } from 'node:test'
import { stopChild } from './child.ts'
import { onCleanup } from './cleanup.ts'

export const ANTLER_BIN = fileURLToPath(new URL('../../bin/antler.js', import.meta.url))

export interface RunningCli {
  readonly child: ChildProcessWithoutNullStreams
  readonly ready: Record<string, string>
  stdout(): string
  stderr(): string
  exited: Promise<number | null>
}

/** Spawns `antler …` and waits for its `antler ready {…}` line; stopped after the test (`stopChild`). */
export async function spawnAntler(
  t: TestContext,
  args: string[],
  env: Record<string, string> = {},
): Promise<RunningCli> {
  const child = spawn(process.execPath, [ANTLER_BIN, ...args], { env: { ...process.env, ...env } })
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
