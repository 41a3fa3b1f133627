import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { AntlerError } from '../../src/antelope/index.ts'
import {
  createCursorCodec,
  createSearchService,
  type SearchRequest,
  type SearchRow,
  type SearchService,
  type SearchStore,
} from '../../src/search/index.ts'
import { PG_SKIP_REASON } from '../_helpers/postgres.ts'
import { fakeLifecycles, startHarness, transferAction, type SearchHarness } from './harness.ts'

const refused = (code: string, param?: string) => (error: unknown) => {
  assert.ok(error instanceof AntlerError, String(error))
  assert.equal(error.code, code, error.message)
  if (param)
    assert.ok(Object.keys((error.details.errors ?? {}) as object).includes(param), JSON.stringify(error.details))
  return true
}

/** Every row of a search, page by page through cursors (`limit` per page), and the pages' sizes. */
async function allPages(
  search: SearchService,
  request: SearchRequest,
  limit: number,
): Promise<{ rows: SearchRow[]; pages: number }> {
  const rows: SearchRow[] = []
  let cursor: string | undefined
  for (let pages = 1; ; pages++) {
    const page = await search.searchRows({ ...request, limit, cursor })
    assert.ok(page.rows.length <= limit)
    rows.push(...page.rows)
    if (page.cursor === '') return { rows, pages }
    assert.equal(page.rows.length, limit, 'a page with a cursor is full')
    cursor = page.cursor
    assert.ok(pages < 1000, 'paging ends')
  }
}

const key = (r: SearchRow) => `${r.blockNum}:${r.trxId}`

/** Ten blocks, each with a transfer alice→bob, plus bob→carol in every other one; returns the blocks. */
async function transfers(h: SearchHarness): Promise<number[]> {
  const blocks: number[] = []
  for (let i = 0; i < 10; i++) {
    assert.ok(h.push([transferAction('alice', 'bob', '0.0001 EOS', `a${i}`)]))
    if (i % 2 === 0) assert.ok(h.push([transferAction('bob', 'carol', '0.0001 EOS', `b${i}`)]))
    blocks.push(h.chain.produceBlock().num)
  }
  return blocks
}

