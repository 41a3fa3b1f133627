import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { ANTLER_BIN, envWithoutFlags } from '../_helpers/cli.ts'
import { tempDir, withDevchain } from '../_helpers/devchain.ts'
import { until } from '../_helpers/store.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { stopChild } from '../_helpers/child.ts'

test('antler index takes ANTLER_SHIP and ANTLER_START_BLOCK, logs JSON lines on stderr (stdout stays empty) and exits 0 on SIGTERM', async (t) => {
  const devchain = await withDevchain(t)
  for (let i = 0; i < 20; i++) devchain.chain.produceBlock()
  const dataDir = tempDir(t)
  const child = spawn(process.execPath, [ANTLER_BIN, 'index', '--data-dir', dataDir], {
    env: envWithoutFlags({ ANTLER_SHIP: devchain.ship, ANTLER_START_BLOCK: '5', ANTLER_LOG_LEVEL: 'debug' }),
  })
  onCleanup(t, () => stopChild(child))
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const file = join(dataDir, 'store.sqlite')
  await until(
    () => {
      try {
        const db = new Database(file, { readonly: true, fileMustExist: true })
        try {
          return (
            (db.prepare('SELECT MAX(num) AS n FROM blocks').get() as { n: number | null }).n === devchain.chain.head.num
          )
        } finally {
          db.close()
        }
      } catch {
        return false
      }
    },
    'the indexer to reach head',
    20_000,
  )
  child.kill('SIGTERM')
  assert.equal(await exited, 0, stderr)

  const db = new Database(file, { readonly: true })
  const first = db.prepare('SELECT MIN(num) AS n FROM blocks').get() as { n: number }
  db.close()
  assert.equal(first.n, 5, 'ANTLER_START_BLOCK=5 was taken')
  assert.equal(stdout, '')
  const lines = stderr
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { level: number; msg: string; url?: string; signal?: string })
  assert.deepEqual(
    lines.map((l) => l.msg).filter((m) => m !== 'ship disconnected'),
    ['ship connected', 'shutting down'],
  )
  assert.equal(lines[0].url, devchain.ship)
  assert.equal(lines[1].signal, 'SIGTERM')
  for (const line of lines) assert.match(line.msg, /^[a-z ]+$/, 'fixed lowercase messages')
})
