import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import pg from 'pg'
import { openPostgresStore, type BlockBatch } from '../../src/store/index.ts'
import { API_KEY_SQL } from '../../src/store/api-keys-sql.ts'
import { numbered } from '../../src/store/common-sql.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import { runSearchContract } from './contract/search-contract.ts'
import { runStepPayloadContract } from './contract/step-payload-contract.ts'
import { runBatchContract } from './contract/batch-contract.ts'
import { runStoreContract } from './contract/store-contract.ts'
import { runChainIdContract } from './contract/chain-id-contract.ts'
import { emptyBlock, hash, key, runKeysContract } from './contract/keys-contract.ts'
import { runWebhooksContract, webhook } from './contract/webhooks-contract.ts'
import { account, runPortalContract } from './contract/portal-contract.ts'
import { assertDetailsReadBack, detailedBlock } from './contract/details-fixture.ts'

const postgres = async (t: TestContext) => {
  const url = await withPostgresDatabase(t)
  return { open: () => openPostgresStore(url) }
}

runStoreContract('postgres', postgres, PG_SKIP_REASON)
runSearchContract('postgres', postgres, PG_SKIP_REASON)
runStepPayloadContract('postgres', postgres, PG_SKIP_REASON)
runBatchContract('postgres', postgres, PG_SKIP_REASON)
runChainIdContract('postgres', postgres, PG_SKIP_REASON)
const postgresWithReadOnly = async (t: TestContext) => {
  const url = await withPostgresDatabase(t)
  return { open: () => openPostgresStore(url), openReadOnly: () => openPostgresStore(url, { readOnly: true }) }
}
runKeysContract('postgres', postgresWithReadOnly, 'written', PG_SKIP_REASON)
runWebhooksContract('postgres', postgresWithReadOnly, 'written', PG_SKIP_REASON)
runPortalContract('postgres', postgresWithReadOnly, 'written', PG_SKIP_REASON)

test(
  'postgres: a writer upgrades a store of the previous schema version in place; a reader refuses it until then, and any other version is refused',
  { skip: PG_SKIP_REASON },
  async (t) => {
    const url = await withPostgresDatabase(t)
    const old = await openPostgresStore(url)
    await old.applyBlock(emptyBlock(1), 0)
    await old.close()
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    client.on('error', () => undefined)
    const tables = async () =>
      (
        await client.query(
          "SELECT string_agg(tablename, ',' ORDER BY tablename) AS t FROM pg_tables WHERE tablename IN ('api_keys', 'secrets')",
        )
      ).rows[0].t
    const version = async () =>
      (await client.query("SELECT value FROM meta WHERE key = 'schema_version'")).rows[0].value
    // Version 3's layout: no api_keys, no secrets, none of version 5's and 6's columns.
    await client.query(
      "UPDATE meta SET value = '3' WHERE key = 'schema_version'; DROP TABLE api_keys; DROP TABLE secrets; ALTER TABLE blocks DROP COLUMN header; ALTER TABLE transactions DROP COLUMN details; ALTER TABLE actions DROP COLUMN trace; DROP INDEX row_versions_born; ALTER TABLE row_versions DROP COLUMN first_block",
    )

    await assert.rejects(openPostgresStore(url, { readOnly: true }), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'store_schema_version_error')
      assert.match(
        e.message,
        /has schema version 3, this build reads 8; open it once with antler dev, serve or index to upgrade it$/,
      )
      return true
    })
    const upgraded = await openPostgresStore(url)
    assert.equal(await version(), '8')
    assert.equal(await tables(), 'api_keys,secrets')
    assert.equal((await upgraded.position())?.head.blockNum, 1)
    assert.equal(
      (await upgraded.blockByNum(1))?.header,
      undefined,
      'a block stored before version 5 reads without its header',
    )
    const detailed = detailedBlock(2, 1)
    await upgraded.applyBlock(detailed, 0)
    await assertDetailsReadBack(upgraded, detailed)
    assert.equal((await upgraded.secret('jwt_signing_key')).byteLength, 32)
    await upgraded.insertApiKey({ record: key('k1', 1_000), keyHash: hash('server_k1') })
    const reader = await openPostgresStore(url, { readOnly: true })
    assert.equal((await reader.apiKeyByHash(hash('server_k1')))?.id, 'k1')
    await reader.close()
    await upgraded.close()

    await client.query("UPDATE meta SET value = '2' WHERE key = 'schema_version'; DROP TABLE api_keys")
    await assert.rejects(openPostgresStore(url), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'store_schema_version_error')
      assert.match(
        e.message,
        /has schema version 2, this build reads 8; run the antler build that wrote it, or index into a new store$/,
      )
      return true
    })
    assert.equal(await version(), '2', 'the refused open changed nothing')
    assert.equal(await tables(), 'secrets')
    await client.end()
  },
)

