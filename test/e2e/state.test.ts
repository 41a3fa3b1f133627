import { test } from 'node:test'
import assert from 'node:assert/strict'
import WebSocket from 'ws'
import { ABI, APIClient, Action, PrivateKey, Serializer, SignedTransaction, Transaction } from '@wharfkit/antelope'
import type { DfuseClient } from '@dfuse/client'
import { DEV_PRIVATE_KEY, RAWDB_ABI } from '../../src/devchain/index.ts'
import { dfuseClient, isStandardError, issueToken, type Platform, startPlatform } from '../_helpers/platform.ts'

;(globalThis as { WebSocket?: unknown }).WebSocket = WebSocket

const devKey = PrivateKey.from(DEV_PRIVATE_KEY)
type ActionSpec = { account: string; name: string; actor: string; data: Record<string, unknown> }

/** Signs the actions with the development key, pushes them to the devchain and returns the block that includes them. */
async function push(chain: APIClient, actions: ActionSpec[], keys: PrivateKey[] = [devKey]): Promise<number> {
  const info = await chain.v1.chain.get_info()
  const abis = new Map<string, ABI>()
  for (const a of actions)
    if (!abis.has(a.account)) abis.set(a.account, ABI.from((await chain.v1.chain.get_abi(a.account)).abi!))
  const transaction = Transaction.from({
    ...info.getTransactionHeader(120),
    actions: actions.map((a) =>
      Action.from(
        { account: a.account, name: a.name, authorization: [{ actor: a.actor, permission: 'active' }], data: a.data },
        abis.get(a.account)!,
      ),
    ),
  })
  const digest = transaction.signingDigest(info.chain_id)
  const pushed = await chain.v1.chain.push_transaction(
    SignedTransaction.from({ ...transaction, signatures: keys.map((k) => k.signDigest(digest)) }),
  )
  return Number(pushed.processed.block_num)
}

/**
 * Waits until the chain's head is `blockNum`, so that the next push lands in a later block (two quick pushes may share
 * one).
 */
