import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { openPostgresStore, type BlockBatch, type Store } from '../../src/store/index.ts'
import { DENSE_TABLE_VERSIONS, type RowVersionQuery } from '../../src/store/history-pages.ts'
import { tempSqliteFile } from '../_helpers/store.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import { onCleanup } from '../_helpers/cleanup.ts'

const id = (num: number, branch: string) => num.toString(16).padStart(8, '0') + branch.repeat(56)

function block(num: number, changes: Partial<BlockBatch>, extra: { producer?: string; trx?: number } = {}): BlockBatch {
  return {
    block: {
      num,
      id: id(num, 'a'),
      previous: num === 1 ? '0'.repeat(64) : id(num - 1, 'a'),
      timestampMs: 1_000_000 + num * 500,
      producer: extra.producer ?? 'producera',
      transactionCount: extra.trx ?? 0,
      actionCount: 0,
    },
    transactions: [],
    actions: [],
    rows: [],
    abis: [],
    permissions: [],
    links: [],
    ...changes,
  }
}

const row = (code: string, table: string, scope: string, pk: number, value: number | undefined, payer = scope) => ({
  code,
  table,
  scope,
  primaryKey: BigInt(pk),
  payer,
  value: value === undefined ? undefined : new Uint8Array([value]),
})

/** `block:code/table/scope/pk=value` of each entry (`-` for a removal, then the removed value). */
const page = async (store: Store, query: Partial<RowVersionQuery>, descending = false, skip = 0, limit = 100) =>
  (await store.rowVersionPage({ fromBlock: 1, toBlock: 100, ...query }, { descending, skip, limit })).map(
    ({ block, change: c }) =>
      `${block.num}:${c.code}/${c.table}/${c.scope}/${c.primaryKey}=${c.value ? c.value[0] : `-${c.old?.value?.[0]}`}`,
  )

type Opener = (t: TestContext) => Promise<Store>

