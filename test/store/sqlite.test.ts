import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { promisify } from 'node:util'
import Database from 'better-sqlite3'
import { openSqliteStore, openStore } from '../../src/store/index.ts'
import { API_KEY_SQL } from '../../src/store/api-keys-sql.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { tempDir } from '../_helpers/devchain.ts'
import { tempSqliteFile } from '../_helpers/store.ts'
import { runStoreContract } from './contract/store-contract.ts'
import { runChainIdContract } from './contract/chain-id-contract.ts'
import { runSearchContract } from './contract/search-contract.ts'
import { runStepPayloadContract } from './contract/step-payload-contract.ts'
import { runBatchContract } from './contract/batch-contract.ts'
import { emptyBlock, hash, key, runKeysContract } from './contract/keys-contract.ts'
import { runWebhooksContract, webhook } from './contract/webhooks-contract.ts'
import { account, runPortalContract } from './contract/portal-contract.ts'
import { assertDetailsReadBack, detailedBlock } from './contract/details-fixture.ts'

/** A store file in a fresh folder for the contracts: each store they open closes before the folder goes. */
async function sqliteFactory(t: TestContext) {
  const open = tempSqliteFile(t)
  return { open: async () => open(), openReadOnly: async () => open({ readOnly: true }) }
}

runStoreContract('sqlite', sqliteFactory)

runSearchContract('sqlite', sqliteFactory)

runStepPayloadContract('sqlite', sqliteFactory)

runBatchContract('sqlite', sqliteFactory)

runKeysContract('sqlite', sqliteFactory, 'refused')

runWebhooksContract('sqlite', sqliteFactory, 'refused')

runPortalContract('sqlite', sqliteFactory, 'refused')

runChainIdContract('sqlite', sqliteFactory)

/** Runs SQL on the file directly, as an operator with the sqlite3 CLI would. */
function raw<T>(path: string, fn: (db: Database.Database) => T): T {
  const db = new Database(path)
  try {
    return fn(db)
  } finally {
    db.close()
  }
}

const tables = (path: string) =>
  raw(path, (db) =>
    db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('api_keys', 'secrets') ORDER BY name")
      .pluck()
      .all(),
  )
const version = (path: string) =>
  raw(path, (db) => db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get())

test('sqlite: a read-only open of a missing file says what to do, and creates nothing', async (t) => {
  const dataDir = tempDir(t)
  const path = join(dataDir, 'store.sqlite')
  await assert.rejects(openStore({ store: 'sqlite', dataDir, readOnly: true }), (e: Error & { code?: string }) => {
    assert.equal(e.code, 'store_not_found_error')
    assert.equal(e.message, `store: ${path} does not exist; run antler dev, serve or index first`)
    return true
  })
  assert.equal(existsSync(path), false)
})

test('sqlite: a writer upgrades a store of the previous schema version in place; a reader refuses it until then', async (t) => {
  const path = join(tempDir(t), 'store.sqlite')
  const old = openSqliteStore(path)
  await old.applyBlock(emptyBlock(1), 0)
  await old.close()
  // Version 3's layout: no api_keys, no secrets, none of version 5's and 6's columns.
  raw(path, (db) =>
    db.exec(
      "UPDATE meta SET value = '3' WHERE key = 'schema_version'; DROP TABLE api_keys; DROP TABLE secrets; ALTER TABLE blocks DROP COLUMN header; ALTER TABLE transactions DROP COLUMN details; ALTER TABLE actions DROP COLUMN trace; DROP INDEX row_versions_born; ALTER TABLE row_versions DROP COLUMN first_block",
    ),
  )
  assert.deepEqual(tables(path), [])

  assert.throws(
    () => openSqliteStore(path, { readOnly: true }),
    (e: Error & { code?: string }) => {
      assert.equal(e.code, 'store_schema_version_error')
      assert.match(
        e.message,
        /has schema version 3, this build reads 8; open it once with antler dev, serve or index to upgrade it$/,
      )
      return true
    },
  )
  assert.equal(version(path), '3', 'the refused read-only open wrote nothing')

  const upgraded = openSqliteStore(path)
  onCleanup(t, () => upgraded.close())
  assert.equal(version(path), '8')
  assert.deepEqual(tables(path), ['api_keys', 'secrets'])
  assert.equal((await upgraded.position())?.head.blockNum, 1)
  assert.equal(
    (await upgraded.blockByNum(1))?.header,
    undefined,
    'a block stored before version 5 reads without its header',
  )
  const detailed = detailedBlock(2, 1)
  await upgraded.applyBlock(detailed, 0)
  await assertDetailsReadBack(upgraded, detailed)
  assert.equal((await upgraded.secret('cursor_key')).byteLength, 32)
  await upgraded.insertApiKey({ record: key('k1', 1_000), keyHash: hash('server_k1') })
  assert.equal((await upgraded.apiKeyByHash(hash('server_k1')))?.id, 'k1')
  const reader = openSqliteStore(path, { readOnly: true })
  assert.equal((await reader.apiKeyById('k1'))?.id, 'k1')
  await reader.close()
})

