import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { openPostgresStore, openSqliteStore, type Store } from '../../src/store/index.ts'
import { tempDir } from '../_helpers/devchain.ts'
import { tempSqliteFile } from '../_helpers/store.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import { ModelChain, assertEveryHeight, runFirstBlockContract, type RowWrite } from './contract/first-block-contract.ts'

runFirstBlockContract('sqlite', async (t) => {
  const open = tempSqliteFile(t)
  return { open: async () => open() }
})

runFirstBlockContract(
  'postgres',
  async (t) => {
    const url = await withPostgresDatabase(t)
    return { open: () => openPostgresStore(url) }
  },
  PG_SKIP_REASON,
)

/** A store backing for the upgrade test, with SQL on its database as an operator would run it. */
interface UpgradeBacking {
  open(): Promise<Store>
  openReadOnly(): Promise<Store>
  /** Runs statements, one at a time. */
  exec(statements: string[]): Promise<void>
  /** The first column of a query's first row. */
  value(sql: string): Promise<unknown>
}

const w = (scope: string, pk: number, value: number | undefined): RowWrite => ({ scope, pk, value })
const LIB = 6
/** Versions whose first block is missing or not their key's first version. */
const WRONG_FIRST_BLOCK = (versions: string) => `SELECT count(*) FROM row_versions v WHERE (${versions})
  AND coalesce(v.first_block, -1) <> (SELECT min(p.block_num) FROM row_versions p WHERE p.code = v.code AND p.tbl = v.tbl AND p.scope = v.scope AND p.pk = v.pk)`

/**
 * A store written at version 6, taken back to version 5's layout (no column, no index), opened
 * by a writer: the column is filled on the versions that are or may become current, reads match
 * a replay at every height, and so do they after an undo into the blocks above LIB.
 */
async function upgradeFromVersion5(backing: UpgradeBacking): Promise<void> {
  const chain = new ModelChain()
  const history: RowWrite[][] = [
    [w('grown', 1, 1), w('grown', 2, 1), w('alice', 50, 1), w('alice', 60, 1)],
    [w('alice', 50, 2)],
    [w('alice', 70, 3)],
    ...[4, 5, 6].map((b) => Array.from({ length: 20 }, (_, i) => w('grown', 1000 - b * 20 - i, b))),
    [w('alice', 80, 7)],
    [w('alice', 70, 8)],
    [w('alice', 60, undefined)],
    [w('alice', 80, 10), w('grown', 2, 10)],
  ]
  const writer = await backing.open()
  for (const rows of history) await writer.applyBlock(chain.block(rows), Math.max(0, chain.head - 4))
  assert.equal((await writer.position())?.lib, LIB)
  await writer.close()
  await backing.exec([
    "UPDATE meta SET value = '5' WHERE key = 'schema_version'",
    'DROP INDEX row_versions_born',
    'ALTER TABLE row_versions DROP COLUMN first_block',
  ])
  await assert.rejects(
    backing.openReadOnly(),
    /has schema version 5, this build reads 8; open it once with antler dev, serve or index to upgrade it$/,
  )

  const upgraded = await backing.open()
  try {
    assert.equal(await backing.value("SELECT value FROM meta WHERE key = 'schema_version'"), '8')
    assert.equal(
      Number(await backing.value(WRONG_FIRST_BLOCK(`v.valid_to IS NULL OR v.valid_to > ${LIB}`))),
      0,
      'current and reopenable versions carry their first block',
    )
    assert.equal(
      Number(await backing.value(`SELECT count(*) FROM row_versions WHERE valid_to <= ${LIB} AND first_block IS NULL`)),
      1,
      'a version closed at or below LIB is left as it was',
    )
    await assertEveryHeight(upgraded, chain, 'upgraded')
    // Undo reopens versions closed above LIB (written before the upgrade), then new versions take their first block.
    await upgraded.undoFrom(8)
    chain.undoFrom(8)
    await assertEveryHeight(upgraded, chain, 'upgraded, after an undo')
    await upgraded.applyBlock(chain.block([w('alice', 60, 18), w('alice', 70, 18), w('grown', 3, 18)]), LIB)
    await upgraded.applyBlock(chain.block([w('alice', 70, undefined), w('grown', 500, 19)]), LIB)
    await assertEveryHeight(upgraded, chain, 'upgraded, on a new branch')
    assert.equal(Number(await backing.value(WRONG_FIRST_BLOCK(`v.valid_to IS NULL OR v.valid_to > ${LIB}`))), 0)
    const reader = await backing.openReadOnly()
    await assertEveryHeight(reader, chain, 'upgraded, read-only')
    await reader.close()
  } finally {
    await upgraded.close()
  }
}

test('sqlite: a writer upgrades a version-5 store in place: first blocks filled, reads at past heights unchanged, undo included', async (t) => {
  const path = join(tempDir(t), 'store.sqlite')
  const raw = <T>(fn: (db: Database.Database) => T): T => {
    const db = new Database(path)
    try {
      return fn(db)
    } finally {
      db.close()
    }
  }
  await upgradeFromVersion5({
    open: async () => openSqliteStore(path),
    openReadOnly: async () => openSqliteStore(path, { readOnly: true }),
    exec: async (statements) => raw((db) => statements.forEach((s) => db.exec(s))),
    value: async (sql) => raw((db) => db.prepare(sql).pluck().get()),
  })
  assert.equal(
    raw((db) => db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'row_versions_born'").pluck().get()),
    1,
  )
})

test(
  'postgres: a writer upgrades a version-5 store in place: first blocks filled, the table vacuumed, reads at past heights unchanged, undo included',
  { skip: PG_SKIP_REASON },
  async (t: TestContext) => {
    const url = await withPostgresDatabase(t)
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    client.on('error', () => undefined)
    t.after(() => client.end())
    await upgradeFromVersion5({
      open: () => openPostgresStore(url),
      openReadOnly: () => openPostgresStore(url, { readOnly: true }),
      exec: async (statements) => {
        for (const s of statements) await client.query(s)
      },
      value: async (sql) => (await client.query({ text: sql, rowMode: 'array' })).rows[0]?.[0],
    })
    assert.equal(
      (await client.query("SELECT to_regclass('row_versions_born') IS NOT NULL AS present")).rows[0].present,
      true,
    )
    const vacuumed = await client.query(
      "SELECT last_vacuum IS NOT NULL AS vacuumed, last_analyze IS NOT NULL AS analyzed FROM pg_stat_user_tables WHERE relname = 'row_versions_p0'",
    )
    assert.deepEqual(vacuumed.rows[0], { vacuumed: true, analyzed: true })
  },
)
