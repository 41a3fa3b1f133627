import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { openPostgresStore, type BlockBatch, type Store } from '../../src/store/index.ts'
import { tempSqliteFile } from '../_helpers/store.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import { tempDir } from '../_helpers/devchain.ts'
import { openSqliteStore } from '../../src/store/index.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { emptyBlock } from './contract/keys-contract.ts'
import { controlledAccountsSql, TOKEN_HOLDINGS_OF } from '../../src/store/holdings-sql.ts'

/** An empty block with these changes; `branch` 'b' is a sibling of branch a's block (a fork at `num`). */
function block(num: number, changes: Partial<BlockBatch>, branch = 'a'): BlockBatch {
  const base = emptyBlock(num)
  const id = num.toString(16).padStart(8, '0') + branch.repeat(56)
  return { ...base, block: { ...base.block, id }, ...changes }
}

/** A row of a table in `scope`; `value` undefined is its removal. */
const row = (code: string, table: string, scope: string, pk: number, value: number | undefined) => ({
  code,
  table,
  scope,
  primaryKey: BigInt(pk),
  payer: scope,
  value: value === undefined ? undefined : new Uint8Array([value]),
})

const holdings = async (store: Store, account: string) =>
  (await store.tokenHoldings({ account, limit: 100 })).map(
    (h) => `${h.code}:${h.primaryKey}=${h.value[0]}@${h.blockNum}`,
  )

const authority = (owner: string, name: string, actors: string[]) => ({
  owner,
  name,
  parent: name === 'owner' ? '' : 'owner',
  threshold: 1,
  keys: [],
  accounts: actors.map((actor) => ({ permission: { actor, permission: 'active' }, weight: 1 })),
  removed: false,
})

type Opener = (t: TestContext) => Promise<() => Promise<Store>>

function runHoldings(name: string, opener: Opener, skip?: string | false) {
  test(
    `${name}: tokenHoldings lists every contract's accounts rows of a scope at head, and undo restores them`,
    { skip },
    async (t) => {
      const store = await (await opener(t))()
      await store.applyBlock(
        block(1, {
          rows: [
            row('eosio.token', 'accounts', 'alice', 5, 10),
            row('tokenb', 'accounts', 'alice', 7, 20),
            row('tokenb', 'accounts', 'bob', 7, 30),
            row('tokenb', 'stat', 'alice', 7, 40), // not a balances table
          ],
        }),
        0,
      )
      assert.deepEqual(await holdings(store, 'alice'), ['eosio.token:5=10@1', 'tokenb:7=20@1'])
      assert.deepEqual(await store.tokenHoldings({ account: 'alice', limit: 1 }).then((r) => r.length), 1)
      // Block 2 changes one balance, erases the other and adds a contract.
      await store.applyBlock(
        block(2, {
          rows: [
            row('eosio.token', 'accounts', 'alice', 5, 11),
            row('tokenb', 'accounts', 'alice', 7, undefined),
            row('tokenc', 'accounts', 'alice', 1, 50),
          ],
        }),
        0,
      )
      assert.deepEqual(await holdings(store, 'alice'), ['eosio.token:5=11@2', 'tokenc:1=50@2'])
      assert.deepEqual(await holdings(store, 'bob'), ['tokenb:7=30@1'])
      // A fork: block 2 undone, the other branch's block 2 applied.
      await store.undoFrom(2)
      assert.deepEqual(await holdings(store, 'alice'), ['eosio.token:5=10@1', 'tokenb:7=20@1'])
      await store.applyBlock(block(2, { rows: [row('tokenb', 'accounts', 'alice', 7, 21)] }, 'b'), 0)
      assert.deepEqual(await holdings(store, 'alice'), ['eosio.token:5=10@1', 'tokenb:7=21@2'])
      assert.deepEqual(await store.snapshot((reader) => holdings(reader as Store, 'alice')), [
        'eosio.token:5=10@1',
        'tokenb:7=21@2',
      ])
      assert.deepEqual(await holdings(store, 'nobody'), [])
    },
  )

  test(`${name}: controlledAccounts and linksAtHead read the permission state at head`, { skip }, async (t) => {
    const store = await (await opener(t))()
    await store.applyBlock(
      block(1, {
        permissions: [
          authority('alice', 'owner', []),
          authority('alice', 'active', ['bob']),
          authority('carol', 'owner', ['bob', 'dave']),
          authority('bobby', 'owner', ['bob1']),
        ],
        links: [
          { account: 'alice', code: 'eosio.token', messageType: 'transfer', requiredPermission: 'active' },
          { account: 'carol', code: 'eosio', messageType: '', requiredPermission: 'owner' },
        ],
      }),
      0,
    )
    assert.deepEqual(await store.controlledAccounts({ account: 'bob', limit: 10 }), ['alice', 'carol'])
    assert.deepEqual(await store.controlledAccounts({ account: 'bob', limit: 1 }), ['alice'])
    assert.deepEqual(await store.controlledAccounts({ account: 'b%', limit: 10 }), [])
    await store.applyBlock(
      block(2, {
        permissions: [authority('alice', 'active', [])],
        links: [{ account: 'alice', code: 'eosio.token', messageType: 'transfer', requiredPermission: undefined }],
      }),
      0,
    )
    assert.deepEqual(await store.controlledAccounts({ account: 'bob', limit: 10 }), ['carol'])
    const links = async (args: Parameters<Store['linksAtHead']>[0]) =>
      (await store.linksAtHead(args)).map((l) => `${l.account}:${l.contract}:${l.action}:${l.permission}@${l.blockNum}`)
    assert.deepEqual(await links({ limit: 10 }), ['carol:eosio::owner@1'])
    await store.undoFrom(2)
    assert.deepEqual(await store.controlledAccounts({ account: 'bob', limit: 10 }), ['alice', 'carol'])
    assert.deepEqual(await links({ limit: 10 }), ['alice:eosio.token:transfer:active@1', 'carol:eosio::owner@1'])
    assert.deepEqual(await links({ account: 'carol', limit: 10 }), ['carol:eosio::owner@1'])
    assert.deepEqual(await links({ code: 'eosio.token', action: 'transfer', limit: 10 }), [
      'alice:eosio.token:transfer:active@1',
    ])
    assert.deepEqual(await links({ permission: 'owner', limit: 10 }), ['carol:eosio::owner@1'])
    assert.deepEqual(await links({ permission: 'nope', limit: 10 }), [])
  })
}

