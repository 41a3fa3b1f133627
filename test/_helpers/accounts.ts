import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { AntlerError } from '../../src/antelope/index.ts'
import { openSqliteStore, type Store } from '../../src/store/index.ts'
import { onCleanup } from './cleanup.ts'
import { tempDir } from './devchain.ts'

/*
 * Shared pieces of the portal accounts / usage / per-key limit unit tests: a real SQLite store in a fresh temporary
 * folder (closed before the folder is removed), a clock the test moves, and a check on an AntlerError's code.
 */

/** An hour boundary (and so a minute boundary): windows of a minute or an hour start on it. */
export const BASE_MS = 1_800_000_000_000

/** A clock moved by the test: pass `clock.now` where the code takes `now`. */
export interface FakeClock {
  ms: number
  readonly now: () => number
  advance(ms: number): void
}

export function fakeClock(startMs = BASE_MS): FakeClock {
  const clock: FakeClock = {
    ms: startMs,
    now: () => clock.ms,
    advance: (ms) => void (clock.ms += ms),
  }
  return clock
}

/** A real SQLite store in a fresh temporary folder, its file's path, and the folder. */
export function openTempStore(t: TestContext): { store: Store; path: string; dir: string } {
  const dir = tempDir(t, 'antler-accounts-')
  const path = join(dir, 'store.sqlite')
  const store = openSqliteStore(path)
  onCleanup(t, () => store.close())
  return { store, path, dir }
}

/** An `assert.rejects` / `assert.throws` check: an AntlerError with this code (and, given, these details). */
export const antlerError =
  (code: string, details?: Record<string, unknown>) =>
  (error: unknown): boolean => {
    if (!(error instanceof AntlerError)) throw error
    if (error.code !== code) throw new Error(`expected ${code}, got ${error.code}: ${error.message}`, { cause: error })
    for (const [k, v] of Object.entries(details ?? {}))
      if (error.details[k] !== v) throw new Error(`${code}: details.${k} is ${String(error.details[k])}, not ${v}`)
    return true
  }

/** What a promise settled with: its error (undefined when it fulfilled). */
export async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
    return undefined
  } catch (error) {
    return error
  }
}
