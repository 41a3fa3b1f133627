import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import Database from 'better-sqlite3'
import pg from 'pg'
import { ABI, PrivateKey } from '@wharfkit/antelope'
import { encodeAbiBinary, toHex } from '../../src/antelope/index.ts'
import {
  chainAbiOf,
  keyAuthority,
  rawdb,
  RAWDB_ABI,
  signTransaction,
  token,
  type ActionToSign,
  type Devchain,
} from '../../src/devchain/index.ts'
import { createIndexer, type Indexer } from '../../src/ingest/index.ts'
import { openPostgresStore, openSqliteStore, type Store } from '../../src/store/index.ts'
import { ANTLER_BIN } from '../_helpers/cli.ts'
import { tempDir, withDevchain } from '../_helpers/devchain.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import { dumpPostgresStore, dumpSqliteStore } from '../_helpers/store.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { stopChild } from '../_helpers/child.ts'

/**
 * Crash atomicity at every write boundary (src/store/failpoints.ts). One `antler index` process
 * after another is started with ANTLER_FAILPOINT set and dies there (SIGKILL, no cleanup); each
 * crash must leave the store at a block boundary, the next process resumes from it, and in the
 * end the store equals, table by table and step by step, a store indexed by an indexer that never
 * crashed, fed the same chain in the same phases.
 *
 * Why the step log can be compared exactly: a step is written only inside the transaction of
 * the write it records, and its content depends only on the blocks written and the LIB SHiP
 * reported with them. The chain never changes while an indexer reads it (every block and fork is
 * made while no indexer reads, or, for the fork, while the only one reading is about to die at
 * its undo, before it writes anything of the new branch), so every indexer sees the same LIB with
 * the same block, and batch boundaries do not change steps (write-steps.ts). The one legitimate
 * difference: PostgreSQL's sequences are not transactional, so a step insert rolled back by a
 * crash still used its seq numbers; there the steps are compared in seq order without the numbers.
 * SQLite's are compared with their numbers (and its AUTOINCREMENT counter).
 */

/**
 * Blocks produced before any indexer starts. Blocks more than 100 behind head are written 50 to a
 * transaction, so an indexer starting at block 1 writes 1–50, then 51–70 (where it comes within
 * 100 of head), then one block per write.
 */
const CHAIN_HEAD = 170

/** Pushes unsigned actions as the chain builder does (signing and recovering keys cost 30 ms a transaction). */
function pushUnsigned(devchain: Devchain, actions: readonly ActionToSign[]): void {
  const { chain } = devchain
  const lib = chain.block(chain.lib.blockNum)!
  const ref = { blockNum: lib.num, blockId: lib.id, slot: Math.max(lib.slot, chain.head.slot) }
  chain.pushTrusted(
    signTransaction({
      chainId: chain.chainId,
      ref,
      actions,
      abiOf: (account) =>
        account === 'eosio.token' ? token.abi : account === 'rawdb' ? rawdb.abi : chainAbiOf(chain, account),
      keys: [],
    }),
  )
}

const KEYS = Array.from({ length: 5 }, () => PrivateKey.generate('K1').toPublic().toString())

