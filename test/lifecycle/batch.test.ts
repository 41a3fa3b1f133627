import { test } from 'node:test'
import assert from 'node:assert/strict'
import { pushSigned } from '../../src/devchain/index.ts'
import { createLifecycleService } from '../../src/lifecycle/index.ts'
import { createSearchService } from '../../src/search/index.ts'
import { PG_SKIP_REASON } from '../_helpers/postgres.ts'
import { startHarness, transferAction } from '../search/harness.ts'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// `lifecycles(ids)` reads a page's lifecycles in batch reads (src/lifecycle/batch.ts); it must
// answer exactly what `lifecycle(id)` answers for each id, whatever became of the transaction.
for (const { adapter, skip } of [
  { adapter: 'sqlite', skip: false },
  { adapter: 'postgres', skip: PG_SKIP_REASON },
] as const)
  test(
    `lifecycles in batch on ${adapter}: each equals lifecycle(id): executed, delayed, executed as scheduled, canceled, forked out, unknown; and through a search page`,
    { skip },
    async (t) => {
      const h = await startHarness(t, { libDepth: 6, adapter })
      const { chain } = h
      const ids: string[] = []
      let nonce = 1_000_000
      const push = (actions: Parameters<typeof pushSigned>[1], delaySec?: number) => {
        const id = pushSigned(chain, actions, { nonce: ++nonce, ...(delaySec ? { delaySec } : {}) }).trace.id
        ids.push(id)
        return id
      }
      for (let i = 0; i < 6; i++) {
        push([transferAction('alice', 'bob', '0.0001 EOS', `a${i}`)])
        push([
          transferAction('bob', 'carol', '0.0002 EOS', `b${i}`),
          transferAction('carol', 'alice', '0.0003 EOS', `c${i}`),
        ])
        chain.produceBlock()
      }
      push([transferAction('alice', 'carol', '0.0004 EOS', 'runs later')], 1)
      const canceled = push([transferAction('alice', 'carol', '0.0005 EOS', 'canceled')], 1)
      chain.produceBlock()
      push([
        {
          account: 'eosio',
          name: 'canceldelay',
          authorization: [{ actor: 'alice', permission: 'active' }],
          data: { canceling_auth: { actor: 'alice', permission: 'active' }, trx_id: canceled },
        },
      ])
      chain.produceBlock()
      await sleep(1_100)
      for (let i = 0; i < 3; i++) chain.produceBlock()
      // A transaction whose only block is forked out (and not replayed), and a still-delayed one.
      const forked = push([transferAction('carol', 'bob', '0.0006 EOS', 'forked')])
      chain.produceBlock()
      await h.synced()
      chain.fork(1, [forked])
      push([transferAction('bob', 'alice', '0.0007 EOS', 'delayed')], 3_600)
      chain.produceBlock()
      await h.synced()
      ids.push('00'.repeat(32))

      const lifecycle = createLifecycleService({ store: h.store })
      const batch = await lifecycle.lifecycles([...ids, ids[0]])
      const statuses = new Set<string>()
      for (const id of ids) {
        const single = await lifecycle.lifecycle(id)
        assert.deepEqual(batch.get(id), single, `the lifecycle of ${id}`)
        if (single) statuses.add(single.transaction_status)
      }
      assert.deepEqual([...statuses].sort(), ['canceled', 'delayed', 'executed', 'forked_out'])
      assert.deepEqual(
        [...batch.keys()],
        ids.filter((id) => batch.has(id)),
        'in the order asked',
      )

      // A search page passes its own reads (the transactions' actions, the rows' blocks) to the batch.
      const search = createSearchService({ store: h.store, lifecycle, cursorKey: h.cursorKey })
      for (const sort of ['asc', 'desc'] as const) {
        const page = await search.searchTransactions({
          query: 'action:transfer',
          withReversible: true,
          sort,
          limit: 100,
        })
        assert.ok((page.transactions?.length ?? 0) >= 14)
        for (const row of page.transactions!)
          assert.deepEqual(row.lifecycle, await lifecycle.lifecycle(row.lifecycle.id))
      }
    },
  )