test('search service: grouping by transaction, action_idx, both orders, paging with cursors, direction flips, ranges, reversibility, errors', async (t) => {
  const h = await startHarness(t, { libDepth: 4 })
  const blocks = await transfers(h)
  // LIB passes every transfer block.
  for (let i = 0; i < 6; i++) h.chain.produceBlock()
  await h.synced()

  await t.test(
    "a transfer is one row whose action_idx index its matching actions among the transaction's actions in execution order",
    async () => {
      const page = await h.search.searchRows({ query: 'action:transfer data.from:alice', limit: 100 })
      assert.equal(page.rows.length, 10)
      assert.equal(page.cursor, '')
      assert.deepEqual(
        page.rows.map((r) => r.blockNum),
        blocks,
      )
      for (const row of page.rows) {
        const all = await h.store.actionsOfTransaction(row.trxId)
        assert.deepEqual(
          row.actionIdx.map((i) => all[i].globalSequence),
          row.actions.map((a) => a.globalSequence),
        )
        assert.deepEqual(new Set(row.actions.map((a) => a.receiver)), new Set(['eosio.token', 'alice', 'bob']))
        assert.equal((await h.store.blockByNum(row.blockNum))?.id, row.blockId)
      }
      const bob = await h.search.searchRows({ query: 'receiver:bob data.from:alice', limit: 3 })
      for (const row of bob.rows)
        assert.deepEqual(
          row.actions.map((a) => a.receiver),
          ['bob'],
        )
      const wire = await h.search.searchTransactions({ query: 'receiver:carol', limit: 2 })
      assert.equal(wire.transactions?.length, 2)
      assert.deepEqual(Object.keys(wire).sort(), ['cursor', 'transactions'])
      assert.equal(
        (wire.transactions![0].lifecycle as { id: string }).id,
        (await h.search.searchRows({ query: 'receiver:carol', limit: 1 })).rows[0].trxId,
      )
      assert.deepEqual(await h.search.searchTransactions({ query: 'receiver:nobody' }), {
        cursor: '',
        transactions: null,
      })
    },
  )

  await t.test(
    'descending is the exact reverse of ascending; every limit pages through every row once, in order',
    async () => {
      const asc = (await h.search.searchRows({ query: 'action:transfer', limit: 100 })).rows
      const desc = (await h.search.searchRows({ query: 'action:transfer', limit: 100, sort: 'desc' })).rows
      // Fifteen transfers here and the genesis one (eosio to every user, in one transaction).
      assert.equal(asc.length, 16)
      assert.deepEqual(desc.map(key), asc.map(key).reverse())
      assert.deepEqual(
        desc.map((r) => r.actionIdx),
        asc.map((r) => r.actionIdx).reverse(),
        'action_idx ascending in both orders',
      )
      for (const limit of [1, 2, 3, 4, 7, 14, 15, 16]) {
        for (const sort of ['asc', 'desc'] as const) {
          const { rows, pages } = await allPages(h.search, { query: 'action:transfer', sort }, limit)
          assert.deepEqual(rows.map(key), (sort === 'asc' ? asc : desc).map(key), `limit ${limit} ${sort}`)
          assert.equal(pages, Math.max(1, Math.ceil(16 / limit)), `pages at limit ${limit}`)
        }
      }
    },
  )

  await t.test('a cursor resumes in either direction right after its transaction', async () => {
    const asc = (await h.search.searchRows({ query: 'action:transfer', limit: 100 })).rows
    for (const at of [0, 1, 6, 13, 15]) {
      const cursor = asc[at].cursor
      assert.deepEqual(
        (await h.search.searchRows({ query: 'action:transfer', limit: 100, cursor })).rows.map(key),
        asc.slice(at + 1).map(key),
        `asc after ${at}`,
      )
      assert.deepEqual(
        (await h.search.searchRows({ query: 'action:transfer', limit: 100, cursor, sort: 'desc' })).rows.map(key),
        asc.slice(0, at).reverse().map(key),
        `desc before ${at}`,
      )
    }
    // A descending page's cursor: forward from it gives what follows, without its transaction again.
    const desc = await h.search.searchRows({ query: 'receiver:bob', limit: 3, sort: 'desc' })
    const after = await h.search.searchRows({ query: 'receiver:bob', limit: 100, cursor: desc.cursor })
    assert.deepEqual(after.rows.map(key), desc.rows.slice(0, 2).reverse().map(key))
    assert.equal(after.cursor, '')
  })

  await t.test(
    'start_block and block_count bound the blocks (dfuse legacy boundaries, negative = below the searchable head)',
    async () => {
      const inBlocks = async (request: Omit<SearchRequest, 'query'>) => [
        ...new Set(
          (await h.search.searchRows({ query: 'data.from:alice', limit: 100, ...request })).rows.map((r) => r.blockNum),
        ),
      ]
      assert.deepEqual(await inBlocks({ startBlock: blocks[3] }), blocks.slice(3))
      assert.deepEqual(await inBlocks({ startBlock: blocks[3], blockCount: 2 }), blocks.slice(3, 6))
      assert.deepEqual(await inBlocks({ startBlock: blocks[3], sort: 'desc' }), blocks.slice(0, 4).reverse())
      assert.deepEqual(await inBlocks({ startBlock: blocks[5], blockCount: 1, sort: 'desc' }), [blocks[5], blocks[4]])
      const lib = (await h.store.position())!.lib
      assert.deepEqual(await inBlocks({ startBlock: blocks[7] - lib }), blocks.slice(7))
      assert.deepEqual(await inBlocks({ startBlock: -1_000_000 }), blocks)
      assert.deepEqual(await inBlocks({ startBlock: blocks[7] - lib, sort: 'desc' }), blocks.slice(0, 8).reverse())
    },
  )

  await t.test('with_reversible: false (the default) stops at LIB; true reaches the head', async () => {
    const more = [] as number[]
    for (let i = 0; i < 2; i++) {
      assert.ok(h.push([transferAction('carol', 'alice', '0.0001 EOS', `late${i}`)]))
      more.push(h.chain.produceBlock().num)
    }
    await h.synced()
    const lib = (await h.store.position())!.lib
    assert.ok(
      more.every((b) => b > lib),
      'the new transfers are reversible',
    )
    assert.deepEqual((await h.search.searchRows({ query: 'data.from:carol', limit: 100 })).rows, [])
    assert.deepEqual(
      (await h.search.searchRows({ query: 'data.from:carol', limit: 100, withReversible: true })).rows.map(
        (r) => r.blockNum,
      ),
      more,
    )
    assert.deepEqual(
      (
        await h.search.searchRows({ query: 'data.from:carol', limit: 100, withReversible: true, sort: 'desc' })
      ).rows.map((r) => r.blockNum),
      [...more].reverse(),
    )
    // A reversible cursor used without with_reversible: nothing above LIB.
    const cursor = (
      await h.search.searchRows({ query: 'action:transfer', limit: 1, withReversible: true, sort: 'desc' })
    ).cursor
    assert.ok(
      (await h.search.searchRows({ query: 'action:transfer', limit: 100, sort: 'desc', cursor })).rows.every(
        (r) => r.blockNum <= lib,
      ),
    )
    await assert.rejects(
      h.search.searchRows({ query: 'action:transfer', startBlock: lib + 1 }),
      refused('request_validation_error', 'start_block'),
    )
    await h.search.searchRows({ query: 'action:transfer', startBlock: lib + 1, withReversible: true })
  })

  await t.test('bad parameters, queries and cursors are refused before any read, with their codes', async () => {
    for (const [request, code, param] of [
      [{ limit: 0 }, 'request_validation_error', 'limit'],
      [{ limit: 101 }, 'request_validation_error', 'limit'],
      [{ limit: 1.5 }, 'request_validation_error', 'limit'],
      [{ blockCount: 0 }, 'request_validation_error', 'block_count'],
      [{ blockCount: 2 ** 32 }, 'request_validation_error', 'block_count'],
      [{ startBlock: 2 ** 32 }, 'request_validation_error', 'start_block'],
      [{ startBlock: 99_999_999 }, 'request_validation_error', 'start_block'],
      [{ query: 'status:soft_fail' }, 'request_validation_error', 'q'],
      [{ query: 'nosuchfield:x' }, 'request_validation_error', 'q'],
      [{ cursor: 'garbage' }, 'request_validation_error', 'cursor'],
      [
        {
          cursor: createCursorCodec(new Uint8Array(32)).encode({
            blockNum: blocks[0],
            blockId: (await h.store.blockByNum(blocks[0]))!.id,
            seq: 1,
          }),
        },
        'request_validation_error',
        'cursor',
      ],
    ] as [Partial<SearchRequest>, string, string | undefined][]) {
      await assert.rejects(
        h.search.searchRows({ query: 'action:transfer', ...request }),
        refused(code, param),
        JSON.stringify(request),
      )
    }
  })
})