test(
  'postgres: a writer upgrades a version-6 store in place: the webhook tables are added, the rest kept',
  { skip: PG_SKIP_REASON },
  async (t) => {
    const url = await withPostgresDatabase(t)
    const old = await openPostgresStore(url)
    await old.applyBlock(emptyBlock(1), 0)
    await old.insertApiKey({ record: key('k1', 1_000), keyHash: hash('server_k1') })
    await old.close()
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    client.on('error', () => undefined)
    t.after(() => client.end())
    const webhookRelations = async () =>
      (
        await client.query(
          "SELECT string_agg(relname, ',' ORDER BY relname) AS r FROM pg_class WHERE relname LIKE 'webhook%' AND relkind IN ('r', 'i')",
        )
      ).rows[0].r
    const layout = await webhookRelations()
    await client.query(
      "UPDATE meta SET value = '6' WHERE key = 'schema_version'; DROP TABLE webhooks; DROP TABLE webhook_attempts; DROP TABLE webhook_lease",
    )
    assert.equal(await webhookRelations(), null)
    await assert.rejects(
      openPostgresStore(url, { readOnly: true }),
      /has schema version 6, this build reads 8; open it once/,
    )
    const upgraded = await openPostgresStore(url)
    t.after(() => upgraded.close())
    assert.equal((await client.query("SELECT value FROM meta WHERE key = 'schema_version'")).rows[0].value, '8')
    assert.equal(await webhookRelations(), layout, 'the tables and indexes of a new store')
    assert.equal((await upgraded.position())?.head.blockNum, 1)
    assert.equal((await upgraded.apiKeyById('k1'))?.id, 'k1')
    await upgraded.insertWebhook(webhook('wh_1', 'k1', 2_000))
    const reader = await openPostgresStore(url, { readOnly: true })
    t.after(() => reader.close())
    assert.deepEqual(await reader.webhooksOf('k1'), [webhook('wh_1', 'k1', 2_000)])
  },
)