test('sqlite: a writer upgrades a version-6 store in place: the webhook tables are added, the rest kept', async (t) => {
  const path = join(tempDir(t), 'store.sqlite')
  const old = openSqliteStore(path)
  await old.applyBlock(emptyBlock(1), 0)
  await old.insertApiKey({ record: key('k1', 1_000), keyHash: hash('server_k1') })
  await old.close()
  const webhookTables = () =>
    raw(path, (db) =>
      db.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'webhook%' ORDER BY name").pluck().all(),
    )
  const layout = webhookTables()
  raw(path, (db) =>
    db.exec(
      "UPDATE meta SET value = '6' WHERE key = 'schema_version'; DROP TABLE webhooks; DROP TABLE webhook_attempts; DROP TABLE webhook_lease",
    ),
  )
  assert.deepEqual(webhookTables(), [])
  assert.throws(
    () => openSqliteStore(path, { readOnly: true }),
    /has schema version 6, this build reads 8; open it once/,
  )
  const upgraded = openSqliteStore(path)
  onCleanup(t, () => upgraded.close())
  assert.equal(version(path), '8')
  assert.deepEqual(webhookTables(), layout, 'the tables and indexes of a new store')
  assert.equal((await upgraded.position())?.head.blockNum, 1)
  assert.equal((await upgraded.apiKeyById('k1'))?.id, 'k1')
  await upgraded.insertWebhook(webhook('wh_1', 'k1', 2_000))
  const reader = openSqliteStore(path, { readOnly: true })
  assert.deepEqual(await reader.webhooksOf('k1'), [webhook('wh_1', 'k1', 2_000)])
  await reader.close()
})

/** Version 7's layout: no portal tables, none of the portal's columns of `api_keys` and their index. */
const SCHEMA_7 = [
  "UPDATE meta SET value = '7' WHERE key = 'schema_version'",
  'DROP TABLE accounts',
  'DROP TABLE portal_sessions',
  'DROP TABLE audit_log',
  'DROP TABLE key_usage',
  'DROP TABLE portal_setup',
  'DROP INDEX api_keys_account',
  ...['account_id', 'key_prefix', 'last_used_at_ms', 'limits'].map((c) => `ALTER TABLE api_keys DROP COLUMN ${c}`),
].join('; ')