test('search service: a cursor whose block was forked out warns and resumes on the new chain without skipping a match', async (t) => {
  const h = await startHarness(t, { libDepth: 12 })
  for (let i = 0; i < 8; i++) {
    assert.ok(h.push([transferAction('alice', 'bob', '0.0001 EOS', `f${i}`)]))
    h.chain.produceBlock()
  }
  await h.synced()
  const request = { query: 'data.from:alice', withReversible: true } as const
  const first = await h.search.searchRows({ ...request, limit: 6 })
  assert.equal(first.forkedHeadWarning, false)
  const cursorBlock = first.rows[5].blockNum
  // Fork out the last four blocks (cursor's included): their transactions land again in new blocks.
  const depth = h.chain.head.num - cursorBlock + 2
  h.chain.fork(depth)
  for (let i = 0; i < 3; i++) h.chain.produceBlock()
  await h.synced()
  const canonical = (await h.search.searchRows({ ...request, limit: 100 })).rows
  const resumed = await h.search.searchRows({ ...request, limit: 100, cursor: first.cursor })
  assert.equal(resumed.forkedHeadWarning, true)
  const firstBlock = Math.min(...resumed.rows.map((r) => r.blockNum))
  assert.ok(firstBlock <= cursorBlock, `resumes at or below the cursor's block (${firstBlock} vs ${cursorBlock})`)
  // Exactly what the new chain holds from the fork point on; the rows before it were delivered once.
  const kept = first.rows.filter((r) => r.blockNum < firstBlock).map(key)
  assert.deepEqual([...kept, ...resumed.rows.map(key)], canonical.map(key))
  const wire = await h.search.searchTransactions({ ...request, cursor: first.cursor })
  assert.equal(wire.forked_head_warning, true)
  // Backward from the forked cursor: the new chain from the cursor's block down.
  const back = await h.search.searchRows({ ...request, limit: 100, sort: 'desc', cursor: first.cursor })
  assert.equal(back.forkedHeadWarning, true)
  assert.deepEqual(
    back.rows.map(key),
    canonical
      .filter((r) => r.blockNum <= cursorBlock)
      .reverse()
      .map(key),
  )
})