test(
  'postgres: a writer upgrades a version-7 store in place: the portal tables and key columns are added, the rest kept',
  { skip: PG_SKIP_REASON },
  async (t) => {
    const url = await withPostgresDatabase(t)
    const old = await openPostgresStore(url)
    await old.applyBlock(emptyBlock(1), 0)
    await old.insertApiKey({ record: key('k1', 1_000), keyHash: hash('server_k1') })
    await old.revokeApiKey({ id: 'k1', atMs: 5_000 })
    await old.insertWebhook(webhook('wh_1', 'k1', 2_000))
    await old.close()
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    client.on('error', () => undefined)
    t.after(() => client.end())
    const layout = async () => ({
      relations: (
        await client.query(
          "SELECT relname, relkind FROM pg_class WHERE relname IN ('accounts', 'portal_sessions', 'audit_log', 'key_usage', 'portal_setup') OR relname LIKE 'api_keys%' OR relname LIKE 'portal_%' OR relname LIKE 'audit_log%' OR relname LIKE 'key_usage%' OR relname LIKE 'accounts%' ORDER BY relname",
        )
      ).rows,
      keyColumns: (
        await client.query(
          "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'api_keys' ORDER BY ordinal_position",
        )
      ).rows,
    })
    const fresh = await layout()
    await client.query(
      [
        "UPDATE meta SET value = '7' WHERE key = 'schema_version'",
        'DROP TABLE accounts, portal_sessions, audit_log, key_usage, portal_setup',
        'DROP INDEX api_keys_account',
        ...['account_id', 'key_prefix', 'last_used_at_ms', 'limits'].map(
          (c) => `ALTER TABLE api_keys DROP COLUMN ${c}`,
        ),
      ].join('; '),
    )
    assert.deepEqual(
      (await layout()).relations.map((r) => r.relname),
      ['api_keys', 'api_keys_key_hash_key', 'api_keys_pkey', 'api_keys_revoked'],
      'version 7 as it was',
    )
    await assert.rejects(
      openPostgresStore(url, { readOnly: true }),
      /has schema version 7, this build reads 8; open it once/,
    )
    const upgraded = await openPostgresStore(url)
    t.after(() => upgraded.close())
    assert.equal((await client.query("SELECT value FROM meta WHERE key = 'schema_version'")).rows[0].value, '8')
    assert.deepEqual(await layout(), fresh, 'the tables, columns and indexes of a new store')
    assert.equal((await upgraded.position())?.head.blockNum, 1)
    assert.deepEqual(await upgraded.apiKeyById('k1'), key('k1', 1_000, { revokedAtMs: 5_000 }))
    assert.deepEqual(await upgraded.webhooksOf('k1'), [webhook('wh_1', 'k1', 2_000)])
    await upgraded.insertAccount(account('acc_1', 3_000))
    const portalKey = key('k2', 3_000, { accountId: 'acc_1', prefix: 'server_ab12', limits: { callsPerMinute: 1 } })
    await upgraded.insertApiKey({ record: portalKey, keyHash: hash('server_k2') })
    const reader = await openPostgresStore(url, { readOnly: true })
    t.after(() => reader.close())
    await reader.touchApiKeys([{ id: 'k1', atMs: 4_000 }])
    assert.deepEqual(await reader.apiKeysOf('acc_1'), [portalKey])
    assert.equal((await upgraded.apiKeyById('k1'))?.lastUsedAtMs, 4_000)
    assert.deepEqual(await reader.accounts(), [account('acc_1', 3_000)])
  },
)

test(
  "postgres: revoked ids and an account's keys are read through their indexes",
  { skip: PG_SKIP_REASON },
  async (t) => {
    const url = await withPostgresDatabase(t)
    await (await openPostgresStore(url)).close()
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    client.on('error', () => undefined)
    t.after(() => client.end())
    await client.query('SET enable_seqscan = off')
    const plan = async (sql: string, params: unknown[]) =>
      (await client.query(`EXPLAIN ${numbered(sql)}`, params)).rows.map((r) => r['QUERY PLAN']).join('\n')
    assert.match(await plan(API_KEY_SQL.revokedIds, [1_000]), /api_keys_revoked/)
    assert.match(await plan(API_KEY_SQL.ofAccount, ['acc_1']), /api_keys_account/)
  },
)

const blockId = (num: number) => num.toString(16).padStart(8, '0') + 'a'.repeat(56)

/** Blocks `from`..`to`, each changing `rowsPerBlock` keys of one table (the same keys in every block). */
function rowBlocks(from: number, to: number, rowsPerBlock: number): BlockBatch[] {
  const batches: BlockBatch[] = []
  for (let num = from; num <= to; num++) {
    batches.push({
      block: {
        num,
        id: blockId(num),
        previous: num === 1 ? '0'.repeat(64) : blockId(num - 1),
        timestampMs: num * 500,
        producer: 'producera',
        transactionCount: 0,
        actionCount: 0,
      },
      transactions: [],
      actions: [],
      rows: Array.from({ length: rowsPerBlock }, (_, k) => ({
        code: 'rawdb',
        scope: 'alice',
        table: 'rows',
        primaryKey: BigInt(k),
        payer: 'rawdb',
        value: new Uint8Array([num % 256]),
      })),
      abis: [],
      permissions: [],
      links: [],
    })
  }
  return batches
}