runHoldings('sqlite', async (t) => {
  const open = tempSqliteFile(t)
  return async () => open()
})

runHoldings(
  'postgres',
  async (t) => {
    const url = await withPostgresDatabase(t)
    return async () => {
      const store = await openPostgresStore(url)
      onCleanup(t, () => store.close())
      return store
    }
  },
  PG_SKIP_REASON,
)

const INDEXES = ['row_versions_holdings', 'permission_versions_delegated']

test(
  'sqlite: a store without the holdings and controllers indexes gets them at a writer open, and the reads use them',
  { timeout: 30_000 },
  async (t) => {
    const path = join(tempDir(t), 'store.sqlite')
    await openSqliteStore(path).close()
    const db = new Database(path)
    for (const index of INDEXES) db.exec(`DROP INDEX ${index}`)
    db.close()
    // A reader on a store no writer of this build has opened reads without them.
    const reader = openSqliteStore(path, { readOnly: true })
    assert.deepEqual(await reader.controlledAccounts({ account: 'bob', limit: 10 }), [])
    assert.deepEqual(await reader.tokenHoldings({ account: 'bob', limit: 10 }), [])
    await reader.close()
    const store = openSqliteStore(path)
    onCleanup(t, () => store.close())
    const check = new Database(path, { readonly: true })
    onCleanup(t, () => check.close())
    const planOf = (sql: string, params: unknown[]) =>
      (check.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[])
        .map((p) => p.detail)
        .join('\n')
    assert.match(planOf(TOKEN_HOLDINGS_OF, ['alice', 10]), /USING INDEX row_versions_holdings/)
    assert.match(
      planOf(controlledAccountsSql('INDEXED BY permission_versions_delegated'), ['%"actor":"bob"%', 10]),
      /USING (COVERING )?INDEX permission_versions_delegated/,
    )
  },
)

test(
  'postgres: a store without the holdings and controllers indexes gets them at a writer open',
  { skip: PG_SKIP_REASON },
  async (t) => {
    const url = await withPostgresDatabase(t)
    await (await openPostgresStore(url)).close()
    const client = new pg.Client(url)
    await client.connect()
    onCleanup(t, () => client.end())
    for (const index of INDEXES) await client.query(`DROP INDEX ${index}`)
    await (await openPostgresStore(url)).close()
    for (const index of INDEXES) {
      const found = await client.query('SELECT to_regclass($1::text) AS found', [index])
      assert.notEqual(found.rows[0].found, null, index)
    }
  },
)