/** A store whose engine calls are counted, and whose block at `flip` changes id for the first `flips` checks. */
function instrumented(store: SearchStore, options: { flips?: number; flipAt?: number } = {}) {
  const calls: { limit: number }[] = []
  let snapshots = 0
  let flips = options.flips ?? 0
  const wrapped: SearchStore = {
    ...store,
    searchActions: (args) => {
      calls.push({ limit: args.limit })
      return store.searchActions(args)
    },
    executionsOfActions: (s) => store.executionsOfActions(s),
    firstSeqFromBlock: (n) => store.firstSeqFromBlock(n),
    stepsAfter: (s, l) => store.stepsAfter(s, l),
    stepsOfBlock: (id) => store.stepsOfBlock(id),
    position: () => store.position(),
    blockByNum: (n) => store.blockByNum(n),
    snapshot: (read) =>
      store.snapshot((reader) => {
        snapshots++
        // Every second snapshot is a page's check: the anchor changed id while the page was read.
        if (snapshots % 2 === 0 && flips > 0) {
          flips--
          return read({
            ...reader,
            blockByNum: async (n) => ({ ...(await reader.blockByNum(n))!, id: 'ff'.repeat(32) }),
          })
        }
        return read(reader)
      }),
  }
  return { wrapped, calls, snapshots: () => snapshots }
}