async function produced(chain: APIClient, blockNum: number): Promise<void> {
  const deadline = Date.now() + 20_000
  while (Number((await chain.v1.chain.get_info()).head_block_num) < blockNum) {
    if (Date.now() > deadline) throw new Error(`block ${blockNum} not produced within 20 s`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Waits until the API's store holds `blockNum` (its /healthz head). */
async function indexed(p: Platform, blockNum: number): Promise<void> {
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const health = (await (await fetch(`${p.api}/healthz`)).json()) as { head_block_num: number | null }
    if ((health.head_block_num ?? 0) >= blockNum) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`block ${blockNum} not indexed within 20 s`)
}

/** The struct and table parts of an ABI. */
type TablesDef = {
  structs: { name: string; base: string; fields: { name: string; type: string }[] }[]
  tables: { name: string; type: string; index_type: string; key_names: string[]; key_types: string[] }[]
}

const ITEMS_V1: TablesDef = {
  structs: [
    {
      name: 'item',
      base: '',
      fields: [
        { name: 'id', type: 'uint64' },
        { name: 'label', type: 'string' },
      ],
    },
    { name: 'holding', base: '', fields: [{ name: 'balance', type: 'asset' }] },
  ],
  tables: [
    { name: 'items', type: 'item', index_type: 'i64', key_names: [], key_types: [] },
    { name: 'bysym', type: 'holding', index_type: 'i64', key_names: [], key_types: [] },
  ],
}
// The same table with another layout: the v1 rows no longer decode (a uint32 and a uint8 where a string was).
const ITEMS_V2: TablesDef = {
  ...ITEMS_V1,
  structs: [
    {
      name: 'item',
      base: '',
      fields: [
        { name: 'id', type: 'uint64' },
        { name: 'amount', type: 'uint32' },
        { name: 'flag', type: 'uint8' },
      ],
    },
    ITEMS_V1.structs[1],
  ],
}

/** rawdb's own action ABI plus the tables a test wants decoded (setabi replaces the whole ABI). */
function rawdbAbi(tables: TablesDef): string {
  const own = RAWDB_ABI
  const merged = ABI.from({
    ...JSON.parse(JSON.stringify(own)),
    structs: [...own.structs.map((s) => JSON.parse(JSON.stringify(s))), ...tables.structs],
    tables: tables.tables,
  })
  return Buffer.from(Serializer.encode({ object: merged }).array).toString('hex')
}

const hexOf = (bytes: number[]) => Buffer.from(bytes).toString('hex')
const u64le = (v: bigint) => hexOf(Array.from({ length: 8 }, (_, i) => Number((v >> BigInt(8 * i)) & 0xffn)))
const stringHex = (s: string) => hexOf([s.length, ...Buffer.from(s)])

test('REST state with @dfuse/client against a running antler dev: reads before and after transfers, newaccount, updateauth, linkauth and a setabi that changes a layout; every key_type; multi-table reads; ABIs; key accounts; block by time; typed errors', async (t) => {
  const p = await startPlatform(t)
  const chain = new APIClient({ url: p.chainApi })
  const token = await issueToken(p, p.apiKey)
  const client: DfuseClient = dfuseClient(t, p)
  const get = async (path: string) => {
    const response = await fetch(`${p.api}${path}`, { headers: { authorization: `Bearer ${token}` } })
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  }

  // A transfer at a known block: the balance before and after it.
  const transferBlock = await push(chain, [
    {
      account: 'eosio.token',
      name: 'transfer',
      actor: 'alice',
      data: { from: 'alice', to: 'bob', quantity: '1.5000 EOS', memo: 'state' },
    },
  ])
  // A rawdb row keyed by the full symbol 4,EOS, and rows of a table whose layout changes.
  const abiV1Hex = rawdbAbi(ITEMS_V1)
  const abiV1Block = await push(chain, [
    { account: 'eosio', name: 'setabi', actor: 'rawdb', data: { account: 'rawdb', abi: abiV1Hex } },
  ])
  const symKey = (BigInt(Buffer.from('EOS').readUIntLE(0, 3)) << 8n) | 4n
  const putBlock = await push(chain, [
    {
      account: 'rawdb',
      name: 'put',
      actor: 'rawdb',
      data: {
        scope: 'rawdb',
        table: 'bysym',
        key: symKey.toString(),
        payer: 'rawdb',
        value: `${u64le(70000n)}${hexOf([4])}${hexOf([...Buffer.from('EOS'), 0, 0, 0, 0])}`,
      },
    },
    {
      account: 'rawdb',
      name: 'put',
      actor: 'rawdb',
      data: { scope: 'rawdb', table: 'items', key: '1', payer: 'rawdb', value: `${u64le(1n)}${stringHex('first')}` },
    },
    {
      account: 'rawdb',
      name: 'put',
      actor: 'rawdb',
      data: { scope: 'alice', table: 'items', key: '2', payer: 'rawdb', value: `${u64le(2n)}${stringHex('second')}` },
    },
  ])
  // The layout change must land after the puts: the test reads them at the block before it.
  await produced(chain, putBlock)
  const abiV2Block = await push(chain, [
    { account: 'eosio', name: 'setabi', actor: 'rawdb', data: { account: 'rawdb', abi: rawdbAbi(ITEMS_V2) } },
  ])
  // An account created with a fresh key, whose active key is then replaced.
  const firstKey = PrivateKey.generate('K1')
  const secondKey = PrivateKey.generate('K1')
  const authority = (key: PrivateKey) => ({
    threshold: 1,
    keys: [{ key: key.toPublic().toString(), weight: 1 }],
    accounts: [],
    waits: [],
  })
  const newAccountBlock = await push(chain, [
    {
      account: 'eosio',
      name: 'newaccount',
      actor: 'eosio',
      data: { creator: 'eosio', name: 'dave', owner: authority(firstKey), active: authority(firstKey) },
    },
  ])
  const updateAuthBlock = await push(
    chain,
    [
      {
        account: 'eosio',
        name: 'updateauth',
        actor: 'dave',
        data: { account: 'dave', permission: 'active', parent: 'owner', auth: authority(secondKey) },
      },
    ],
    [firstKey],
  )
  const linkBlock = await push(
    chain,
    [
      {
        account: 'eosio',
        name: 'linkauth',
        actor: 'dave',
        data: { account: 'dave', code: 'eosio.token', type: 'transfer', requirement: 'active' },
      },
    ],
    [secondKey],
  )
  await indexed(p, linkBlock)

  await t.test(
    'table: the balance before and after the transfer, decoded with the ABI at the height; json false gives hex',
    async () => {
      const before = await client.stateTable<{ balance: string }>('eosio.token', 'alice', 'accounts', {
        blockNum: transferBlock - 1,
      })
      const after = await client.stateTable<{ balance: string }>('eosio.token', 'alice', 'accounts', {
        blockNum: transferBlock,
        withBlockNum: true,
      })
      assert.deepEqual(
        before.rows.map((r) => r.json),
        [{ balance: '1000.0000 EOS' }],
      )
      assert.deepEqual(
        after.rows.map((r) => r.json),
        [{ balance: '998.5000 EOS' }],
      )
      assert.equal((after.rows[0] as unknown as { block: number }).block, transferBlock)
      assert.equal(after.rows[0].payer, 'alice')
      const hex = await client.stateTable('eosio.token', 'alice', 'accounts', { blockNum: transferBlock, json: false })
      assert.equal(hex.rows[0].hex, `${u64le(9_985_000n)}04454f5300000000`)
      assert.equal(hex.rows[0].json, undefined)
      // A reversible height names its block; LIB is always there.
      assert.equal(typeof after.last_irreversible_block_num, 'number')
      if (transferBlock > after.last_irreversible_block_num) assert.equal(after.up_to_block_num, transferBlock)
    },
  )

  await t.test(
    'every key_type on the EOS balance row (symbol code 5459781) and symbol on a row keyed by 4,EOS; keys accepted back as primary_key',
    async () => {
      const expected = {
        name: '........ehbo5',
        uint64: '5459781',
        hex: '454f530000000000',
        hex_be: '0000000000534f45',
        symbol_code: 'EOS',
      } as const
      for (const [keyType, key] of Object.entries(expected)) {
        const answer = await client.stateTable('eosio.token', 'alice', 'accounts', { keyType: keyType as 'name' })
        assert.equal((answer.rows[0] as unknown as { key: string }).key, key, keyType)
        const row = await client.stateTableRow<{ balance: string }>('eosio.token', 'alice', 'accounts', key, {
          keyType: keyType as 'name',
        })
        assert.equal(row.row.json?.balance, '998.5000 EOS', `primary_key ${key} as ${keyType}`)
      }
      const bySymbol = await client.stateTable<{ balance: string }>('rawdb', 'rawdb', 'bysym', {
        keyType: 'symbol',
        blockNum: putBlock,
      })
      assert.equal((bySymbol.rows[0] as unknown as { key: string }).key, '4,EOS')
      assert.deepEqual(bySymbol.rows[0].json, { balance: '7.0000 EOS' })
      assert.equal(
        (await client.stateTableRow('rawdb', 'rawdb', 'bysym', '4,EOS', { keyType: 'symbol', blockNum: putBlock })).row
          .payer,
        'rawdb',
      )
      // A scope written as a symbol code is the same scope as its name form.
      const stat = await client.stateTable<{ supply: string }>('eosio.token', 'EOS', 'stat')
      assert.equal(stat.rows[0].json?.supply, '1000000000.0000 EOS')
    },
  )

  await t.test(
    'a setabi that changes the layout: rows decode at the old height, carry hex and error at the new one',
    async () => {
      const old = await client.stateTable<{ id: number; label: string }>('rawdb', 'rawdb', 'items', {
        blockNum: abiV2Block - 1,
      })
      assert.deepEqual(
        old.rows.map((r) => r.json),
        [{ id: 1, label: 'first' }],
      )
      const now = await client.stateTable('rawdb', 'rawdb', 'items', { blockNum: abiV2Block })
      assert.equal(now.rows.length, 1)
      assert.equal(now.rows[0].json, undefined)
      assert.equal(now.rows[0].hex, `${u64le(1n)}${stringHex('first')}`)
      assert.match(
        String(now.rows[0].error ?? ''),
        new RegExp(`^ABI from block ${abiV2Block}, row struct "item", err: `),
      )
      const abiOld = await client.stateAbi('rawdb', { blockNum: abiV2Block - 1 })
      assert.equal(abiOld.block_num, abiV1Block)
      assert.deepEqual(
        (abiOld.abi as { tables: { name: string }[] }).tables.map((x) => x.name),
        ['items', 'bysym'],
      )
      assert.equal((await client.stateAbi('rawdb')).block_num, abiV2Block)
      const hexAbi = await get(`/v0/state/abi?account=rawdb&json=false&block_num=${abiV1Block}`)
      assert.equal(hexAbi.body.abi, abiV1Hex)
      // Before the first setabi of these tables, json decoding has no table to decode with.
      const before = await get(
        `/v0/state/table?account=rawdb&scope=rawdb&table=items&json=true&block_num=${abiV1Block - 1}`,
      )
      assert.equal(before.status, 400)
      assert.equal(before.body.code, 'data_table_not_found_error')
      const decoded = await client.stateAbiBinToJson<{ id: number; label: string }>(
        'rawdb',
        'items',
        [`${u64le(9n)}${stringHex('nine')}`],
        { blockNum: abiV2Block - 1 },
      )
      assert.deepEqual(decoded.rows, [{ id: 9, label: 'nine' }])
      assert.equal(decoded.block_num, abiV2Block - 1)
    },
  )

  await t.test(
    'multi-table reads: tables/scopes and tables/accounts (POST forms, as the client sends) sorted by name, and table_scopes',
    async () => {
      const scopes = await client.stateTablesForScopes<{ balance: string }>(
        'eosio.token',
        ['carol', 'bob', 'alice', 'nobody'],
        'accounts',
        { blockNum: transferBlock },
      )
      assert.deepEqual(
        scopes.tables.map((x) => [x.scope, x.rows.map((r) => r.json?.balance)]),
        [
          ['alice', ['998.5000 EOS']],
          ['bob', ['1001.5000 EOS']],
          ['carol', ['1000.0000 EOS']],
          ['nobody', []],
        ],
      )
      const accounts = await client.stateTablesForAccounts(['rawdb'], 'alice', 'items', { blockNum: putBlock })
      assert.deepEqual(
        accounts.tables.map((x) => [x.account, x.scope, x.rows.map((r) => r.json)]),
        [['rawdb', 'alice', [{ id: 2, label: 'second' }]]],
      )
      const tableScopes = await client.stateTableScopes('rawdb', 'items', { blockNum: putBlock })
      assert.deepEqual(tableScopes.scopes, ['alice', 'rawdb'])
      assert.equal(tableScopes.block_num, putBlock)
      const viaGet = await get(
        `/v0/state/tables/scopes?account=eosio.token&scopes=bob%7Calice&table=accounts&json=true&block_num=${transferBlock}`,
      )
      assert.deepEqual(
        (viaGet.body.tables as { scope: string }[]).map((x) => x.scope),
        ['alice', 'bob'],
      )
    },
  )

  await t.test('key_accounts follows newaccount and updateauth (legacy EOS… and PUB_K1_ forms alike)', async () => {
    const first = firstKey.toPublic()
    const second = secondKey.toPublic()
    assert.deepEqual(
      (await client.stateKeyAccounts(first.toLegacyString(), { blockNum: newAccountBlock })).account_names,
      ['dave'],
    )
    assert.deepEqual(
      (await client.stateKeyAccounts(first.toString(), { blockNum: updateAuthBlock })).account_names,
      ['dave'],
      'still the owner key',
    )
    const missing = await get(`/v0/state/key_accounts?public_key=${second.toString()}&block_num=${updateAuthBlock - 1}`)
    assert.equal(missing.body.code, 'data_public_key_not_found_error')
    assert.deepEqual((await client.stateKeyAccounts(second.toString(), { blockNum: updateAuthBlock })).account_names, [
      'dave',
    ])
    const dev = await client.stateKeyAccounts(devKey.toPublic().toLegacyString())
    for (const account of ['alice', 'bob', 'carol', 'rawdb', 'eosio.token'])
      assert.ok(dev.account_names.includes(account), account)
  })

  await t.test('permission_links follows linkauth', async () => {
    assert.deepEqual((await client.statePermissionLinks('dave', { blockNum: linkBlock - 1 })).linked_permissions, [])
    const links = await client.statePermissionLinks('dave', { blockNum: linkBlock })
    assert.deepEqual(links.linked_permissions, [
      { contract: 'eosio.token', action: 'transfer', permission_name: 'active' },
    ])
    assert.equal(typeof links.last_irreversible_block_num, 'number')
    assert.deepEqual((await client.statePermissionLinks('dave')).linked_permissions, links.linked_permissions)
  })

  await t.test("block_id/by_time answers the block on the comparator's side", async () => {
    const block = await chain.v1.chain.get_block(transferBlock)
    const time = new Date(`${block.timestamp.toString()}Z`)
    assert.equal((await client.fetchBlockIdByTime(time, 'eq')).block.num, transferBlock)
    assert.equal((await client.fetchBlockIdByTime(time, 'gt')).block.num, transferBlock + 1)
    assert.equal((await client.fetchBlockIdByTime(time, 'lt')).block.num, transferBlock - 1)
    const gte = await client.fetchBlockIdByTime(time, 'gte')
    assert.equal(gte.block.id, block.id.toString())
    assert.equal(Date.parse(gte.block.time), time.getTime())
    assert.doesNotMatch(
      gte.block.time,
      /\.\d*0Z$/,
      'RFC 3339 with trailing zeros of the fraction trimmed, as dfuse wrote it',
    )
  })

  await t.test('typed errors: above head, unknown table, missing row, not ready parameters', async () => {
    await assert.rejects(
      client.stateTable('eosio.token', 'alice', 'accounts', { blockNum: 4_000_000_000 }),
      (error: { code?: string; details?: { errors?: unknown } }) => {
        assert.equal(error.code, 'app_block_num_higher_than_head_block_error')
        return true
      },
    )
    await assert.rejects(
      client.stateTableRow('eosio.token', 'alice', 'accounts', 'XYZ', { keyType: 'symbol_code' }),
      (error: { code?: string }) => error.code === 'data_row_not_found_error',
    )
    await assert.rejects(
      client.stateAbi('nobody'),
      (error: { code?: string }) => error.code === 'data_abi_not_found_error',
    )
    for (const [path, code] of [
      ['/v0/state/table?account=eosio.token&scope=alice&table=accounts&key_type=octal', 'request_validation_error'],
      ['/v0/state/table?account=EOSIO&scope=alice&table=accounts', 'request_validation_error'],
      ['/v0/state/table?account=eosio.token&table=accounts', 'request_validation_error'],
      [
        '/v0/state/table?account=eosio.token&scope=alice&table=accounts&block_num=99999999999999999999',
        'request_validation_error',
      ],
      [
        `/v0/state/tables/scopes?account=eosio.token&table=accounts&scopes=${Array.from({ length: 1501 }, () => 'alice').join('|')}`,
        'request_validation_error',
      ],
      ['/v0/block_id/by_time?time=yesterday&comparator=gt', 'request_validation_error'],
      ['/v0/state/key_accounts?public_key=EOSnotakey', 'request_validation_error'],
    ] as const) {
      const answer = await get(path)
      assert.equal(answer.status, 400, `${path}: ${JSON.stringify(answer.body)}`)
      assert.ok(isStandardError(answer.body))
      assert.equal(answer.body.code, code, path)
    }
    const noToken = await fetch(`${p.api}/v0/state/table?account=eosio.token&scope=alice&table=accounts`)
    assert.equal(noToken.status, 401)
  })
})
