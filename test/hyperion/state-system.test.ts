import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ABI, Serializer, Transaction } from '@wharfkit/antelope'
import { AbiCache } from '../../src/antelope/index.ts'
import { encodeAbiBinary } from '../../src/antelope/abi.ts'
import { proposalsAt, voterScopesAt, votersAt } from '../../src/hyperion/state-system.ts'
import { balanceOf, tokenBalances, topHolders } from '../../src/hyperion/tokens.ts'

const SYSTEM_ABI = ABI.from({
  version: 'eosio::abi/1.1',
  structs: [
    {
      name: 'voter_info',
      base: '',
      fields: [
        { name: 'owner', type: 'name' },
        { name: 'proxy', type: 'name' },
        { name: 'producers', type: 'name[]' },
        { name: 'staked', type: 'int64' },
        { name: 'last_vote_weight', type: 'float64' },
        { name: 'proxied_vote_weight', type: 'float64' },
        { name: 'is_proxy', type: 'bool' },
      ],
    },
  ],
  tables: [{ name: 'voters', index_type: 'i64', key_names: [], key_types: [], type: 'voter_info' }],
})

const MSIG_ABI = ABI.from({
  version: 'eosio::abi/1.1',
  structs: [
    {
      name: 'proposal',
      base: '',
      fields: [
        { name: 'proposal_name', type: 'name' },
        { name: 'packed_transaction', type: 'bytes' },
        { name: 'earliest_exec_time', type: 'time_point?$' },
      ],
    },
    {
      name: 'permission_level',
      base: '',
      fields: [
        { name: 'actor', type: 'name' },
        { name: 'permission', type: 'name' },
      ],
    },
    {
      name: 'approval',
      base: '',
      fields: [
        { name: 'level', type: 'permission_level' },
        { name: 'time', type: 'time_point' },
      ],
    },
    {
      name: 'approvals_info',
      base: '',
      fields: [
        { name: 'version', type: 'uint8' },
        { name: 'proposal_name', type: 'name' },
        { name: 'requested_approvals', type: 'approval[]' },
        { name: 'provided_approvals', type: 'approval[]' },
      ],
    },
  ],
  tables: [
    { name: 'proposal', index_type: 'i64', key_names: [], key_types: [], type: 'proposal' },
    { name: 'approvals2', index_type: 'i64', key_names: [], key_types: [], type: 'approvals_info' },
  ],
})

const TOKEN_ABI = ABI.from({
  version: 'eosio::abi/1.1',
  structs: [{ name: 'account', base: '', fields: [{ name: 'balance', type: 'asset' }] }],
  tables: [{ name: 'accounts', index_type: 'i64', key_names: [], key_types: [], type: 'account' }],
})

/** A contract whose `accounts` table is not a balances table. */
const OTHER_ABI = ABI.from({
  version: 'eosio::abi/1.1',
  structs: [{ name: 'acct', base: '', fields: [{ name: 'owner', type: 'name' }] }],
  tables: [{ name: 'accounts', index_type: 'i64', key_names: [], key_types: [], type: 'acct' }],
})

interface FakeRow {
  code: string
  table: string
  scope: string
  blockNum: number
  value: Uint8Array
}

const encode = (abi: ABI, type: string, object: unknown) =>
  new Uint8Array(Serializer.encode({ abi, type, object }).array)

/** An in-memory reader at head over these ABIs and rows. */
function fakeReader(abis: Record<string, ABI>, rows: FakeRow[]) {
  const pick = (code: string, table: string) => rows.filter((r) => r.code === code && r.table === table)
  const out = (r: FakeRow, i: number) => ({
    scope: r.scope,
    primaryKey: BigInt(i),
    payer: r.scope,
    value: r.value,
    blockNum: r.blockNum,
  })
  return {
    async abi({ account }: { account: string }) {
      return abis[account] ? { abi: encodeAbiBinary(abis[account]), blockNum: 1 } : undefined
    },
    async scopes({ code, table }: { code: string; table: string }) {
      return [...new Set(pick(code, table).map((r) => r.scope))].sort()
    },
    async tableRows({ code, table, scope }: { code: string; table: string; scope: string }) {
      return pick(code, table)
        .filter((r) => r.scope === scope)
        .map(out)
    },
    async tableRowsOfScopes({ code, table, scopes }: { code: string; table: string; scopes: readonly string[] }) {
      return pick(code, table)
        .filter((r) => scopes.includes(r.scope))
        .map(out)
    },
    async tokenHoldings({ account }: { account: string }) {
      return rows
        .filter((r) => r.table === 'accounts' && r.scope === account)
        .map((r, i) => ({ code: r.code, primaryKey: BigInt(i), payer: account, value: r.value, blockNum: r.blockNum }))
    },
  }
}

