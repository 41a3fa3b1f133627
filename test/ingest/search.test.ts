import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { ABI, Serializer } from '@wharfkit/antelope'
import { encodeAbiBinary, sha256, toHex } from '../../src/antelope/index.ts'
import { pushSigned, rawdb } from '../../src/devchain/index.ts'
import { createIndexer } from '../../src/ingest/index.ts'
import { openSqliteStore, type SearchExpr } from '../../src/store/index.ts'
import { tempDir, withDevchain } from '../_helpers/devchain.ts'
import { onCleanup } from '../_helpers/cleanup.ts'

const noteAbi = (fields: [string, string][]) =>
  ABI.from({
    version: 'eosio::abi/1.1',
    types: [],
    structs: [{ name: 'note', base: '', fields: fields.map(([name, type]) => ({ name, type })) }],
    actions: [{ name: 'note', type: 'note', ricardian_contract: '' }],
    tables: [],
    ricardian_clauses: [],
    variants: [],
  })

test('ingest indexes the search terms, decoding action data with the ABI in force at each action', async (t) => {
  const devchain = await withDevchain(t)
  const chain = devchain.chain
  const push = (actions: Parameters<typeof pushSigned>[1]) => {
    pushSigned(chain, actions)
    chain.produceBlock()
  }
  const transfer = (from: string, to: string, memo: string) => ({
    account: 'eosio.token',
    name: 'transfer',
    authorization: [{ actor: from, permission: 'active' }],
    data: { from, to, quantity: '0.0100 EOS', memo },
  })
  for (let i = 0; i < 3; i++) push([transfer('alice', 'bob', `ab${i}`)])
  const firstBobToCarol = pushSigned(chain, [transfer('bob', 'carol', 'bc0')]).trace.id
  chain.produceBlock()
  push([transfer('bob', 'carol', 'bc1')])
  push([
    {
      account: 'rawdb',
      name: 'put',
      authorization: [{ actor: 'alice', permission: 'active' }],
      data: { scope: 'alice', table: 'rows', key: '7', payer: 'alice', value: '0102' },
    },
  ])
  // rawdb::send runs an inline rawdb::put (a row of scope bob) in the same block as rawdb::notify(carol).
  const innerPut = Serializer.encode({
    abi: rawdb.abi,
    type: 'put',
    object: { scope: 'bob', table: 'rows', key: '1', payer: 'rawdb', value: '03' },
  }).hexString
  const rawdbActive = [{ actor: 'rawdb', permission: 'active' }]
  pushSigned(chain, [
    {
      account: 'rawdb',
      name: 'send',
      authorization: rawdbActive,
      data: { account: 'rawdb', name: 'put', authorization: rawdbActive, data: innerPut },
    },
  ])
  push([{ account: 'rawdb', name: 'notify', authorization: rawdbActive, data: { recipients: ['carol'] } }])
  // carol's ABI changes between two `note` actions: each must be read with its own.
  const v1 = encodeAbiBinary(
    noteAbi([
      ['to', 'name'],
      ['quantity', 'asset'],
    ]),
  )
  const setabi = (abi: Uint8Array) => ({
    account: 'eosio',
    name: 'setabi',
    authorization: [{ actor: 'carol', permission: 'active' }],
    data: { account: 'carol', abi: toHex(abi) },
  })
  // Both changes land in the same blocks as the notes that follow them.
  pushSigned(chain, [setabi(v1)])
  push([
    {
      account: 'carol',
      name: 'note',
      authorization: [{ actor: 'carol', permission: 'active' }],
      data: { to: 'alice', quantity: '5.000 XYZ' },
    },
  ])
  pushSigned(chain, [setabi(encodeAbiBinary(noteAbi([['owner', 'name']])))])
  push([
    {
      account: 'carol',
      name: 'note',
      authorization: [{ actor: 'carol', permission: 'active' }],
      data: { owner: 'bob' },
    },
  ])

  const store = openSqliteStore(join(tempDir(t), 'store.sqlite'))
  onCleanup(t, () => store.close())
  await createIndexer({ shipUrl: devchain.ship, store, endBlockNum: chain.head.num }).run()

  const search = async (query: SearchExpr, direction: 'forward' | 'backward' = 'forward', limit = 100) => {
    const found = await store.searchActions({ query, direction, limit })
    return store.actionsBySeq(found.map((m) => m.seq))
  }
  const toBob = await search({
    and: [{ term: 'action:transfer' }, { term: 'data.from:alice' }, { term: 'data.to:bob' }],
  })
  assert.equal(toBob.length, 9, 'three transfers, each seen by eosio.token, alice and bob')
  assert.deepEqual(new Set(toBob.map((a) => a.receiver)), new Set(['eosio.token', 'alice', 'bob']))
  const inputs = await search({
    and: [{ term: 'data.to:bob' }, { term: 'auth:alice' }, { flag: 'notif', value: false }],
  })
  assert.equal(inputs.length, 3)
  assert.ok(inputs.every((a) => a.receiver === 'eosio.token' && a.creatorActionOrdinal === 0))
  assert.equal(
    (await search({ and: [{ term: 'data.from:bob' }, { term: 'receiver:carol' }, { term: 'auth:bob@active' }] }))
      .length,
    2,
  )
  assert.equal(
    (await search({ and: [{ term: 'data.quantity:0.0100 EOS' }, { flag: 'input', value: true }] })).length,
    5,
  )
  const latest = await search({ term: 'receiver:eosio.token' }, 'backward', 1)
  assert.equal(latest.length, 1)
  assert.equal(
    latest[0].trxId,
    (await search({ and: [{ term: 'data.to:carol' }, { flag: 'notif', value: false }] }, 'backward', 1))[0].trxId,
  )

  const v1Note = await search({ and: [{ term: 'account:carol' }, { term: 'data.to:alice' }] })
  assert.equal(v1Note.length, 1, 'the first note, read with ABI v1')
  assert.equal((await search({ term: 'data.quantity:5.000 XYZ' })).length, 1)
  assert.equal(
    (await search({ and: [{ term: 'account:carol' }, { term: 'data.owner:bob' }] })).length,
    1,
    'the second note, read with ABI v2',
  )
  assert.equal(
    (await search({ term: `data.abi:${toHex(sha256(v1))}` })).length,
    1,
    'setabi is found by the hash of its ABI',
  )
  assert.equal(
    (await search({ term: 'ram.consumed:alice' })).filter((a) => a.account === 'rawdb').length,
    1,
    'the put billed alice for RAM',
  )
  assert.deepEqual(await search({ term: 'data.memo:ab0' }), [], 'memo is not an indexed field')

  // trx_id: every action of the transaction (the transfer and its two notifications).
  const byTrx = await search({ term: `trx_id:${firstBobToCarol}` })
  assert.deepEqual(
    byTrx.map((a) => a.receiver),
    ['eosio.token', 'bob', 'carol'],
  )
  assert.ok(byTrx.every((a) => a.trxId === firstBobToCarol))
  // parent.*: a notification's parent is the action that notified it, an inline action's the one that sent it.
  const notified = await search({
    and: [
      { term: 'parent.receiver:eosio.token' },
      { term: 'parent.action:transfer' },
      { or: [{ term: 'data.from:alice' }, { term: 'data.from:bob' }] },
    ],
  })
  assert.equal(notified.length, 10, 'two notifications for each of the five transfers')
  assert.ok(notified.every((a) => a.receiver !== 'eosio.token' && a.creatorActionOrdinal === 1))
  const inline = await search({ term: 'parent.action:send' })
  assert.deepEqual(
    inline.map((a) => [a.receiver, a.account, a.name]),
    [['rawdb', 'rawdb', 'put']],
  )
  assert.deepEqual(
    (await search({ and: [{ term: 'parent.account:rawdb' }, { term: 'receiver:carol' }] })).map((a) => a.name),
    ['notify'],
  )
  assert.deepEqual(
    await search({ and: [{ term: 'parent.receiver:rawdb' }, { flag: 'input', value: true }] }),
    [],
    'an input action has no parent',
  )
  // db.*: a block's row changes go to the actions of that block run by the contract that owns them.
  const put = await search({ term: 'db.table:rows/alice' })
  assert.deepEqual(
    put.map((a) => [a.receiver, a.name]),
    [['rawdb', 'put']],
  )
  assert.deepEqual(await search({ term: 'db.key:rows/alice/............b' }), put, 'the key (7) rendered as a name')
  assert.deepEqual(
    (await search({ term: 'db.table:rows/bob' })).map((a) => a.name),
    ['send', 'put', 'notify'],
    'per block: every rawdb action of the block of the inline put, notify included (docs/API.md)',
  )
  assert.equal((await search({ term: 'db.table:rows' })).length, 4)
  const bobBalance = await search({
    and: [{ term: 'db.table:accounts/bob' }, { term: 'action:transfer' }, { not: { term: 'auth:eosio' } }],
  })
  assert.equal(
    bobBalance.length,
    5,
    "the five transfers that changed bob's balance (after boot), as run by eosio.token",
  )
  assert.ok(bobBalance.every((a) => a.receiver === 'eosio.token'))
})