test('search service: early termination, and a page read across a fork is read again (then a retryable 503)', async (t) => {
  const h = await startHarness(t, { libDepth: 2 })
  for (let i = 0; i < 30; i++) {
    for (let j = 0; j < 5; j++) h.push([transferAction('alice', 'bob', '0.0001 EOS', `${i}.${j}`)])
    h.chain.produceBlock()
  }
  for (let i = 0; i < 3; i++) h.chain.produceBlock()
  await h.synced()

  const counted = instrumented(h.store)
  const search = createSearchService({ store: counted.wrapped, lifecycle: fakeLifecycles, cursorKey: h.cursorKey })
  // One transaction per match: one engine call of limit + 1 matches.
  const page = await search.searchRows({ query: 'receiver:eosio.token data.from:alice', limit: 10 })
  assert.equal(page.rows.length, 10)
  assert.deepEqual(counted.calls, [{ limit: 11 }])
  // The default limit is 25.
  assert.equal((await h.search.searchRows({ query: 'data.from:alice' })).rows.length, 25)
  // Three matches per transaction: batches grow until the 11th transaction shows.
  counted.calls.length = 0
  const grouped = await search.searchRows({ query: 'data.from:alice', limit: 10, sort: 'desc' })
  assert.equal(grouped.rows.length, 10)
  assert.ok(grouped.rows.every((r) => r.actions.length === 3))
  assert.ok(
    counted.calls.length <= 3 && counted.calls.reduce((sum, c) => sum + c.limit, 0) <= 11 + 22 + 44,
    JSON.stringify(counted.calls),
  )

  // A page of irreversible blocks (the default) is pinned: no fork can reach it, no snapshot.
  assert.equal(counted.snapshots(), 0)
  // Two checks fail (a fork under a page reaching reversible blocks), the third passes: the same answer, read three
  // times.
  const reversible = { query: 'receiver:eosio.token', limit: 5, withReversible: true, sort: 'desc' as const }
  const flaky = instrumented(h.store, { flips: 2 })
  const retried = await createSearchService({
    store: flaky.wrapped,
    lifecycle: fakeLifecycles,
    cursorKey: h.cursorKey,
  }).searchRows(reversible)
  assert.deepEqual(retried.rows.map(key), (await h.search.searchRows(reversible)).rows.map(key))
  assert.equal(flaky.snapshots(), 6)
  const broken = instrumented(h.store, { flips: 100 })
  await assert.rejects(
    createSearchService({ store: broken.wrapped, lifecycle: fakeLifecycles, cursorKey: h.cursorKey }).searchRows(
      reversible,
    ),
    (e: unknown) =>
      e instanceof AntlerError && e.code === 'service_unavailable_error' && e.status === 503 && e.retryable === true,
  )
})

// On SQLite in one process a page's reads never yield to the indexer (the store answers
// synchronously): the races happen on PostgreSQL, where every read is a round trip.
for (const { adapter, skip } of [
  { adapter: 'sqlite', skip: false },
  { adapter: 'postgres', skip: PG_SKIP_REASON },
] as const)
  test(
    `search service on ${adapter}: pages read while the chain forks under them each come from one chain`,
    { skip },
    async (t) => {
      const h = await startHarness(t, { libDepth: 12, adapter })
      // Every block the chain ever produced, with its parent at that moment.
      const parent = new Map<string, string>()
      const transactionsOf = new Map<string, Set<string>>()
      h.chain.subscribe((e) => {
        if (e.type !== 'block') return
        parent.set(e.block.id, h.chain.block(e.block.num - 1)?.id ?? '')
        transactionsOf.set(
          e.block.id,
          new Set(
            e.block.inputs
              .filter((i) => i.packed.compression === 0)
              .map((i) => createHash('sha256').update(i.packed.packedTrx).digest('hex')),
          ),
        )
      })
      for (let i = 0; i < 20; i++) {
        h.push([transferAction('alice', 'bob', '0.0001 EOS', `w${i}`)])
        h.chain.produceBlock()
      }
      await h.synced()
      let running = true
      const storm = (async () => {
        for (let i = 0; running; i++) {
          h.push([transferAction(i % 2 ? 'alice' : 'bob', i % 2 ? 'bob' : 'alice', '0.0001 EOS', `s${i}`)])
          h.chain.produceBlock()
          const reversible = h.chain.head.num - h.chain.lib.blockNum
          if (reversible > 2 && i % 4 === 0) h.chain.fork(1 + (i % Math.min(reversible - 1, 6)))
          await new Promise((resolve) => setTimeout(resolve, 3))
        }
      })()
      let pages = 0
      let refused = 0
      try {
        for (let k = 0; k < 300; k++) {
          const sort = k % 2 ? 'asc' : 'desc'
          let page
          try {
            page = await h.search.searchRows({
              query: 'action:transfer',
              withReversible: true,
              sort,
              limit: 1 + (k % 9),
              startBlock: sort === 'asc' ? -15 : 0,
            })
          } catch (error) {
            assert.ok(error instanceof AntlerError && error.code === 'service_unavailable_error', String(error))
            refused++
            continue
          }
          pages++
          if (page.rows.length === 0) continue
          // Walk back from the highest row's block: every row's block is on that one chain.
          const top = page.rows.reduce((a, b) => (b.blockNum > a.blockNum ? b : a))
          const onChain = new Map<number, string>()
          let id = top.blockId
          for (let num = top.blockNum; num >= Math.min(...page.rows.map((r) => r.blockNum)); num--) {
            onChain.set(num, id)
            id = parent.get(id) ?? ''
          }
          for (const row of page.rows) {
            assert.equal(
              row.blockId,
              onChain.get(row.blockNum),
              `page ${k}: block ${row.blockNum} of row ${row.trxId} is on the page's chain`,
            )
            assert.ok(
              transactionsOf.get(row.blockId)?.has(row.trxId),
              `page ${k}: the transaction ${row.trxId} is in block ${row.blockNum} ${row.blockId}`,
            )
          }
          const nums = page.rows.map((r) => r.blockNum)
          assert.deepEqual(
            nums,
            [...nums].sort((a, b) => (sort === 'asc' ? a - b : b - a)),
          )
        }
      } finally {
        running = false
        await storm
      }
      t.diagnostic(`${pages} pages, ${refused} refused (503) while forking`)
      assert.ok(refused < 30, `few pages give up: ${refused}`)
    },
  )