const voter = (owner: string, producers: string[], weight: number, isProxy = false, blockNum = 5): FakeRow => ({
  code: 'eosio',
  table: 'voters',
  scope: 'eosio',
  blockNum,
  value: encode(SYSTEM_ABI, 'voter_info', {
    owner,
    proxy: '',
    producers,
    staked: 1000,
    last_vote_weight: weight,
    proxied_vote_weight: 0,
    is_proxy: isProxy,
  }),
})

test('votersAt and voterScopesAt read eosio voters: producers all-of, proxies, producer lists, by weight', async () => {
  const reader = fakeReader({ eosio: SYSTEM_ABI }, [
    voter('alice', ['prod1', 'prod2'], 10),
    voter('bob', ['prod1'], 30, true, 7),
    voter('carol', [], 20),
  ])
  const abis = new AbiCache()
  const all = await votersAt(reader, abis, { blockNum: 9, producers: [], isProxy: false, listProducers: false })
  assert.deepEqual(
    all.map((v) => [v.account, v.weight]),
    [
      ['bob', 30],
      ['carol', 20],
      ['alice', 10],
    ],
  )
  assert.deepEqual(all[0], { account: 'bob', weight: 30, staked: 1000, is_proxy: true, last_vote_block: 7 })
  const both = await votersAt(reader, abis, {
    blockNum: 9,
    producers: ['prod1', 'prod2'],
    isProxy: false,
    listProducers: true,
  })
  assert.deepEqual(
    both.map((v) => [v.account, v.producers]),
    [['alice', ['prod1', 'prod2']]],
  )
  const proxies = await votersAt(reader, abis, {
    blockNum: 9,
    producers: ['prod1'],
    isProxy: true,
    listProducers: false,
  })
  assert.deepEqual(
    proxies.map((v) => v.account),
    ['bob'],
  )
  assert.deepEqual(await voterScopesAt(reader, abis, { blockNum: 9, term: 'o', limit: 10 }), ['bob', 'carol'])
  assert.deepEqual(await voterScopesAt(reader, abis, { blockNum: 9, term: 'o', limit: 1 }), ['bob'])
  // No system contract ABI: empty, not an error.
  const bare = fakeReader({}, [voter('alice', ['prod1'], 1)])
  assert.deepEqual(await votersAt(bare, abis, { blockNum: 9, producers: [], isProxy: false, listProducers: false }), [])
})