test(
  'postgres: the store analyzes the tables it grows each time they double, whatever autovacuum does',
  { skip: PG_SKIP_REASON },
  async (t) => {
    const url = await withPostgresDatabase(t)
    const store = await openPostgresStore(url)
    t.after(() => store.close())
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    // The database is dropped in an after hook that runs before any this test adds.
    client.on('error', () => undefined)
    const estimated = async () =>
      (await client.query<{ reltuples: number }>("SELECT reltuples FROM pg_class WHERE relname = 'row_versions_p0'"))
        .rows[0]?.reltuples ?? -1

    await store.applyBlocks(rowBlocks(1, 5, 100), 0)
    // Autovacuum must not analyze for the store during the test (the first write created the partition).
    await client.query('ALTER TABLE row_versions_p0 SET (autovacuum_enabled = false)')
    assert.ok((await estimated()) <= 0, 'below 1,000 rows written, nothing is analyzed yet')
    await store.applyBlocks(rowBlocks(6, 20, 100), 0)
    assert.equal(await estimated(), 2000, 'analyzed once 1,000 rows were written')
    await store.applyBlocks(rowBlocks(21, 30, 100), 0)
    assert.equal(await estimated(), 2000, 'not again before the table doubles')
    await store.applyBlocks(rowBlocks(31, 40, 100), 0)
    assert.equal(await estimated(), 4000, 'analyzed again once it doubled')
    assert.deepEqual(
      (await store.tableRows({ code: 'rawdb', table: 'rows', scope: 'alice', blockNum: 40 })).length,
      100,
    )
    await client.end()
  },
)

test(
  'postgres: permission, key and link versions are analyzed by the store too (they are read by account at any height)',
  { skip: PG_SKIP_REASON },
  async (t) => {
    const url = await withPostgresDatabase(t)
    const store = await openPostgresStore(url)
    t.after(() => store.close())
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    client.on('error', () => undefined)
    const key = 'PUB_K1_6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5BoDq63'
    const blocks = rowBlocks(1, 12, 0).map((b, i) => ({
      ...b,
      permissions: Array.from({ length: 100 }, (_, k) => ({
        owner: `acct${k}`,
        name: 'active',
        parent: 'owner',
        threshold: 1,
        keys: [{ key, weight: 1 }],
        accounts: [],
        removed: false,
      })),
      links: Array.from({ length: 100 }, (_, k) => ({
        account: `acct${k}`,
        code: 'rawdb',
        messageType: 'put',
        requiredPermission: i % 2 ? 'active' : undefined,
      })),
    }))
    await store.applyBlocks(blocks.slice(0, 5), 0)
    await store.applyBlocks(blocks.slice(5), 0)
    const estimated = await client.query<{ relname: string; reltuples: number }>(
      "SELECT relname, reltuples FROM pg_class WHERE relname IN ('permission_versions', 'key_versions', 'link_versions') ORDER BY relname",
    )
    assert.deepEqual(
      estimated.rows.map((r) => [r.relname, r.reltuples]),
      [
        ['key_versions', 1200],
        ['link_versions', 1200],
        ['permission_versions', 1200],
      ],
    )
    assert.deepEqual(await store.permissionLinks({ account: 'acct7', blockNum: 12 }), [
      { contract: 'rawdb', action: 'put', permission: 'active', blockNum: 12 },
    ])
    await client.end()
  },
)

test(
  'postgres: a reader listening for steps hears each commit of the writer, and nothing once it stopped',
  { skip: PG_SKIP_REASON },
  async (t) => {
    const url = await withPostgresDatabase(t)
    const writer = await openPostgresStore(url)
    t.after(() => writer.close())
    const reader = await openPostgresStore(url, { readOnly: true })
    t.after(() => reader.close())
    let heard = 0
    const errors: unknown[] = []
    const stop = await reader.listenForSteps!(
      () => heard++,
      (error) => errors.push(error),
    )
    const until = async (check: () => boolean) => {
      for (let i = 0; i < 100 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 20))
    }
    await writer.applyBlock(emptyBlock(1), 0)
    await until(() => heard >= 1)
    assert.equal(heard, 1, 'one commit, one notification')
    await writer.applyBlock(emptyBlock(2), 1)
    await until(() => heard >= 2)
    assert.equal(heard, 2)
    await stop()
    await writer.applyBlock(emptyBlock(3), 2)
    await new Promise((resolve) => setTimeout(resolve, 300))
    assert.equal(heard, 2, 'nothing after stop')
    assert.deepEqual(errors, [])
  },
)