for (const { adapter, skip } of [
  { adapter: 'sqlite', skip: false },
  { adapter: 'postgres', skip: PG_SKIP_REASON },
] as const)
  test(
    `search service on ${adapter}: a fork landing between the engine's read and the actions' is caught and the page read again`,
    { skip },
    async (t) => {
      const h = await startHarness(t, { libDepth: 20, adapter })
      const produce = (tag: string) => {
        h.push([transferAction('alice', 'bob', '0.0001 EOS', tag)])
        h.push([transferAction('bob', 'carol', '0.0001 EOS', tag)])
        h.chain.produceBlock()
      }
      for (let i = 0; i < 12; i++) produce(`r${i}`)
      await h.synced()
      // The next read of actions first waits for a fork of the last blocks to be indexed.
      let forkAt: 'executionsOfActions' | 'blocksByNums' | undefined
      let forks = 0
      const racing = new Proxy(h.store, {
        get(target, prop) {
          const value = (target as unknown as Record<string | symbol, unknown>)[prop]
          if (typeof value !== 'function') return value
          return async (...args: unknown[]) => {
            if (prop === forkAt) {
              forkAt = undefined
              forks++
              h.chain.fork(4)
              for (let i = 0; i < 4; i++) produce(`f${forks}.${i}`)
              await h.synced()
            }
            return (value as (...a: unknown[]) => unknown).apply(target, args)
          }
        },
      }) as SearchStore
      const search = createSearchService({ store: racing, lifecycle: fakeLifecycles, cursorKey: h.cursorKey })
      for (const at of ['executionsOfActions', 'blocksByNums'] as const) {
        for (const sort of ['asc', 'desc'] as const) {
          const request = {
            query: 'action:transfer',
            withReversible: true,
            sort,
            limit: 6,
            startBlock: sort === 'asc' ? -8 : 0,
          }
          forkAt = at
          const page = await search.searchRows(request)
          assert.equal(forkAt, undefined, 'the fork was injected')
          assert.deepEqual(
            page.rows.map(key),
            (await h.search.searchRows(request)).rows.map(key),
            `${at} ${sort}: the page is the new chain's`,
          )
          for (const row of page.rows) assert.equal(row.blockId, (await h.store.blockByNum(row.blockNum))?.id)
        }
      }
    },
  )