/** Deterministic per step: transfers, rows written and erased, permissions, links and ABIs. */
function workload(devchain: Devchain, step: number): void {
  const users = ['alice', 'bob', 'carol']
  const asRawdb = [{ actor: 'rawdb', permission: 'active' }]
  const from = users[step % 3]
  const batches: ActionToSign[][] = [
    [
      {
        account: 'eosio.token',
        name: 'transfer',
        authorization: [{ actor: from, permission: 'active' }],
        data: { from, to: users[(step + 1) % 3], quantity: '0.0001 EOS', memo: `f${step}` },
      },
      {
        account: 'rawdb',
        name: 'put',
        authorization: asRawdb,
        data: {
          scope: step % 2 ? 'a' : 'b',
          table: 'rows',
          key: String(step % 12),
          payer: 'rawdb',
          value: toHex(new Uint8Array([step & 0xff, 7])),
        },
      },
    ],
  ]
  if (step % 9 === 4)
    batches.push([
      {
        account: 'rawdb',
        name: 'erase',
        authorization: asRawdb,
        data: { scope: step % 2 ? 'b' : 'a', table: 'rows', key: String((step + 5) % 12) },
      },
    ])
  if (step % 7 === 3) {
    const key = KEYS[step % KEYS.length]
    batches.push([
      {
        account: 'eosio',
        name: 'updateauth',
        authorization: [{ actor: from, permission: 'active' }],
        data: {
          account: from,
          permission: `p${step % 4}`,
          parent: 'active',
          auth: { ...keyAuthority(key), keys: [{ key, weight: 1 }] },
        },
      },
    ])
  }
  if (step % 11 === 5)
    batches.push([
      {
        account: 'eosio',
        name: 'linkauth',
        authorization: [{ actor: from, permission: 'active' }],
        data: { account: from, code: 'rawdb', type: step % 2 ? 'put' : 'erase', requirement: 'active' },
      },
    ])
  if (step % 17 === 8) {
    const abi = ABI.from({
      ...RAWDB_ABI,
      structs: [...RAWDB_ABI.structs, { name: `row${step}`, base: '', fields: [{ name: 'v', type: 'uint8' }] }],
    })
    batches.push([
      {
        account: 'eosio',
        name: 'setabi',
        authorization: asRawdb,
        data: { account: 'rawdb', abi: toHex(encodeAbiBinary(abi)) },
      },
    ])
  }
  for (const actions of batches) {
    try {
      pushUnsigned(devchain, actions)
    } catch {
      // e.g. erasing a row that is not there, or a link that already exists: refused by the chain.
    }
  }
  devchain.chain.produceBlock()
}

type Dump = Record<string, unknown>

/**
 * Blocks stored without all of their transactions or actions (what `antler verify` does not
 * check): a crash must leave every stored block whole, not only the head marker on the last one.
 */
const INCOMPLETE_BLOCKS = `SELECT b.num FROM blocks b
  WHERE b.trx_count <> (SELECT COUNT(*) FROM transactions t WHERE t.block_num = b.num AND t.block_index >= 0)
     OR b.action_count <> (SELECT COUNT(*) FROM actions a WHERE a.block_num = b.num)
  ORDER BY b.num LIMIT 20`

/** A store for `antler index` and for the reference indexer, read from the test. */
interface Backing {
  readonly indexArgs: string[]
  open(readOnly: boolean): Promise<Store>
  incompleteBlocks(): Promise<number[]>
  /** Every table of the store (failing on one the dump does not know how to compare). */
  dump(): Promise<Dump>
}

/**
 * The helper compares postings as entries, since how writes cut them into chunks is not what must
 * match. Here the chunks must match too: on an unchanging chain, where a write ends depends only
 * on where it starts, and every process starts on the boundary of a write the others made too.
 */
const POSTING_CHUNKS = 'SELECT * FROM postings ORDER BY term_key, last_seq'

/** Tables compared beyond the data tables and postings of test/_helpers/store.ts, and how. */
const EXTRA_TABLES: Record<string, 'rows' | 'steps' | 'names'> = {
  meta: 'rows',
  steps: 'steps',
  forked_transactions: 'rows',
  forked_blocks: 'rows',
  api_keys: 'rows',
  webhooks: 'rows',
  webhook_attempts: 'rows',
  webhook_lease: 'rows',
  accounts: 'rows',
  portal_sessions: 'rows',
  audit_log: 'rows',
  key_usage: 'rows',
  portal_setup: 'rows',
  // Server secrets are random per store, made when its schema is created: not ingest's to match.
  secrets: 'names',
  // SQLite's AUTOINCREMENT counter of `steps`: it must not run ahead after a crash either.
  sqlite_sequence: 'rows',
}

/**
 * Checks that every table was dumped and puts the rows of each in one order: the helper orders by
 * the first four columns, which leaves the versions of one contract row (key + block_num) in
 * whatever order PostgreSQL reads them, and that differs between two stores written differently.
 */
