import { test } from 'node:test'
import assert from 'node:assert/strict'
import { pushSigned } from '../../src/devchain/index.ts'
import { createLifecycleService } from '../../src/lifecycle/index.ts'
import { BLOCK_ACTIONS_PAGE } from '../../src/lifecycle/block-actions.ts'
import { PG_SKIP_REASON } from '../_helpers/postgres.ts'
import { startHarness, transferAction } from '../search/harness.ts'

const RAWDB = [{ actor: 'rawdb', permission: 'active' }]
const put = { account: 'rawdb', name: 'put', authorization: RAWDB }
const notifyAlice = { account: 'rawdb', name: 'notify', authorization: RAWDB, data: { recipients: ['alice'] } }
/** An action on an account without code: it runs nothing and changes no row (the devchain's cap is 4096 a trace). */
const noop = {
  account: 'bob',
  name: 'noop',
  authorization: [{ actor: 'bob', permission: 'active' }],
  data: new Uint8Array(),
}

// A block's actions are read a page at a time (src/lifecycle/block-actions.ts) to attribute row
// changes and to find a canceling action: a block of more actions than a page must give the same
// dbops and canceled_by as a small one, from every page (a transaction past the first page counts).
for (const { adapter, skip } of [
  { adapter: 'sqlite', skip: false },
  { adapter: 'postgres', skip: PG_SKIP_REASON },
] as const)
  test(
    `lifecycle dbops and canceled_by in a block of more than ${BLOCK_ACTIONS_PAGE} actions on ${adapter}: every page is read, single and batch agree, any page size gives the same lifecycle`,
    { skip },
    async (t) => {
      const h = await startHarness(t, { adapter })
      const { chain } = h
      let nonce = 2_000_000
      const push = (actions: Parameters<typeof pushSigned>[1], delaySec?: number) =>
        pushSigned(chain, actions, { nonce: ++nonce, ...(delaySec ? { delaySec } : {}) }).trace.id
      const delayed = push([transferAction('carol', 'alice', '0.0001 EOS', 'canceled in the large block')], 3_600)
      chain.produceBlock()

      // The large block: a transfer (first page), a rawdb transaction and actions that change nothing, more than a
      // page in all, then a second transfer and the cancelation of `delayed` (both past the first page).
      const first = push([transferAction('alice', 'bob', '0.0001 EOS', 'first page')])
      const large = push([
        { ...put, data: { scope: 'rawdb', table: 't', key: '1', payer: 'rawdb', value: 'aa' } },
        ...Array.from({ length: 1_000 }, () => notifyAlice),
      ])
      push(Array.from({ length: BLOCK_ACTIONS_PAGE - 1_800 }, () => noop))
      const last = push([transferAction('bob', 'carol', '0.0002 EOS', 'last page')])
      const canceling = push([
        {
          account: 'eosio',
          name: 'canceldelay',
          authorization: [{ actor: 'carol', permission: 'active' }],
          data: { canceling_auth: { actor: 'carol', permission: 'active' }, trx_id: delayed },
        },
      ])
      chain.produceBlock()
      await h.synced()

      const lifecycle = createLifecycleService({ store: h.store })
      const lifecycleOf = async (id: string) => {
        const found = await lifecycle.lifecycle(id)
        assert.ok(found, `the lifecycle of ${id}`)
        return found
      }
      const largeLifecycle = await lifecycleOf(large)
      const blockNum = largeLifecycle.execution_trace!.block_num
      const block = await h.store.blockByNum(blockNum)
      assert.ok(block && block.actionCount > BLOCK_ACTIONS_PAGE, `block ${blockNum} holds more than a page of actions`)
      assert.equal((await lifecycleOf(last)).execution_trace?.block_num, blockNum)

      // rawdb ran only in the large transaction: its row is the transaction's, at its last rawdb action (put, then
      // each notify followed by alice's notification).
      assert.deepEqual(
        largeLifecycle.dbops.map((d) => [d.op, d.account, d.table, d.key, d.action_idx]),
        [['INS', 'rawdb', 't', '............1', 1 + 2 * 999]],
      )
      // eosio.token ran in the first transfer and in the last one (past the first page): neither gets its rows.
      assert.deepEqual((await lifecycleOf(first)).dbops, [], 'the last transfer, past the first page, ran eosio.token')
      assert.deepEqual((await lifecycleOf(last)).dbops, [], 'the first transfer ran eosio.token')
      // The canceling action lies past the first page.
      const canceled = await lifecycleOf(delayed)
      assert.equal(canceled.transaction_status, 'canceled')
      assert.equal(canceled.canceled_by?.src_trx_id, canceling)
      assert.equal(canceled.canceled_by?.block_num, blockNum)

      const ids = [delayed, first, large, last, canceling]
      const batch = await lifecycle.lifecycles(ids)
      const paged = createLifecycleService({ store: h.store, blockActionsPage: 7 })
      const pagedBatch = await paged.lifecycles(ids)
      for (const id of ids) {
        const single = await lifecycleOf(id)
        assert.deepEqual(batch.get(id), single, `the batch lifecycle of ${id}`)
        assert.deepEqual(await paged.lifecycle(id), single, `the lifecycle of ${id} read 7 actions at a time`)
        assert.deepEqual(pagedBatch.get(id), single, `the batch lifecycle of ${id} read 7 actions at a time`)
      }
    },
  )
