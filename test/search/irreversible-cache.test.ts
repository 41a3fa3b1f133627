import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createLifecycleService } from '../../src/lifecycle/index.ts'
import { createSearchService } from '../../src/search/index.ts'
import { PG_SKIP_REASON } from '../_helpers/postgres.ts'
import { startHarness, transferAction } from './harness.ts'

// The caches of a search page (final lifecycles, irreversible executions and blocks, pinned answers) hold only what
// can no longer change: a fork of reversible blocks must change the next page, and the irreversible part of it must
// come from the caches.
for (const { adapter, skip } of [
  { adapter: 'sqlite', skip: false },
  { adapter: 'postgres', skip: PG_SKIP_REASON },
] as const)
  test(
    `search caches on ${adapter}: a page of reversible blocks changes with a fork; irreversible lifecycles are served from the cache`,
    { skip },
    async (t) => {
      const h = await startHarness(t, { libDepth: 6, adapter })
      for (let i = 0; i < 12; i++) {
        assert.ok(h.push([transferAction('alice', 'bob', '0.0001 EOS', `r${i}`)]))
        h.chain.produceBlock()
      }
      await h.synced()
      const lifecycle = createLifecycleService({ store: h.store })
      const search = createSearchService({ store: h.store, lifecycle, cursorKey: h.cursorKey })
      const request = { query: 'data.from:alice', withReversible: true, limit: 100 } as const
      type Page = {
        transactions:
          | {
              lifecycle: {
                id: string
                execution_trace: { block_num: number; producer_block_id: string } | null
                execution_irreversible: boolean
              }
            }[]
          | null
      }
      const before = JSON.parse((await search.searchTransactionsBody(request)).body.toString('utf8')) as Page
      assert.equal(
        JSON.stringify(before),
        JSON.stringify(await search.searchTransactions(request)),
        'the JSON is the page',
      )
      const lib = (await h.store.position())!.lib
      const rows = before.transactions!
      const reversible = rows.filter((r) => !r.lifecycle.execution_irreversible)
      const irreversible = rows.filter((r) => r.lifecycle.execution_irreversible)
      assert.equal(rows.length, 12)
      assert.ok(reversible.length >= 3 && irreversible.length >= 3, `${reversible.length} reversible, LIB ${lib}`)
      // Only the irreversible ones are kept.
      assert.equal(lifecycle.finalCache!.size, irreversible.length)
      // Read again: the same page, its irreversible lifecycles from the cache.
      const hits = lifecycle.finalCache!.hits
      assert.equal((await search.searchTransactionsBody(request)).body.toString('utf8'), JSON.stringify(before))
      assert.equal(lifecycle.finalCache!.hits - hits, irreversible.length)

      // Fork out the reversible blocks; the last transaction is not replayed, the others land in new blocks.
      const dropped = reversible.at(-1)!.lifecycle.id
      h.chain.fork(h.chain.head.num - reversible[0].lifecycle.execution_trace!.block_num + 1, [dropped])
      h.chain.produceBlock()
      await h.synced()
      const after = JSON.parse((await search.searchTransactionsBody(request)).body.toString('utf8')) as Page
      const afterIds = after.transactions!.map((r) => r.lifecycle.id)
      assert.ok(!afterIds.includes(dropped), 'the transaction forked out is gone')
      assert.deepEqual(
        afterIds,
        rows.map((r) => r.lifecycle.id).filter((id) => id !== dropped),
      )
      for (const row of after.transactions!) {
        const old = rows.find((r) => r.lifecycle.id === row.lifecycle.id)!
        const trace = row.lifecycle.execution_trace!
        if (old.lifecycle.execution_irreversible) assert.deepEqual(row, old, 'an irreversible transaction is unchanged')
        else
          assert.notEqual(
            trace.producer_block_id,
            old.lifecycle.execution_trace!.producer_block_id,
            `${row.lifecycle.id} is now in the new chain's block`,
          )
        // Each as assembled afresh, without any cache.
        const fresh = await createLifecycleService({ store: h.store, finalCache: false }).lifecycle(row.lifecycle.id)
        assert.deepEqual(row.lifecycle, JSON.parse(JSON.stringify(fresh)))
      }
    },
  )