function completeDump(tables: string[], dump: Dump): Dump {
  assert.deepEqual(
    tables.filter((t) => !(t in dump)),
    [],
    'every table of the store is compared',
  )
  const text = (row: unknown) => JSON.stringify(row, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))
  for (const table of Object.keys(dump).filter((x) => x !== 'steps' && x !== 'postings')) {
    const rows = (dump[table] as unknown[]).map((row) => ({ row, key: text(row) }))
    dump[table] = rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map((x) => x.row)
  }
  return dump
}

const ordered = (columns: number) => Array.from({ length: columns }, (_, i) => i + 1).join(', ')

async function sqliteBacking(t: TestContext, label: string): Promise<Backing> {
  const dataDir = join(tempDir(t), label)
  mkdirSync(dataDir)
  const path = join(dataDir, 'store.sqlite')
  return {
    indexArgs: ['--store', 'sqlite', '--data-dir', dataDir],
    open: async (readOnly) => openSqliteStore(path, { readOnly }),
    async incompleteBlocks() {
      const db = new Database(path, { readonly: true })
      try {
        return (db.prepare(INCOMPLETE_BLOCKS).all() as { num: number }[]).map((r) => r.num)
      } finally {
        db.close()
      }
    },
    async dump() {
      const dump: Dump = dumpSqliteStore(path)
      const db = new Database(path, { readonly: true })
      try {
        dump['postings (chunks)'] = db.prepare(POSTING_CHUNKS).all()
        const tables = (
          db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]
        ).map((r) => r.name)
        for (const table of tables.filter((x) => !(x in dump) && x in EXTRA_TABLES)) {
          const columns = (db.prepare(`SELECT * FROM ${table} LIMIT 0`).columns() as unknown[]).length
          const how = EXTRA_TABLES[table]
          if (how === 'names') dump[table] = db.prepare(`SELECT name FROM ${table} ORDER BY name`).all()
          else
            dump[table] = db
              .prepare(`SELECT * FROM ${table} ORDER BY ${how === 'steps' ? 'seq' : ordered(columns)}`)
              .all()
        }
        return completeDump(tables, dump)
      } finally {
        db.close()
      }
    },
  }
}

async function postgresBacking(t: TestContext): Promise<Backing> {
  const url = await withPostgresDatabase(t)
  return {
    indexArgs: ['--store', url],
    open: (readOnly) => openPostgresStore(url, { readOnly }),
    async incompleteBlocks() {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        return (await client.query<{ num: string }>(INCOMPLETE_BLOCKS)).rows.map((r) => Number(r.num))
      } finally {
        await client.end()
      }
    },
    async dump() {
      const dump: Dump = await dumpPostgresStore(url)
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        dump['postings (chunks)'] = (await client.query(POSTING_CHUNKS)).rows
        const listed = await client.query<{ name: string }>(
          "SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition",
        )
        const tables = listed.rows.map((r) => r.name)
        for (const table of tables.filter((x) => !(x in dump) && x in EXTRA_TABLES)) {
          const how = EXTRA_TABLES[table]
          if (how === 'names') dump[table] = (await client.query(`SELECT name FROM ${table} ORDER BY name`)).rows
          // Seq numbers used by a transaction a crash rolled back are not given back (see above).
          else if (how === 'steps')
            dump[table] = (await client.query('SELECT type, block_num, block_id FROM steps ORDER BY seq')).rows
          else {
            const columns = (await client.query(`SELECT * FROM ${table} LIMIT 0`)).fields.length
            dump[table] = (await client.query(`SELECT * FROM ${table} ORDER BY ${ordered(columns)}`)).rows
          }
        }
        return completeDump(tables, dump)
      } finally {
        await client.end()
      }
    },
  }
}

/** One crash: the failpoint, whether it must land in a multi-block (catch-up) write, and what the chain does first. */
interface Crash {
  readonly failpoint: string
  readonly batch?: boolean
  /** Runs once the store has caught up with the chain, while the process is still running. */
  readonly whenCaughtUp?: () => void
}

/** Where a crash must leave the store: the head before the dying write, or the one it committed. */
function expectedHead(failpoint: string, first: number, last: number): number {
  const name = failpoint.split(':')[0]
  if (name === 'after-commit') return last
  if (name === 'undo-after-commit') return first - 1
  if (name.startsWith('undo-')) return last
  return first - 1
}

