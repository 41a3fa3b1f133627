import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { ANTLER_BIN, envWithoutFlags, spawnAntler } from '../_helpers/cli.ts'
import { stopChild } from '../_helpers/child.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { tempDir, withDevchain } from '../_helpers/devchain.ts'
import { until } from '../_helpers/store.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import { devArgs } from '../_helpers/platform.ts'

/** The flags of an `antler dev` on free ports with fast blocks, into `store` (a fresh data dir: a fresh devchain). */
const devArgsInto = (t: TestContext, store: string) => [...devArgs(tempDir(t, 'antler-history-')), '--store', store]

/** Runs `antler …` to its exit (killed after `ms`): exit code, output and how long it took. */
function runToExit(t: TestContext, args: string[], ms: number) {
  const started = Date.now()
  const child = spawn(process.execPath, [ANTLER_BIN, ...args], { env: envWithoutFlags() })
  onCleanup(t, () => stopChild(child))
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  const timer = setTimeout(() => child.kill('SIGKILL'), ms)
  return new Promise<{ code: number | null; stdout: string; stderr: string; tookMs: number }>((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr, tookMs: Date.now() - started })
    }),
  )
}

interface FatalLine {
  msg: string
  err?: { code?: string; message: string; details?: Record<string, unknown> }
}
const fatalOf = (stderr: string): FatalLine | undefined =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as FatalLine & { level: number })
    .find((l) => l.level === 60)

/** The store's meta rows (head, lib, chain_id). */
async function meta(url: string): Promise<Record<string, string>> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const rows = (await client.query<{ key: string; value: string }>('SELECT key, value FROM meta')).rows
    return Object.fromEntries(rows.map((r) => [r.key, r.value]))
  } finally {
    await client.end()
  }
}

/** Fills a fresh PostgreSQL store with a first `antler dev` (its own devchain) for a few seconds, then stops it. */
async function storeOfAnotherDevchain(t: TestContext): Promise<{ url: string; chainId: string }> {
  const url = await withPostgresDatabase(t)
  const first = await spawnAntler(t, devArgsInto(t, url), envWithoutFlags())
  // Past the LIB depth (12), so the store holds irreversible blocks.
  const deadline = Date.now() + 60_000
  while (Number((await meta(url)).lib ?? 0) < 20) {
    assert.ok(Date.now() < deadline, 'the first devchain reached LIB 20 within 60 s')
    await new Promise((r) => setTimeout(r, 200))
  }
  await stopChild(first.child)
  return { url, chainId: first.ready.chainId }
}

test(
  'antler dev on a PostgreSQL store another devchain filled exits 1 within 90 s with ship_history_mismatch_error (chain ids differ) before its ready line, the store untouched',
  { skip: PG_SKIP_REASON },
  async (t) => {
    const { url, chainId } = await storeOfAnotherDevchain(t)
    const before = await meta(url)
    assert.equal(before.chain_id, chainId, 'the store recorded the first devchain chain id')

    const second = await runToExit(t, devArgsInto(t, url), 90_000)
    assert.equal(second.code, 1, second.stderr)
    assert.ok(second.tookMs < 90_000, `exited after ${second.tookMs} ms`)
    assert.doesNotMatch(second.stdout, /antler ready/, 'no ready line')
    const fatal = fatalOf(second.stderr)
    assert.equal(fatal?.err?.code, 'ship_history_mismatch_error', second.stderr)
    assert.equal(fatal.err.details?.kind, 'chain_id')
    assert.equal(fatal.err.details?.storeId, chainId)
    assert.notEqual(fatal.err.details?.nodeId, chainId)
    assert.match(fatal.err.message, new RegExp(`chain id is [0-9a-f]{64} but the store holds chain ${chainId}`))
    assert.match(fatal.err.message, /Index into a fresh store .*or connect --ship to a node of the store's chain/)
    assert.deepEqual(await meta(url), before, 'nothing undone or written')
  },
)

test(
  "antler dev on another devchain's store that recorded no chain id (an older build's) exits 1 with ship_history_mismatch_error at the store's LIB, undoing nothing",
  { skip: PG_SKIP_REASON },
  async (t) => {
    const { url } = await storeOfAnotherDevchain(t)
    // As a store written before chain ids were recorded: only the blocks can tell the histories apart.
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    await client.query("DELETE FROM meta WHERE key = 'chain_id'")
    await client.end()
    const before = await meta(url)

    const second = await runToExit(t, devArgsInto(t, url), 90_000)
    assert.equal(second.code, 1, second.stderr)
    assert.ok(second.tookMs < 90_000, `exited after ${second.tookMs} ms`)
    const fatal = fatalOf(second.stderr)
    assert.equal(fatal?.err?.code, 'ship_history_mismatch_error', second.stderr)
    assert.equal(fatal.err.details?.kind, 'block')
    const lib = Number(before.lib)
    assert.equal(fatal.err.details?.storeLib, lib)
    assert.ok(Number(fatal.err.details?.blockNum) <= lib, JSON.stringify(fatal.err.details))
    assert.notEqual(fatal.err.details?.storeId, fatal.err.details?.nodeId)
    assert.match(fatal.err.message, /the node's block \d+ is [0-9a-f]{64} but the store's block \d+ is [0-9a-f]{64}/)
    assert.doesNotMatch(second.stderr, /fork undone/, 'no reversible block was undone either')
    assert.deepEqual(await meta(url), before, 'the store is as it was')
  },
)

test("antler index on a store another chain's node filled exits 1 with ship_history_mismatch_error naming both chain ids", async (t) => {
  const first = await withDevchain(t)
  const other = await withDevchain(t)
  for (let i = 0; i < 20; i++) first.chain.produceBlock()
  for (let i = 0; i < 20; i++) other.chain.produceBlock()
  const dataDir = tempDir(t)
  const index = (ship: string) => ['index', '--ship', ship, '--data-dir', dataDir, '--log-level', 'warn']
  // The first node's blocks, then a stop (antler index follows forever; SIGTERM ends it with exit 0).
  const filling = spawn(process.execPath, [ANTLER_BIN, ...index(first.ship)], { env: envWithoutFlags() })
  onCleanup(t, () => stopChild(filling))
  await until(() => {
    const file = join(dataDir, 'store.sqlite')
    if (!existsSync(file)) return false
    const db = new Database(file, { readonly: true })
    try {
      return !!(
        db.prepare("SELECT value FROM meta WHERE key = 'head'").pluck().get() as string | undefined
      )?.startsWith(`${first.chain.head.num}:`)
    } catch {
      return false
    } finally {
      db.close()
    }
  }, 'the first node indexed')
  await stopChild(filling)

  const refused = await runToExit(t, index(other.ship), 60_000)
  assert.equal(refused.code, 1, refused.stderr)
  const fatal = fatalOf(refused.stderr)
  assert.equal(fatal?.err?.code, 'ship_history_mismatch_error', refused.stderr)
  assert.deepEqual([fatal.err.details?.storeId, fatal.err.details?.nodeId], [first.chainId, other.chainId])
})