function runPages(name: string, open: Opener, skip?: string | false) {
  test(
    `${name}: row version pages filter, order, skip and count; removals carry the removed row`,
    { skip },
    async (t) => {
      const store = await open(t)
      await store.applyBlock(
        block(1, {
          rows: [
            row('tok', 'accounts', 'alice', 5, 10),
            row('tok', 'accounts', 'bob', 5, 20),
            row('tok', 'stat', 'TOK', 5, 1, 'tok'),
            row('other', 'accounts', 'alice', 5, 30),
          ],
        }),
        0,
      )
      await store.applyBlock(block(2, { rows: [row('tok', 'accounts', 'alice', 5, 11)] }), 0)
      await store.applyBlock(block(3, { rows: [row('tok', 'accounts', 'bob', 5, undefined)] }), 0)
      await store.applyBlock(block(4, {}), 0)

      assert.deepEqual(await page(store, { codes: ['tok'], tables: ['accounts'] }), [
        '1:tok/accounts/alice/5=10',
        '1:tok/accounts/bob/5=20',
        '2:tok/accounts/alice/5=11',
        '3:tok/accounts/bob/5=-20',
      ])
      assert.deepEqual(await page(store, { codes: ['tok'], tables: ['accounts'] }, true, 1, 2), [
        '2:tok/accounts/alice/5=11',
        '1:tok/accounts/bob/5=20',
      ])
      assert.deepEqual(await page(store, { scopes: ['alice'], codes: ['tok', 'other'] }), [
        '1:other/accounts/alice/5=30',
        '1:tok/accounts/alice/5=10',
        '2:tok/accounts/alice/5=11',
      ])
      assert.deepEqual(await page(store, { payers: ['tok'] }), ['1:tok/stat/TOK/5=1'])
      assert.deepEqual(await page(store, { present: false }), ['3:tok/accounts/bob/5=-20'])
      assert.deepEqual(await page(store, { primaryKeys: [6n] }), [])
      assert.deepEqual(await page(store, { fromBlock: 2, toBlock: 2 }), ['2:tok/accounts/alice/5=11'])
      assert.deepEqual(await page(store, { blockNums: [2, 3] }), [
        '2:tok/accounts/alice/5=11',
        '3:tok/accounts/bob/5=-20',
      ])
      const [first] = await store.rowVersionPage({ fromBlock: 2, toBlock: 2 }, { descending: false, skip: 0, limit: 1 })
      assert.equal(first?.block.id, id(2, 'a'))
      assert.equal(first?.block.timestampMs, 1_001_000)

      assert.equal(await store.rowVersionCount({ fromBlock: 1, toBlock: 100, codes: ['tok'] }, 100), 5)
      assert.equal(await store.rowVersionCount({ fromBlock: 1, toBlock: 100, codes: ['tok'] }, 3), 3)
      assert.equal(await store.rowVersionCount({ fromBlock: 1, toBlock: 100, present: true }, 100), 5)

      // Head rows by scope then key, after a key; the removed row is not one.
      const current = async (after?: { scope: string; primaryKey: bigint }) =>
        (await store.currentRowsPage({ code: 'tok', table: 'accounts', limit: 10, ...(after ? { after } : {}) })).map(
          (r) => `${r.scope}/${r.primaryKey}=${r.value[0]}@${r.blockNum}`,
        )
      await store.applyBlock(
        block(5, { rows: [row('tok', 'accounts', 'alice', 300, 7), row('tok', 'accounts', 'carol', 1, 8)] }),
        0,
      )
      assert.deepEqual(await current(), ['alice/5=11@2', 'alice/300=7@5', 'carol/1=8@5'])
      assert.deepEqual(await current({ scope: 'alice', primaryKey: 5n }), ['alice/300=7@5', 'carol/1=8@5'])
      assert.deepEqual(await current({ scope: 'alice', primaryKey: 300n }), ['carol/1=8@5'])
      assert.deepEqual(await current({ scope: 'b', primaryKey: 0n }), ['carol/1=8@5'])
      assert.deepEqual(
        (await store.currentRowsPage({ code: 'tok', table: 'accounts', limit: 1 })).map((r) => r.scope),
        ['alice'],
      )

      // Undone blocks leave the pages.
      await store.undoFrom(2)
      assert.deepEqual(await page(store, { scopes: ['alice'], codes: ['tok'] }), ['1:tok/accounts/alice/5=10'])
    },
  )

  test(
    `${name}: a dense table's pages (walked by block) are ordered and counted as a sparse one's`,
    { skip },
    async (t) => {
      const store = await open(t)
      const many = Array.from({ length: DENSE_TABLE_VERSIONS }, (_, i) =>
        row('big', 't', `s${String(i).padStart(4, '0')}`, 1, i % 250),
      )
      await store.applyBlock(block(1, { rows: many }), 0)
      await store.applyBlock(block(2, { rows: [row('big', 't', 's0001', 1, 99), row('other', 't', 'x', 1, 1)] }), 0)
      await store.applyBlock(block(3, { rows: [row('big', 't', 's0002', 1, undefined)] }), 0)
      const dense = { codes: ['big'], tables: ['t'] }
      assert.deepEqual(await page(store, dense, true, 0, 4), [
        '3:big/t/s0002/1=-2',
        '2:big/t/s0001/1=99',
        '1:big/t/s4999/1=249',
        '1:big/t/s4998/1=248',
      ])
      assert.deepEqual(await page(store, dense, false, 1, 2), ['1:big/t/s0001/1=1', '1:big/t/s0002/1=2'])
      assert.deepEqual(await page(store, { ...dense, fromBlock: 2, toBlock: 3 }), [
        '2:big/t/s0001/1=99',
        '3:big/t/s0002/1=-2',
      ])
      assert.equal(
        await store.rowVersionCount({ ...dense, fromBlock: 1, toBlock: 100 }, 10_000),
        DENSE_TABLE_VERSIONS + 2,
      )
      assert.equal(await store.rowVersionCount({ ...dense, fromBlock: 2, toBlock: 100 }, 10_000), 2)
      assert.equal(await store.rowVersionCount({ ...dense, fromBlock: 1, toBlock: 100, present: false }, 10_000), 1)
    },
  )

  test(`${name}: block pages filter by producer and transaction count`, { skip }, async (t) => {
    const store = await open(t)
    await store.applyBlock(block(1, {}, { producer: 'prod.a', trx: 0 }), 0)
    const trx = (i: number, cpu: number, net: number, blockNum = 2) => ({
      id: (blockNum * 16 + i).toString(16).padStart(64, '0'),
      blockNum,
      blockIndex: i,
      status: 0,
      cpuUsageUs: cpu,
      netUsageWords: net,
      scheduled: false,
    })
    await store.applyBlock(
      block(2, { transactions: [trx(0, 100, 0), trx(1, 250, 12)] }, { producer: 'prod.b', trx: 3 }),
      0,
    )
    // Block 3: the implicit onblock (first action eosio::onblock; no receipt in the block) and one transaction.
    const action = (seq: number, trxId: string, name: string) => ({
      globalSequence: seq,
      blockNum: 3,
      trxId,
      actionOrdinal: 1,
      creatorActionOrdinal: 0,
      receiver: 'eosio',
      account: 'eosio',
      name,
      authorization: [],
      data: new Uint8Array(0),
      returnValue: new Uint8Array(0),
      actDigest: '0'.repeat(64),
      recvSequence: 1n,
      ramDeltas: [],
    })
    const onblock = trx(0, 900, 0, 3)
    const real = trx(1, 40, 4, 3)
    await store.applyBlock(
      block(
        3,
        { transactions: [onblock, real], actions: [action(1, onblock.id, 'onblock'), action(2, real.id, 'setcode')] },
        { producer: 'prod.a', trx: 2 },
      ),
      0,
    )
    const nums = async (q: Parameters<Store['blockPage']>[0], descending = false, skip = 0) =>
      (await store.blockPage(q, { descending, skip, limit: 10 })).map((b) => b.block.num)
    assert.deepEqual(await nums({ fromBlock: 1, toBlock: 3 }), [1, 2, 3])
    assert.deepEqual(await nums({ fromBlock: 1, toBlock: 3 }, true, 1), [2, 1])
    assert.deepEqual(await nums({ fromBlock: 1, toBlock: 3, producers: ['prod.a'] }), [1, 3])
    assert.deepEqual(await nums({ fromBlock: 1, toBlock: 3, minTrxCount: 2, maxTrxCount: 2 }), [2])
    assert.deepEqual(await nums({ fromBlock: 1, toBlock: 3, minTrxCount: 1, maxTrxCount: 1 }), [3])
    assert.deepEqual(await nums({ fromBlock: 2, toBlock: 2 }), [2])
    const [two] = await store.blockPage({ fromBlock: 2, toBlock: 2 }, { descending: false, skip: 0, limit: 1 })
    assert.deepEqual(
      [two?.cpuUsageUs, two?.netUsageWords, two?.receiptCount, two?.block.producer],
      [350, 12, 2, 'prod.b'],
    )
    assert.deepEqual(
      (await store.blockPage({ fromBlock: 1, toBlock: 1 }, { descending: false, skip: 0, limit: 1 })).map((b) => [
        b.cpuUsageUs,
        b.netUsageWords,
      ]),
      [[0, 0]],
    )
    const [three] = await store.blockPage({ fromBlock: 3, toBlock: 3 }, { descending: false, skip: 0, limit: 1 })
    assert.deepEqual([three?.cpuUsageUs, three?.netUsageWords, three?.receiptCount], [40, 4, 1])
    assert.equal(await store.blockCount({ fromBlock: 1, toBlock: 3, minTrxCount: 1 }, 10), 2)
    assert.equal(await store.blockCount({ fromBlock: 1, toBlock: 3 }, 2), 2)
  })
}

runPages('sqlite', async (t) => tempSqliteFile(t)())

runPages(
  'postgres',
  async (t) => {
    const store = await openPostgresStore(await withPostgresDatabase(t))
    onCleanup(t, () => store.close())
    return store
  },
  PG_SKIP_REASON,
)
