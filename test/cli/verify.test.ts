import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { pushSigned } from '../../src/devchain/index.ts'
import { createIndexer } from '../../src/ingest/index.ts'
import { openSqliteStore } from '../../src/store/index.ts'
import { ANTLER_BIN } from '../_helpers/cli.ts'
import { tempDir, withDevchain } from '../_helpers/devchain.ts'

/** Runs `antler verify` without blocking this process (the devchain it asks lives here). */
function verify(
  dataDir: string,
  chainApi?: string,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const args = [
    ANTLER_BIN,
    'verify',
    '--data-dir',
    dataDir,
    ...(chainApi ? ['--chain-api', chainApi, '--samples', '10'] : []),
  ]
  return new Promise((resolve) => {
    execFile(process.execPath, args, { encoding: 'utf8' }, (error, stdout, stderr) =>
      resolve({ status: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    )
  })
}

test('antler verify is clean on a good store and names each corruption, exiting 1', async (t) => {
  const devchain = await withDevchain(t, { libDepth: 3 })
  for (let i = 0; i < 12; i++) {
    pushSigned(devchain.chain, [
      {
        account: 'rawdb',
        name: 'put',
        authorization: [{ actor: 'rawdb', permission: 'active' }],
        data: { scope: 'v', table: 'rows', key: String(i % 3), payer: 'rawdb', value: 'aa' },
      },
    ])
    devchain.chain.produceBlock()
  }
  const dataDir = tempDir(t)
  const store = openSqliteStore(join(dataDir, 'store.sqlite'))
  await createIndexer({ shipUrl: devchain.ship, store, endBlockNum: devchain.chain.head.num }).run()
  await store.close()

  const clean = await verify(dataDir, devchain.chainApi)
  assert.equal(clean.status, 0, clean.stdout + clean.stderr)
  assert.match(clean.stdout, /verify: clean \(head \d+, LIB \d+\)/)

  const db = new Database(join(dataDir, 'store.sqlite'))
  db.prepare("UPDATE blocks SET id = 'ff' || substr(id, 3) WHERE num = 4").run()
  db.prepare('DELETE FROM blocks WHERE num = 7').run()
  db.prepare(
    'INSERT INTO row_versions SELECT code, tbl, scope, pk, block_num + 1000, NULL, payer, value, first_block FROM row_versions WHERE valid_to IS NULL LIMIT 1',
  ).run()
  db.close()
  const dirty = await verify(dataDir, devchain.chainApi)
  assert.equal(dirty.status, 1)
  assert.match(dirty.stdout, /finding: gap in blocks after block 6/)
  assert.match(dirty.stdout, /finding: block 5 does not link to block 4/)
  assert.match(dirty.stdout, /finding: block 4 is ff.* in the store but .* on the chain/)
  assert.match(dirty.stdout, /has more than one current version/)
  assert.match(dirty.stdout, /row versions of block \d+, which is not in the store/)

  const missing = await verify(join(dataDir, 'nope'))
  assert.equal(missing.status, 1)
  assert.match(missing.stderr, /no store at/)
})
