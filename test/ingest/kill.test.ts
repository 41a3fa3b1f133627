import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { spawn, spawnSync } from 'node:child_process'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { pushSigned } from '../../src/devchain/index.ts'
import { createIndexer } from '../../src/ingest/index.ts'
import { openSqliteStore } from '../../src/store/index.ts'
import { ANTLER_BIN } from '../_helpers/cli.ts'
import { tempDir, withDevchain } from '../_helpers/devchain.ts'
import { dumpSqliteStore, seededRandom, until } from '../_helpers/store.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { stopChild } from '../_helpers/child.ts'

const SEED = Number(process.env.ANTLER_SEED ?? 7)
const KILLS = 22

/** No gap, no duplicate, every block links to the one before (what `antler verify` will check). */
function checkStore(path: string): { head: number } {
  const db = new Database(path, { readonly: true })
  try {
    const blocks = db.prepare('SELECT num, id, previous FROM blocks ORDER BY num').all() as {
      num: number
      id: string
      previous: string
    }[]
    blocks.forEach((b, i) => {
      assert.equal(b.num, i + 1, `no gap at ${b.num}`)
      if (i > 0) assert.equal(b.previous, blocks[i - 1].id, `block ${b.num} links`)
    })
    const orphans = db
      .prepare('SELECT COUNT(*) AS n FROM actions WHERE block_num NOT IN (SELECT num FROM blocks)')
      .get() as { n: number }
    assert.equal(orphans.n, 0, 'no action of a block that is not in the store')
    return { head: blocks.at(-1)?.num ?? 0 }
  } finally {
    db.close()
  }
}

test(`the indexer killed with SIGKILL ${KILLS} times (seed ${SEED}) loses and duplicates nothing`, async (t) => {
  const random = seededRandom(SEED)
  const devchain = await withDevchain(t, { libDepth: 5 })
  const dir = tempDir(t)
  const storePath = join(dir, 'store.sqlite')

  let producing = true
  onCleanup(t, () => (producing = false))
  const producer = (async () => {
    let step = 0
    while (producing) {
      const from = ['alice', 'bob', 'carol'][step % 3]
      pushSigned(devchain.chain, [
        {
          account: 'eosio.token',
          name: 'transfer',
          authorization: [{ actor: from, permission: 'active' }],
          data: { from, to: from === 'alice' ? 'bob' : 'alice', quantity: '0.0001 EOS', memo: `k${step}` },
        },
        {
          account: 'rawdb',
          name: 'put',
          authorization: [{ actor: 'rawdb', permission: 'active' }],
          data: {
            scope: 'k',
            table: 'rows',
            key: String(step % 16),
            payer: 'rawdb',
            value: (step & 0xff).toString(16).padStart(2, '0'),
          },
        },
      ])
      devchain.chain.produceBlock()
      const reversible = devchain.chain.head.num - devchain.chain.lib.blockNum
      if (reversible > 1 && random() < 0.1) devchain.chain.fork(1 + Math.floor(random() * Math.min(reversible, 4)))
      step++
      await new Promise((r) => setTimeout(r, 15))
    }
  })()

  const spawnIndexer = () => {
    const child = spawn(process.execPath, [ANTLER_BIN, 'index', '--ship', devchain.ship, '--data-dir', dir], {
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    onCleanup(t, () => stopChild(child))
    return child
  }
  // The first indexer runs until it has stored a block before it is killed: on a loaded machine
  // starting up can take longer than the kill delays (one full-suite run stored nothing in 22 kills).
  const firstStarted = Date.now()
  const first = spawnIndexer()
  const firstExited = new Promise((r) => first.once('exit', r))
  await until(
    () => {
      try {
        return existsSync(storePath) && checkStore(storePath).head > 0
      } catch {
        return false // the file exists before its schema does
      }
    },
    'the first indexer to store a block',
    60_000,
  )
  // Kills land from before to well after a process's start-up time, whatever the machine's load.
  const startupMs = Math.max(500, Date.now() - firstStarted)
  first.kill('SIGKILL')
  await firstExited
  let lastHead = 0
  for (let i = 0; i < KILLS; i++) {
    const child = spawnIndexer()
    const exited = new Promise((r) => child.once('exit', r))
    await new Promise((r) => setTimeout(r, startupMs * (0.5 + random() * 1.5)))
    child.kill('SIGKILL')
    await exited
    // On a loaded machine a kill can land before the process has created the store: nothing to check yet.
    if (!existsSync(storePath)) continue
    const { head } = checkStore(storePath)
    lastHead = Math.max(lastHead, head)
    const verify = spawnSync(process.execPath, [ANTLER_BIN, 'verify', '--data-dir', dir], { encoding: 'utf8' })
    assert.equal(verify.status, 0, `antler verify after kill ${i + 1}: ${verify.stdout}${verify.stderr}`)
  }
  producing = false
  await producer
  assert.ok(lastHead > 20, `the indexer made progress between kills (head ${lastHead})`)

  const final = spawnIndexer()
  const target = devchain.chain.head
  await until(
    () => {
      try {
        const db = new Database(storePath, { readonly: true })
        const head = (db.prepare("SELECT value FROM meta WHERE key = 'head'").get() as { value: string } | undefined)
          ?.value
        db.close()
        return head === `${target.num}:${target.id}`
      } catch {
        return false
      }
    },
    'the restarted indexer to reach head',
    60_000,
  )
  // The store may have reached head before this process started: let it start before stopping it.
  await new Promise((r) => setTimeout(r, 1500))
  final.kill('SIGTERM')
  assert.equal(await new Promise((r) => final.once('exit', r)), 0)
  checkStore(storePath)

  const freshPath = join(dir, 'fresh.sqlite')
  const fresh = openSqliteStore(freshPath)
  await createIndexer({ shipUrl: devchain.ship, store: fresh, endBlockNum: target.num }).run()
  await fresh.close()
  const liveDump = dumpSqliteStore(storePath)
  const freshDump = dumpSqliteStore(freshPath)
  for (const table of Object.keys(freshDump))
    assert.deepEqual(liveDump[table], freshDump[table], `table ${table} (seed ${SEED})`)
})