test('proposalsAt reads eosio.msig proposals with their approvals and transaction, filtered', async () => {
  const trx = (expiration: string) =>
    Serializer.encode({
      object: Transaction.from({
        expiration,
        ref_block_num: 1,
        ref_block_prefix: 2,
        actions: [
          {
            account: 'eosio.token',
            name: 'transfer',
            authorization: [{ actor: 'alice', permission: 'active' }],
            data: '00',
          },
        ],
      }),
    }).hexString
  const proposal = (proposer: string, name: string, expiration: string, blockNum: number): FakeRow => ({
    code: 'eosio.msig',
    table: 'proposal',
    scope: proposer,
    blockNum,
    value: encode(MSIG_ABI, 'proposal', { proposal_name: name, packed_transaction: trx(expiration) }),
  })
  const approvals = (proposer: string, name: string, requested: string[], provided: string[]): FakeRow => ({
    code: 'eosio.msig',
    table: 'approvals2',
    scope: proposer,
    blockNum: 3,
    value: encode(MSIG_ABI, 'approvals_info', {
      version: 1,
      proposal_name: name,
      requested_approvals: requested.map((actor) => ({
        level: { actor, permission: 'active' },
        time: '1970-01-01T00:00:00.000',
      })),
      provided_approvals: provided.map((actor) => ({
        level: { actor, permission: 'active' },
        time: '2026-01-01T00:00:00.000',
      })),
    }),
  })
  const reader = fakeReader({ 'eosio.msig': MSIG_ABI }, [
    proposal('alice', 'pay', '2030-01-01T00:00:00', 4),
    approvals('alice', 'pay', ['bob'], ['carol']),
    proposal('dave', 'old', '2020-01-01T00:00:00', 6),
    approvals('dave', 'old', ['bob', 'carol'], []),
  ])
  const abis = new AbiCache()
  const nowMs = Date.parse('2026-06-01T00:00:00Z')
  const names = async (filter: Parameters<typeof proposalsAt>[2]['filter']) =>
    (await proposalsAt(reader, abis, { blockNum: 9, nowMs, filter })).map((p) => `${p.proposer}:${p.proposal_name}`)
  const all = await proposalsAt(reader, abis, { blockNum: 9, nowMs, filter: {} })
  assert.deepEqual(
    all.map((p) => p.proposal_name),
    ['old', 'pay'],
    'newest first',
  )
  const pay = all[1]
  assert.equal(pay.expiration, '2030-01-01T00:00:00')
  assert.deepEqual(pay.requested_approvals, [{ actor: 'bob', permission: 'active', time: '1970-01-01T00:00:00.000' }])
  assert.deepEqual(pay.provided_approvals, [{ actor: 'carol', permission: 'active', time: '2026-01-01T00:00:00.000' }])
  assert.equal((pay.trx as { actions: { name: string }[] }).actions[0].name, 'transfer')
  assert.equal(pay.earliest_exec_time, null)
  assert.deepEqual(await names({ proposer: 'alice' }), ['alice:pay'])
  assert.deepEqual(await names({ expired: true }), ['dave:old'])
  assert.deepEqual(await names({ expired: false }), ['alice:pay'])
  assert.deepEqual(await names({ requested: ['carol'] }), ['dave:old'])
  assert.deepEqual(await names({ provided: ['carol'] }), ['alice:pay'])
  assert.deepEqual(await names({ accounts: ['bob', 'carol'] }), ['dave:old', 'alice:pay'])
  assert.deepEqual(await names({ executed: true }), [], 'executed proposals leave the tables')
  assert.deepEqual(await proposalsAt(fakeReader({}, []), abis, { blockNum: 9, nowMs, filter: {} }), [])
})

test('tokens: balances with their precision from every balances table, others skipped; top holders ranked', async () => {
  assert.deepEqual(balanceOf('12.3400 EOS'), { symbol: 'EOS', precision: 4, amount: 12.34 })
  assert.deepEqual(balanceOf('7 GEM'), { symbol: 'GEM', precision: 0, amount: 7 })
  assert.equal(balanceOf('nope'), undefined)
  const balance = (code: string, scope: string, asset: string, blockNum = 2): FakeRow => ({
    code,
    table: 'accounts',
    scope,
    blockNum,
    value: encode(TOKEN_ABI, 'account', { balance: asset }),
  })
  const reader = fakeReader({ 'eosio.token': TOKEN_ABI, gems: TOKEN_ABI, other: OTHER_ABI }, [
    balance('eosio.token', 'alice', '1.5000 EOS'),
    balance('gems', 'alice', '3 GEM'),
    {
      code: 'other',
      table: 'accounts',
      scope: 'alice',
      blockNum: 2,
      value: encode(OTHER_ABI, 'acct', { owner: 'bob' }),
    },
    balance('nobody', 'alice', '1 X'),
    balance('gems', 'bob', '30 GEM', 4),
    balance('gems', 'carol', '3 GEM'),
  ])
  const abis = new AbiCache()
  assert.deepEqual(await tokenBalances(reader, abis, { account: 'alice', blockNum: 9, window: 10 }), [
    { symbol: 'EOS', precision: 4, amount: 1.5, contract: 'eosio.token' },
    { symbol: 'GEM', precision: 0, amount: 3, contract: 'gems' },
  ])
  const holders = await topHolders(reader, abis, { contract: 'gems', symbol: undefined, blockNum: 9, maxRows: 10 })
  assert.deepEqual(
    holders?.map((h) => [h.owner, h.amount, h.blockNum]),
    [
      ['bob', 30, 4],
      ['alice', 3, 2],
      ['carol', 3, 2],
    ],
  )
  assert.deepEqual(await topHolders(reader, abis, { contract: 'gems', symbol: 'EOS', blockNum: 9, maxRows: 10 }), [])
  assert.equal(
    await topHolders(reader, abis, { contract: 'gems', symbol: undefined, blockNum: 9, maxRows: 2 }),
    undefined,
  )
})
