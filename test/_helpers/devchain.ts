import type { TestContext } from 'node:test'
import { mkdtempSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startDevchain, type Devchain, type DevchainConfig } from '../../src/devchain/index.ts'
import { onCleanup } from './cleanup.ts'
import { openFilesUnder } from './open-files.ts'

/** A devchain on free ports (in memory, instant blocks, no workload unless overridden), closed after the test. */
export async function withDevchain(t: TestContext, overrides: Partial<DevchainConfig> = {}): Promise<Devchain> {
  const devchain = await startDevchain({
    dataDir: undefined,
    host: '127.0.0.1',
    chainPort: 0,
    shipPort: 0,
    blockTimeMs: 0,
    libDepth: 12,
    producers: 3,
    forkRate: 0,
    workload: 'none',
    onError: (error) => console.error('devchain error:', error),
    log: { warn: (fields, message) => console.error(message, fields), info: () => undefined },
    ...overrides,
  })
  onCleanup(t, () => devchain.close())
  return devchain
}

/**
 * A fresh temporary directory, removed after the test once everything registered with `onCleanup`
 * after it has stopped (stores, servers, processes writing into it). Closing those in `t.after`
 * instead would run after the removal: a file still open in the directory then fails the test.
 */
export function tempDir(t: TestContext, prefix = 'antler-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  onCleanup(t, async () => {
    const open = openFilesUnder(dir)
    await rm(dir, { recursive: true, force: true, maxRetries: 3 })
    if (open.length > 0)
      throw new Error(`${open.join(', ')} still open when its folder was removed: close it with onCleanup, not t.after`)
  })
  return dir
}

/** Posts JSON to the devchain and returns status and body. */
export async function postJson(url: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}