const ADAPTERS: { name: string; skip: string | false; make: (t: TestContext, label: string) => Promise<Backing> }[] = [
  { name: 'sqlite', skip: false, make: sqliteBacking },
  { name: 'postgres', skip: PG_SKIP_REASON, make: (t) => postgresBacking(t) },
]

async function crashAtEveryFailpoint(t: TestContext, adapter: (typeof ADAPTERS)[number]): Promise<void> {
  assert.equal(
    process.env.ANTLER_FAILPOINT,
    undefined,
    'ANTLER_FAILPOINT would arm the reference indexer in this process',
  )
  const started = Date.now()
  const note = (what: string) =>
    t.diagnostic(`${adapter.name} ${((Date.now() - started) / 1000).toFixed(1)} s: ${what}`)
  const devchain = await withDevchain(t, { libDepth: 12 })
  let step = 0
  while (devchain.chain.head.num < CHAIN_HEAD) workload(devchain, step++)
  const live = await adapter.make(t, 'live')
  const reference = await adapter.make(t, 'reference')
  const referenceStore = await reference.open(false)
  // The reference indexes the same chain in the same phases, in this process, never crashing.
  let referenceIndexer: Indexer | undefined
  const referencePhase = (endBlockNum: number) => {
    referenceIndexer = createIndexer({ shipUrl: devchain.ship, store: referenceStore, endBlockNum })
    const running = referenceIndexer.run()
    running.catch(() => undefined) // awaited (and thrown) before it matters
    return running
  }
  onCleanup(t, async () => {
    await referenceIndexer?.stop() // still running when the test failed early
    await referenceStore.close()
  })
  note('chain built')
  let referenceRun = referencePhase(CHAIN_HEAD)
  let forkBlockNum = 0

  const crashes: Crash[] = [
    // From block 1: dies inside the second write (51–70), after its first records.
    { failpoint: 'between-statements:2', batch: true },
    // Resumes at 51: dies once 51–70 committed.
    { failpoint: 'after-commit:1', batch: true },
    // Near head, one block per write: dies before the third one (73) commits.
    { failpoint: 'before-commit:3', batch: false },
    {
      failpoint: 'undo-before-commit:1',
      whenCaughtUp: () => {
        // Three stored blocks are replaced by a longer branch, then the chain goes on.
        forkBlockNum = devchain.chain.fork(3).fork_block_num
        for (let i = 0; i < 4; i++) workload(devchain, step++)
      },
    },
    { failpoint: 'undo-between-statements:1' },
    { failpoint: 'undo-after-commit:1' },
  ]

  let liveRead: Store | undefined
  onCleanup(t, () => liveRead?.close())
  const liveHead = async () => {
    try {
      liveRead ??= await live.open(true)
      return (await liveRead.position())?.head
    } catch {
      return undefined // the first process has not created the store yet
    }
  }
  const spawnIndexer = (failpoint?: string) => {
    const env = { ...process.env, ANTLER_FAILPOINT: failpoint }
    if (!failpoint) delete env.ANTLER_FAILPOINT
    const child = spawn(
      process.execPath,
      [ANTLER_BIN, 'index', '--ship', devchain.ship, ...live.indexArgs, '--log-level', 'warn'],
      { env, stdio: ['ignore', 'ignore', 'pipe'] },
    )
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined
    const exited = new Promise<NonNullable<typeof exit>>((resolve) =>
      child.once('exit', (code, signal) => resolve((exit = { code, signal }))),
    )
    onCleanup(t, () => stopChild(child))
    /** Waits for the store to reach the chain's head; fails at once should the process exit first. */
    const catchUp = async (what: string) => {
      const target = devchain.chain.head.id
      const deadline = Date.now() + 60_000
      while ((await liveHead())?.blockId !== target) {
        if (exit)
          throw new Error(
            `${what}: the process exited (${exit.code ?? exit.signal}) before the store reached head; stderr: ${stderr}`,
          )
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
        await new Promise((r) => setTimeout(r, 20))
      }
    }
    return { child, exited, stderr: () => stderr, catchUp }
  }

  for (const crash of crashes) {
    const run = spawnIndexer(crash.failpoint)
    if (crash.whenCaughtUp) {
      await referenceRun
      await run.catchUp(`the process armed with ${crash.failpoint} to catch up`)
      crash.whenCaughtUp()
      referenceRun = referencePhase(devchain.chain.head.num)
    }
    const timeout = setTimeout(() => run.child.kill('SIGKILL'), 60_000)
    const { code, signal } = await run.exited
    clearTimeout(timeout)
    const said = /antler failpoint (\S+) reached in the write of blocks (\d+)\.\.(\d+)/.exec(run.stderr())
    assert.ok(
      said && signal === 'SIGKILL',
      `died at ${crash.failpoint} (exit ${code}, signal ${signal}); stderr: ${run.stderr()}`,
    )
    assert.equal(said[1], crash.failpoint)
    const [first, last] = [Number(said[2]), Number(said[3])]
    if (crash.batch !== undefined)
      assert.equal(
        last > first,
        crash.batch,
        `${crash.failpoint} in a ${crash.batch ? 'multi' : 'single'}-block write (${first}..${last})`,
      )
    if (crash.failpoint.startsWith('undo-')) assert.equal(first, forkBlockNum, 'the undo of the forked blocks')
    const head = await liveHead()
    assert.equal(
      head?.blockNum,
      expectedHead(crash.failpoint, first, last),
      `the store after dying at ${crash.failpoint} in the write of ${first}..${last}`,
    )
    assert.deepEqual(await liveRead!.integrityFindings(), [], `integrity after ${crash.failpoint}`)
    assert.deepEqual(await live.incompleteBlocks(), [], `blocks missing records after ${crash.failpoint}`)
    note(`died at ${crash.failpoint} in the write of ${first}..${last}`)
  }

  // Restarted without a failpoint, it catches up; then it stops cleanly.
  const final = spawnIndexer()
  const target = devchain.chain.head
  await final.catchUp('the restarted indexer to reach head')
  final.child.kill('SIGTERM')
  assert.equal((await final.exited).code, 0, final.stderr())
  await referenceRun
  assert.equal((await referenceStore.position())?.head.blockId, target.id)

  note('caught up')
  assert.deepEqual(await liveRead!.integrityFindings(), [])
  assert.deepEqual(await live.incompleteBlocks(), [])
  assert.deepEqual(await reference.incompleteBlocks(), [])
  const liveDump = await live.dump()
  const referenceDump = await reference.dump()
  assert.deepEqual(Object.keys(liveDump).sort(), Object.keys(referenceDump).sort())
  const differing = Object.keys(referenceDump).filter(
    (table) => !isDeepStrictEqual(liveDump[table], referenceDump[table]),
  )
  for (const table of differing)
    assert.deepEqual(
      liveDump[table],
      referenceDump[table],
      `tables differing: ${differing.join(', ')}; first: ${table}`,
    )
  // The chain exercised what the store writes, and the fork was undone.
  const rows = referenceDump as Record<string, unknown[]>
  assert.ok(
    rows.row_versions.length > 100 &&
      rows.permission_versions.length > 10 &&
      rows.link_versions.length > 0 &&
      rows.abi_versions.length > 3 &&
      rows.postings.length > 1000,
  )
  assert.ok(
    rows.forked_transactions.length > 0 && rows.forked_blocks.length === 3,
    'the fork undid transactions, and kept the content of its three blocks',
  )
  const types = new Set((rows.steps as { type: string }[]).map((s) => s.type))
  assert.deepEqual([...types].sort(), ['irreversible', 'new', 'undo'])
  note('compared')
}

// The adapters run side by side: most of the time is processes starting, on one core each.
test(
  'a crash at any failpoint leaves a block boundary, and the restarted store equals one that never crashed, step log included',
  { concurrency: true },
  async (t) => {
    await Promise.all(
      ADAPTERS.map((adapter) => t.test(adapter.name, { skip: adapter.skip }, (t) => crashAtEveryFailpoint(t, adapter))),
    )
  },
)
