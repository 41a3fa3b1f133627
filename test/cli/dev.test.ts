import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { ANTLER_BIN, spawnAntler } from '../_helpers/cli.ts'
import { tempDir } from '../_helpers/devchain.ts'

test('antler dev (npm start) runs the devchain with the demo workload and indexes it; the store verifies clean', async (t) => {
  const dataDir = tempDir(t)
  const cli = await spawnAntler(t, [
    'dev',
    '--data-dir',
    dataDir,
    '--chain-port',
    '0',
    '--ship-port',
    '0',
    '--block-time',
    '100',
  ])
  assert.ok(cli.ready.chainApi && cli.ready.ship && cli.ready.chainId)
  await new Promise((r) => setTimeout(r, 1500))
  cli.child.kill('SIGTERM')
  assert.equal(await cli.exited, 0, cli.stderr())

  const db = new Database(join(dataDir, 'store.sqlite'), { readonly: true })
  const transfers = db
    .prepare(
      "SELECT COUNT(*) AS n FROM actions WHERE account = 'eosio.token' AND name = 'transfer' AND receiver = 'eosio.token'",
    )
    .get() as { n: number }
  const blocks = db.prepare('SELECT COUNT(*) AS n FROM blocks').get() as { n: number }
  db.close()
  assert.ok(blocks.n > 10, `blocks indexed: ${blocks.n}`)
  assert.ok(transfers.n >= 5, `demo transfers indexed: ${transfers.n}`)
  const verify = spawnSync(process.execPath, [ANTLER_BIN, 'verify', '--data-dir', dataDir], { encoding: 'utf8' })
  assert.equal(verify.status, 0, verify.stdout)
})
