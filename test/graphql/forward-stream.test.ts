import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomInt } from 'node:crypto'
import { createGraphqlRuntime, type GraphqlServices } from '../../src/graphql/index.ts'
import { ForwardStream } from '../../src/graphql/forward-stream.ts'
import type { SearchResult } from '../../src/graphql/results.ts'
import { createLiveHub } from '../../src/live/index.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { PG_SKIP_REASON } from '../_helpers/postgres.ts'
import { mulberry32 } from '../_helpers/random.ts'
import { until } from '../_helpers/store.ts'
import { scanStore } from '../search/brute-force.ts'
import { startHarness, type Adapter, type SearchHarness } from '../search/harness.ts'
import { randomQuery, workloadStep } from '../search/workload.ts'

/*
 * A randomized differential test of the GraphQL forward subscription, in process: a devchain runs the search tests'
 * seeded workload with random forks, an indexer follows it, and subscribers of random queries read history then live
 * steps through the live hub, some of them dropping and resuming from the cursor of the last message they applied
 * (apply or undo) at random. Each applies every message blindly (an apply adds the transaction's matches, an undo
 * removes them); at the end each must hold exactly what a fresh search of the final chain returns, having never
 * added what it held or removed what it did not hold.
 *
 * ANTLER_TEST_SEED=<n> replays a run.
 */

const SEED =
  process.env.ANTLER_TEST_SEED !== undefined ? Number(process.env.ANTLER_TEST_SEED) >>> 0 : randomInt(2 ** 31)
const WARM_UP_BLOCKS = 40
const LIVE_BLOCKS = 90
const SUBSCRIBERS = 6

/** A match as a client identifies it: the transaction in its block, with the matching actions' sequences. */
const keyOf = (r: { blockId: string; trxId: string }) => `${r.blockId}:${r.trxId}`

/** A blind subscriber: every result applied or withdrawn as it comes, resuming from its last cursor when it drops. */
class Subscriber {
  readonly held = new Map<string, string>()
  readonly problems: string[] = []
  messages = 0
  resumes = 0
  private cursor: string | undefined
  private stream: ForwardStream | undefined
  private stopped = false
  private readonly done: Promise<void>

  constructor(
    private readonly services: GraphqlServices,
    readonly query: string,
    private readonly dropRate: number,
    private readonly rand: () => number,
  ) {
    this.done = this.run()
  }

  private open(): ForwardStream {
    return new ForwardStream(this.services, {
      query: this.query,
      lowBlockNum: 1,
      cursor: this.cursor,
      limit: 0,
      irreversibleOnly: false,
      liveMarkerInterval: 0,
    })
  }

  private apply(result: SearchResult): void {
    this.messages++
    const trace = result.trace!
    const key = keyOf({ blockId: result.block.id, trxId: trace.id })
    const seqs = trace.matchingActions.map((a) => a.seq).join(',')
    if (result.undo) {
      if (this.held.get(key) !== seqs) this.problems.push(`undo of ${key} [${seqs}], held [${this.held.get(key)}]`)
      this.held.delete(key)
    } else {
      if (this.held.has(key)) this.problems.push(`apply of ${key}, already held`)
      this.held.set(key, seqs)
    }
    this.cursor = result.cursor
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const stream = (this.stream = this.open())
      try {
        for (;;) {
          const next = await stream.next()
          if (next.done || this.stopped) return
          this.apply(next.value)
          if (this.rand() < this.dropRate) {
            this.resumes++
            break
          }
        }
      } catch (error) {
        this.problems.push(`stream failed: ${(error as Error).message}`)
        return
      } finally {
        await stream.return()
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true
    await this.stream?.return()
    await this.done
  }
}

/** What a fresh search of the final chain returns for `query`: every match, keyed as subscribers key them. */
async function expected(h: SearchHarness, query: string): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  let cursor: string | undefined
  do {
    const page = await h.search.searchRows({
      query,
      bounds: {},
      cursor,
      limit: 1000,
      maxLimit: 1000,
      withReversible: true,
    })
    for (const row of page.rows) out.set(keyOf(row), row.actions.map((a) => a.globalSequence).join(','))
    cursor = page.cursor || undefined
  } while (cursor)
  return out
}

const ADAPTERS: { adapter: Adapter; skip: string | false }[] = [
  { adapter: 'sqlite', skip: false },
  { adapter: 'postgres', skip: PG_SKIP_REASON },
]

for (const { adapter, skip } of ADAPTERS)
  test(
    `GraphQL forward subscriptions on ${adapter} (seed ${SEED}): blind subscribers, resuming at random, end with a fresh search's matches under random forks`,
    { skip },
    async (t) => {
      t.diagnostic(`seed ${SEED} (rerun with ANTLER_TEST_SEED=${SEED})`)
      const rand = mulberry32(SEED)
      const h = await startHarness(t, { libDepth: 10, adapter })
      let forks = 0
      h.chain.subscribe((e) => void (e.type === 'fork' && forks++))
      for (let i = 0; i < WARM_UP_BLOCKS; i++) {
        workloadStep(h, rand)
        if (i % 10 === 0) await h.synced()
      }
      await h.synced()
      const hub = createLiveHub({ source: h.store, pollIntervalMs: 10 })
      onCleanup(t, () => hub.close())
      const runtime = createGraphqlRuntime({ search: h.search, store: h.store, live: hub, cursorKey: h.cursorKey })
      const pool = [...new Set((await scanStore(h.store)).flatMap((a) => [...a.terms]))].filter(
        (term) => !term.startsWith('data.abi:') && !term.startsWith('data.code:') && !term.startsWith('trx_id:'),
      )
      const queries = ['receiver:eosio.token action:transfer', 'receiver:rawdb']
      while (queries.length < SUBSCRIBERS) queries.push(randomQuery(rand, pool))
      const subscribers = queries.map(
        (query, i) => new Subscriber(runtime.services, query, i % 2 === 0 ? 0 : 0.15, mulberry32(SEED + i)),
      )
      onCleanup(t, () => Promise.all(subscribers.map((s) => s.stop())))

      for (let i = 0; i < LIVE_BLOCKS; i++) {
        workloadStep(h, rand)
        if (i % 6 === 0) await h.synced()
        if (i % 3 === 0) await new Promise((resolve) => setTimeout(resolve, 5))
      }
      await h.synced()
      hub.notify()
      t.diagnostic(`forks: ${forks}; queries: ${JSON.stringify(queries)}`)
      assert.ok(forks >= 3, `the workload forked (${forks} forks)`)
      for (const s of subscribers) {
        const want = await expected(h, s.query)
        const what = `seed ${SEED}, query ${JSON.stringify(s.query)} (${s.messages} messages, ${s.resumes} resumes)`
        await until(() => JSON.stringify([...s.held].sort()) === JSON.stringify([...want].sort()), what, 20_000).catch(
          () => undefined,
        )
        assert.deepEqual(s.problems, [], what)
        assert.deepEqual(new Map([...s.held].sort()), new Map([...want].sort()), what)
      }
      assert.ok(subscribers.some((s) => s.held.size > 0) && subscribers.some((s) => s.resumes > 0))
    },
  )
