import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { ANTLER_BIN, envWithoutFlags, spawnAntler } from '../_helpers/cli.ts'
import { postJson, tempDir, withDevchain } from '../_helpers/devchain.ts'
import { startShipProxy } from '../_helpers/ship-proxy.ts'
import { until } from '../_helpers/store.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { stopChild } from '../_helpers/child.ts'

/** Runs `antler …` without blocking this process (the devchain it reads lives here); killed after `ms`. */
function run(
  args: string[],
  env: Record<string, string> = {},
  ms = 60_000,
): Promise<{ code: number | null; stdout: string; stderr: string; tookMs: number }> {
  const started = Date.now()
  const child = spawn(process.execPath, [ANTLER_BIN, ...args], { env: envWithoutFlags(env) })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  const timer = setTimeout(() => child.kill('SIGKILL'), ms)
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr, tookMs: Date.now() - started })
    }),
  )
}

interface LogLine {
  level: number
  msg: string
  err?: { code?: string; message: string; details?: Record<string, unknown> }
}
const fatalOf = (stderr: string): LogLine | undefined =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine)
    .find((l) => l.level === 60)

for (const command of ['index', 'serve'] as const) {
  test(`antler ${command} against a node whose history starts above the store's start exits 1 with ship_history_gap_error naming both blocks, after one session`, async (t) => {
    const devchain = await withDevchain(t, { libDepth: 3 })
    for (let i = 0; i < 40; i++) devchain.chain.produceBlock()
    const proxy = await startShipProxy(t, devchain.ship, { retainFrom: 30 })
    const dataDir = tempDir(t)
    const extra =
      command === 'serve' ? ['--chain-api', devchain.chainApi, '--port', '0', '--grpc-port', '0', '--no-auth'] : []
    const result = await run([command, '--ship', proxy.url, '--data-dir', dataDir, ...extra])
    assert.equal(result.code, 1, result.stderr)
    const fatal = fatalOf(result.stderr)
    assert.equal(fatal?.msg, 'indexer stopped', result.stderr)
    assert.equal(fatal.err?.code, 'ship_history_gap_error', result.stderr)
    assert.match(
      fatal.err.message,
      /starts at block 1, but the node reports its retained history starting at block 30.*--start-block 30/,
    )
    assert.ok(proxy.sessions() <= 2, `sessions: ${proxy.sessions()}`)
    assert.deepEqual(proxy.requests, [], 'no blocks were asked for')
  })
}

test('antler index against a node whose SHiP ABI has action_trace_v2 exits 1 with ship_protocol_error naming the type; the store holds no block', async (t) => {
  const devchain = await withDevchain(t)
  for (let i = 0; i < 5; i++) devchain.chain.produceBlock()
  const proxy = await startShipProxy(t, devchain.ship, {
    abi: (text) => {
      const abi = JSON.parse(text) as {
        variants: { name: string; types: string[] }[]
        structs: { name: string; fields: unknown[] }[]
      }
      abi.variants.find((v) => v.name === 'action_trace')!.types.push('action_trace_v2')
      abi.structs.push({
        name: 'action_trace_v2',
        fields: [
          ...abi.structs.find((s) => s.name === 'action_trace_v1')!.fields,
          { name: 'call_traces', type: 'bytes' },
        ],
      })
      return JSON.stringify(abi)
    },
  })
  const dataDir = tempDir(t)
  const result = await run(['index', '--ship', proxy.url, '--data-dir', dataDir])
  assert.equal(result.code, 1, result.stderr)
  const fatal = fatalOf(result.stderr)
  assert.equal(fatal?.err?.code, 'ship_protocol_error', result.stderr)
  assert.deepEqual(fatal.err.details, { types: ['action_trace_v2'] })
  const db = new Database(join(dataDir, 'store.sqlite'), { readonly: true })
  assert.equal((db.prepare('SELECT COUNT(*) AS n FROM blocks').get() as { n: number }).n, 0)
  db.close()
})

/** The highest block in a SQLite store, 0 when it has none (or no file yet). */
function storeHead(dataDir: string): number {
  try {
    const db = new Database(join(dataDir, 'store.sqlite'), { readonly: true, fileMustExist: true })
    try {
      return (db.prepare('SELECT MAX(num) AS n FROM blocks').get() as { n: number | null }).n ?? 0
    } finally {
      db.close()
    }
  } catch {
    return 0
  }
}

for (const how of ['--irreversible-only', 'ANTLER_IRREVERSIBLE_ONLY=1'] as const) {
  test(`antler index with ${how} stores blocks up to LIB and not one past it`, async (t) => {
    const devchain = await withDevchain(t, { libDepth: 5 })
    for (let i = 0; i < 30; i++) devchain.chain.produceBlock()
    const dataDir = tempDir(t)
    const args = ['index', '--ship', devchain.ship, '--data-dir', dataDir, ...(how.startsWith('--') ? [how] : [])]
    const child = spawn(process.execPath, [ANTLER_BIN, ...args], {
      env: envWithoutFlags(how.startsWith('--') ? {} : { ANTLER_IRREVERSIBLE_ONLY: '1' }),
    })
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    onCleanup(t, () => stopChild(child))
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
    const lib = devchain.chain.lib.blockNum
    assert.equal(lib, devchain.chain.head.num - 5)
    await until(() => storeHead(dataDir) === lib, 'the store to reach LIB', 30_000)
    await new Promise((r) => setTimeout(r, 1000))
    assert.equal(storeHead(dataDir), lib, 'nothing above LIB')
    devchain.chain.produceBlock()
    await until(() => storeHead(dataDir) === lib + 1, 'the next irreversible block', 30_000)
    child.kill('SIGTERM')
    assert.equal(await exited, 0, stderr)
  })
}

test('antler dev --irreversible-only is ready once the store reaches LIB and keeps the store at or below LIB', async (t) => {
  const dataDir = tempDir(t)
  const cli = await spawnAntler(
    t,
    [
      'dev',
      '--irreversible-only',
      '--data-dir',
      dataDir,
      '--chain-port',
      '0',
      '--ship-port',
      '0',
      '--port',
      '0',
      '--grpc-port',
      '0',
      '--block-time',
      '0',
      '--workload',
      'none',
      '--lib-depth',
      '3',
    ],
    envWithoutFlags(),
  )
  const produced = await postJson(`${cli.ready.chainApi}/v1/devchain/produce`, { blocks: 10 })
  assert.equal(produced.status, 200, JSON.stringify(produced.body))
  const info = (await (await fetch(`${cli.ready.chainApi}/v1/chain/get_info`)).json()) as {
    head_block_num: number
    last_irreversible_block_num: number
  }
  assert.equal(info.last_irreversible_block_num, info.head_block_num - 3)
  await until(() => storeHead(dataDir) === info.last_irreversible_block_num, 'the store to reach LIB', 30_000)
  await new Promise((r) => setTimeout(r, 500))
  assert.equal(storeHead(dataDir), info.last_irreversible_block_num, 'nothing above LIB')
  cli.child.kill('SIGTERM')
  assert.equal(await cli.exited, 0, cli.stderr())
})

test('index, serve and dev list --irreversible-only in their help', async () => {
  for (const command of ['index', 'serve', 'dev']) {
    const result = await run([command, '--help'])
    assert.match(result.stdout, /--irreversible-only\s+store only irreversible blocks/, command)
  }
})