test('sqlite: a writer upgrades a version-7 store in place: the portal tables and key columns are added, the rest kept', async (t) => {
  const path = join(tempDir(t), 'store.sqlite')
  const old = openSqliteStore(path)
  await old.applyBlock(emptyBlock(1), 0)
  await old.insertApiKey({ record: key('k1', 1_000), keyHash: hash('server_k1') })
  await old.revokeApiKey({ id: 'k1', atMs: 5_000 })
  await old.insertWebhook(webhook('wh_1', 'k1', 2_000))
  await old.close()
  const portalLayout = () =>
    raw(path, (db) => ({
      objects: db
        .prepare(
          "SELECT type, name, tbl_name FROM sqlite_master WHERE tbl_name IN ('accounts', 'portal_sessions', 'audit_log', 'key_usage', 'portal_setup') OR name LIKE 'api_keys%' ORDER BY name",
        )
        .all(),
      keyColumns: db.prepare("SELECT name, type FROM pragma_table_info('api_keys')").all(),
    }))
  const layout = portalLayout()
  raw(path, (db) => db.exec(SCHEMA_7))
  assert.deepEqual(
    portalLayout().objects,
    [
      { type: 'table', name: 'api_keys', tbl_name: 'api_keys' },
      { type: 'index', name: 'api_keys_revoked', tbl_name: 'api_keys' },
    ],
    'version 7 as it was',
  )
  assert.throws(
    () => openSqliteStore(path, { readOnly: true }),
    /has schema version 7, this build reads 8; open it once/,
  )
  assert.equal(version(path), '7')
  const upgraded = openSqliteStore(path)
  onCleanup(t, () => upgraded.close())
  assert.equal(version(path), '8')
  assert.deepEqual(portalLayout(), layout, 'the tables, columns and indexes of a new store')
  assert.equal((await upgraded.position())?.head.blockNum, 1)
  assert.deepEqual(await upgraded.apiKeyById('k1'), key('k1', 1_000, { revokedAtMs: 5_000 }))
  assert.deepEqual(await upgraded.webhooksOf('k1'), [webhook('wh_1', 'k1', 2_000)])
  await upgraded.insertAccount(account('acc_1', 3_000))
  const portalKey = key('k2', 3_000, { accountId: 'acc_1', prefix: 'server_ab12', limits: { callsPerMinute: 1 } })
  await upgraded.insertApiKey({ record: portalKey, keyHash: hash('server_k2') })
  await upgraded.touchApiKeys([{ id: 'k1', atMs: 4_000 }])
  const reader = openSqliteStore(path, { readOnly: true })
  onCleanup(t, () => reader.close())
  assert.deepEqual(await reader.apiKeysOf('acc_1'), [portalKey])
  assert.equal((await reader.apiKeyById('k1'))?.lastUsedAtMs, 4_000)
  assert.deepEqual(await reader.accounts(), [account('acc_1', 3_000)])
})

test('sqlite: revoked ids are read through the partial index of revoked keys', async (t) => {
  const path = join(tempDir(t), 'store.sqlite')
  await openSqliteStore(path).close()
  const plan = raw(path, (db) =>
    db
      .prepare(`EXPLAIN QUERY PLAN ${API_KEY_SQL.revokedIds}`)
      .all(1_000)
      .map((r) => (r as { detail: string }).detail)
      .join('\n'),
  )
  assert.match(plan, /USING (COVERING )?INDEX api_keys_revoked/)
})

test('sqlite: a store of any other schema version is refused by a writer too, and left as it was', async (t) => {
  const path = join(tempDir(t), 'store.sqlite')
  await openSqliteStore(path).close()
  raw(path, (db) => db.exec("UPDATE meta SET value = '2' WHERE key = 'schema_version'; DROP TABLE api_keys"))
  assert.throws(
    () => openSqliteStore(path),
    (e: Error & { code?: string }) => {
      assert.equal(e.code, 'store_schema_version_error')
      assert.match(
        e.message,
        /has schema version 2, this build reads 8; run the antler build that wrote it, or index into a new store$/,
      )
      return true
    },
  )
  assert.equal(version(path), '2')
  assert.deepEqual(tables(path), ['secrets'])
})

const CHILD = `
import { openSqliteStore } from ${JSON.stringify(new URL('../../src/store/index.ts', import.meta.url).pathname)}
const store = openSqliteStore(process.argv[1])
for (let i = 0; i < 20; i++) await store.insertApiKey({ record: { id: 'child' + i, name: 'c', type: 'server', origins: [], createdAtMs: i }, keyHash: 'h' + i })
process.stdout.write(Buffer.from(await store.secret('jwt_signing_key')).toString('hex'))
await store.close()
`

test('sqlite: another process inserts keys while this one indexes and an API reads, all on one file', async (t) => {
  const path = join(tempDir(t), 'store.sqlite')
  const indexer = openSqliteStore(path)
  onCleanup(t, () => indexer.close())
  await indexer.applyBlock(emptyBlock(1), 0)
  const api = openSqliteStore(path, { readOnly: true })
  onCleanup(t, () => api.close())
  let exited = false
  const child = promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD, path], {
    timeout: 60_000,
  }).finally(() => (exited = true))
  let head = 1
  while (!exited) {
    await indexer.applyBlock(emptyBlock(++head), head - 1)
    await api.revokedApiKeyIds(Date.now())
    await nextTurn()
  }
  const { stdout } = await child
  assert.equal(stdout, Buffer.from(await api.secret('jwt_signing_key')).toString('hex'))
  assert.equal((await api.apiKeys()).length, 20)
  assert.equal((await api.position())?.head.blockNum, head)
  assert.deepEqual(await indexer.integrityFindings(), [])
})
