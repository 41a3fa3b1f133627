import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { ABI } from '@wharfkit/antelope'
import { encodeAbiBinary, sha256, toHex } from '../../src/antelope/index.ts'
import { pushSigned } from '../../src/devchain/index.ts'
import { createIndexer } from '../../src/ingest/index.ts'
import { openSqliteStore, type SearchExpr } from '../../src/store/index.ts'
import { tempDir, withDevchain } from '../_helpers/devchain.ts'

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

test('ingest indexes DESIGN §7 terms, decoding action data with the ABI in force at each action', async (t) => {
  const devchain = await withDevchain(t)
  const chain = devchain.chain
  const push = (actions: Parameters<typeof pushSigned>[1]) => {
    pushSigned(chain, actions)
    chain.produceBlock()
  }
  const transfer = (from: string, to: string, memo: string) => ({ account: 'eosio.token', name: 'transfer', authorization: [{ actor: from, permission: 'active' }], data: { from, to, quantity: '0.0100 EOS', memo } })
  for (let i = 0; i < 3; i++) push([transfer('alice', 'bob', `ab${i}`)])
  for (let i = 0; i < 2; i++) push([transfer('bob', 'carol', `bc${i}`)])
  push([{ account: 'rawdb', name: 'put', authorization: [{ actor: 'alice', permission: 'active' }], data: { scope: 'alice', table: 'rows', key: '7', payer: 'alice', value: '0102' } }])
  // carol's ABI changes between two `note` actions: each must be read with its own.
  const v1 = encodeAbiBinary(noteAbi([['to', 'name'], ['quantity', 'asset']]))
  const setabi = (abi: Uint8Array) => ({ account: 'eosio', name: 'setabi', authorization: [{ actor: 'carol', permission: 'active' }], data: { account: 'carol', abi: toHex(abi) } })
  // Both changes land in the same blocks as the notes that follow them.
  pushSigned(chain, [setabi(v1)])
  push([{ account: 'carol', name: 'note', authorization: [{ actor: 'carol', permission: 'active' }], data: { to: 'alice', quantity: '5.000 XYZ' } }])
  pushSigned(chain, [setabi(encodeAbiBinary(noteAbi([['owner', 'name']])))])
  push([{ account: 'carol', name: 'note', authorization: [{ actor: 'carol', permission: 'active' }], data: { owner: 'bob' } }])

  const store = openSqliteStore(join(tempDir(t), 'store.sqlite'))
  t.after(() => store.close())
  await createIndexer({ shipUrl: devchain.ship, store, endBlockNum: chain.head.num }).run()

  const search = async (query: SearchExpr, direction: 'forward' | 'backward' = 'forward', limit = 100) => {
    const found = await store.searchActions({ query, direction, limit })
    return store.actionsBySeq(found.map((m) => m.seq))
  }
  const toBob = await search({ and: [{ term: 'action:transfer' }, { term: 'data.from:alice' }, { term: 'data.to:bob' }] })
  assert.equal(toBob.length, 9, 'three transfers, each seen by eosio.token, alice and bob')
  assert.deepEqual(new Set(toBob.map((a) => a.receiver)), new Set(['eosio.token', 'alice', 'bob']))
  const inputs = await search({ and: [{ term: 'data.to:bob' }, { term: 'auth:alice' }, { flag: 'notif', value: false }] })
  assert.equal(inputs.length, 3)
  assert.ok(inputs.every((a) => a.receiver === 'eosio.token' && a.creatorActionOrdinal === 0))
  assert.equal((await search({ and: [{ term: 'data.from:bob' }, { term: 'receiver:carol' }, { term: 'auth:bob@active' }] })).length, 2)
  assert.equal((await search({ and: [{ term: 'data.quantity:0.0100 EOS' }, { flag: 'input', value: true }] })).length, 5)
  const latest = await search({ term: 'receiver:eosio.token' }, 'backward', 1)
  assert.equal(latest.length, 1)
  assert.equal(latest[0].trxId, (await search({ and: [{ term: 'data.to:carol' }, { flag: 'notif', value: false }] }, 'backward', 1))[0].trxId)

  const v1Note = await search({ and: [{ term: 'account:carol' }, { term: 'data.to:alice' }] })
  assert.equal(v1Note.length, 1, 'the first note, read with ABI v1')
  assert.equal((await search({ term: 'data.quantity:5.000 XYZ' })).length, 1)
  assert.equal((await search({ and: [{ term: 'account:carol' }, { term: 'data.owner:bob' }] })).length, 1, 'the second note, read with ABI v2')
  assert.equal((await search({ term: `data.abi:${toHex(sha256(v1))}` })).length, 1, 'setabi is found by the hash of its ABI')
  assert.equal((await search({ term: 'ram.consumed:alice' })).filter((a) => a.account === 'rawdb').length, 1, 'the put billed alice for RAM')
  assert.deepEqual(await search({ term: 'data.memo:ab0' }), [], 'memo is not an indexed field')
})
