import type { ChildProcess } from 'node:child_process'
import { within } from './cleanup.ts'

/** How long a child gets to stop on SIGTERM (antler's own shutdown gives up after 10 s) before SIGKILL. */
const GRACE_MS = 5_000
const KILL_WAIT_MS = 5_000

/**
 * Stops a child process and resolves once it has exited: SIGTERM, then SIGKILL if it has not exited
 * within `graceMs`. Throws if even SIGKILL does not end it within 5 s. A child that already exited
 * is left alone.
 */
export async function stopChild(child: ChildProcess, graceMs = GRACE_MS): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGTERM')
  const stopped = await within(exited, graceMs, 'SIGTERM').then(
    () => true,
    () => false,
  )
  if (stopped) return
  child.kill('SIGKILL')
  await within(exited, KILL_WAIT_MS, `process ${child.pid} after SIGKILL`)
}
