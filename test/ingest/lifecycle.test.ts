import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { Chain, bootChain, pushSigned } from '../../src/devchain/index.ts'
import { startShipServer } from '../../src/devchain/ship-server.ts'
import { createIndexer } from '../../src/ingest/index.ts'
import { TRANSACTION_CANCELED, openSqliteStore } from '../../src/store/index.ts'
import { tempDir } from '../_helpers/devchain.ts'
import { onCleanup } from '../_helpers/cleanup.ts'

const transfer = (memo: string) => ({
  account: 'eosio.token',
  name: 'transfer',
  authorization: [{ actor: 'alice', permission: 'active' }],
  data: { from: 'alice', to: 'bob', quantity: '1.0000 EOS', memo },
})

test('ingest records delayed, executed-as-scheduled and canceled transactions, and row changes per block', async (t) => {
  let now = Date.parse('2030-01-01T00:00:00Z')
  const chain = new Chain({ dataDir: undefined, producers: 1, libDepth: 12, now: () => now })
  onCleanup(t, () => chain.close())
  bootChain(chain)
  const runs = pushSigned(chain, [transfer('runs later')], { delaySec: 1 }).trace.id
  const canceled = pushSigned(chain, [transfer('canceled')], { delaySec: 1 }).trace.id
  const delayedIn = chain.produceBlock().num
  pushSigned(chain, [
    {
      account: 'eosio',
      name: 'canceldelay',
      authorization: [{ actor: 'alice', permission: 'active' }],
      data: { canceling_auth: { actor: 'alice', permission: 'active' }, trx_id: canceled },
    },
  ])
  const canceledIn = chain.produceBlock().num
  for (let i = 0; i < 6; i++) {
    now += 500
    chain.produceBlock()
  }
  const server = await startShipServer({ chain, host: '127.0.0.1', port: 0 })
  onCleanup(t, () => server.close())
  const store = openSqliteStore(join(tempDir(t), 'store.sqlite'))
  onCleanup(t, () => store.close())
  await createIndexer({ shipUrl: `ws://127.0.0.1:${server.port}`, store, endBlockNum: chain.head.num }).run()

  const ran = await store.transactionHistory(runs)
  assert.deepEqual(
    ran.records.map((r) => [r.blockNum === delayedIn, r.status, r.scheduled]),
    [
      [true, 3, false],
      [false, 0, true],
    ],
  )
  assert.equal((await store.actionsOfTransaction(runs)).map((a) => a.receiver).join(), 'eosio.token,alice,bob')
  const gone = await store.transactionHistory(canceled)
  assert.deepEqual(
    gone.records.map((r) => [r.blockNum, r.status]),
    [
      [delayedIn, 3],
      [canceledIn, TRANSACTION_CANCELED],
    ],
  )
  assert.deepEqual(await store.actionsOfTransaction(canceled), [])
  const executedIn = ran.records[1].blockNum
  const balances = (await store.rowChanges(executedIn)).filter(
    (c) => c.code === 'eosio.token' && c.table === 'accounts',
  )
  assert.deepEqual(balances.map((c) => c.scope).sort(), ['alice', 'bob'])
  assert.ok(
    balances.every((c) => c.old && c.value && c.old.value),
    'both balances existed before and after',
  )
  assert.equal((await store.blockByNum(executedIn))?.transactionCount, 2, 'onblock and the scheduled transfer')

  // What the lifecycle shows beyond statuses: the deferred creation, the signed header, each action's trace, the block
  // header.
  const creation = ran.records[0].details?.deferred
  assert.deepEqual(
    [creation?.sender, creation?.payer, creation?.createdBy],
    ['', 'alice', { trxId: runs, actionOrdinal: 0 }],
  )
  assert.ok(creation && creation.packedTrx.length > 20, 'the packed transaction is kept')
  const pushed = ran.records[0].details?.header
  assert.equal(pushed?.delaySec, 1)
  assert.equal(pushed?.signatures.length, 1, 'the delayed push was signed once')
  const actions = await store.actionsOfTransaction(runs)
  assert.deepEqual(
    actions.map((a) => a.trace?.authSequence.map(([actor]) => actor)),
    [['alice'], ['alice'], ['alice']],
    'every receipt names its authorizer',
  )
  // The scheduled run's actions carry `creator:` (a delayed push: its payer, alice); nothing else does.
  const created = await store.searchActions({ query: { term: 'creator:alice' }, direction: 'forward', limit: 100 })
  assert.deepEqual(
    (await store.actionsBySeq(created.map((m) => m.seq))).map((a) => [a.trxId, a.receiver]),
    actions.map((a) => [runs, a.receiver]),
  )
  const header = (await store.blockByNum(executedIn))?.header
  assert.ok(
    header && /^[0-9a-f]{64}$/.test(header.actionMroot) && header.actionMroot !== '0'.repeat(64),
    'the block header carries its action root',
  )
})
