import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { assertDetailsReadBack, detailedBlock } from './details-fixture.ts'
import { emptyBlock } from './keys-contract.ts'
import {
  TRANSACTION_CANCELED,
  type BlockBatch,
  type LinkChangeRecord,
  type PermissionChangeRecord,
  type StateReader,
  type Store,
  type TransactionRecord,
} from '../../../src/store/index.ts'

/** A store backing that can be opened more than once (a file, a database). */
export type StoreFactory = (t: TestContext) => Promise<{ open: () => Promise<Store> }>

const id = (num: number, branch = 'a') => num.toString(16).padStart(8, '0') + branch.repeat(56)

function batch(num: number, changes: Partial<BlockBatch> = {}, branch = 'a', parentBranch = branch): BlockBatch {
  return {
    block: {
      num,
      id: id(num, branch),
      previous: num === 1 ? '0'.repeat(64) : id(num - 1, parentBranch),
      timestampMs: 1_000_000 + num * 500,
      producer: 'producera',
      transactionCount: 0,
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

const row = (key: number, value: number | undefined, scope = 'alice') => ({
  code: 'rawdb',
  scope,
  table: 'rows',
  primaryKey: BigInt(key),
  payer: 'rawdb',
  value: value === undefined ? undefined : new Uint8Array([value]),
})

const K1 = 'PUB_K1_6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5BoDq63'
const K2 = 'PUB_K1_5bbkxaLdB5bfVZW6DJY8M74vwT2m61PqwywNUa5azfkJTvYa5H'
const perm = (
  owner: string,
  name: string,
  parent: string,
  threshold: number,
  keys: string[],
  accounts: string[] = [],
  removed = false,
): PermissionChangeRecord => ({
  owner,
  name,
  parent,
  threshold,
  keys: keys.map((key, i) => ({ key, weight: i + 1 })),
  accounts: accounts.map((level) => ({
    permission: { actor: level.split('@')[0], permission: level.split('@')[1] },
    weight: 1,
  })),
  removed,
})
const link = (
  account: string,
  code: string,
  messageType: string,
  requiredPermission: string | undefined,
): LinkChangeRecord => ({ account, code, messageType, requiredPermission })
/** Permissions as [name, parent, threshold, keys, accounts, blockNum]. */
const permissionsOf = async (reader: Pick<StateReader, 'permissions'>, account: string, blockNum: number) =>
  (await reader.permissions({ account, blockNum })).map((p) => [
    p.name,
    p.parent,
    p.threshold,
    p.keys.map((k) => `${k.key.slice(-4)}:${k.weight}`),
    p.accounts.map((a) => `${a.permission.actor}@${a.permission.permission}:${a.weight}`),
    p.blockNum,
  ])
/** Links as `contract:action=permission@blockNum`. */
const linksOf = async (reader: Pick<StateReader, 'permissionLinks'>, account: string, blockNum: number) =>
  (await reader.permissionLinks({ account, blockNum })).map(
    (l) => `${l.contract}:${l.action}=${l.permission}@${l.blockNum}`,
  )

const trx = (id: string, blockNum: number, blockIndex: number, status = 0): TransactionRecord => ({
  id,
  blockNum,
  blockIndex,
  status,
  cpuUsageUs: 1,
  netUsageWords: 1,
  scheduled: status !== 0,
})

/** Every port test, run against one adapter. */
export function runStoreContract(name: string, factory: StoreFactory, skip: string | false = false): void {
  test(
    `${name}: the lifecycle details of a block (header, a trace's details, an action's trace) read back as written, and records without them read without them`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      await store.applyBlock(emptyBlock(1), 0)
      assert.equal((await store.blockByNum(1))?.header, undefined)
      const detailed = detailedBlock(2, 1)
      await store.applyBlock(detailed, 0)
      await assertDetailsReadBack(store, detailed)
    },
  )

  test(
    `${name}: tableRows() and tableRow() answer state at any height, in primary-key order, tombstones hidden`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      await store.applyBlock(batch(1, { rows: [row(2, 20), row(1, 10)] }), 0)
      await store.applyBlock(batch(2, { rows: [row(1, 11), row(3, 30, 'bob')] }), 0)
      await store.applyBlock(batch(3, { rows: [row(2, undefined)] }), 0)
      const values = async (blockNum: number) =>
        (await store.tableRows({ code: 'rawdb', table: 'rows', scope: 'alice', blockNum })).map((r) => [
          Number(r.primaryKey),
          r.value[0],
          r.blockNum,
        ])
      assert.deepEqual(await values(1), [
        [1, 10, 1],
        [2, 20, 1],
      ])
      assert.deepEqual(await values(2), [
        [1, 11, 2],
        [2, 20, 1],
      ])
      assert.deepEqual(await values(3), [[1, 11, 2]])
      assert.deepEqual(await values(99), [[1, 11, 2]])
      // A key written after the height is not there yet; a removed key written again is back.
      assert.deepEqual(await store.tableRows({ code: 'rawdb', table: 'rows', scope: 'bob', blockNum: 1 }), [])
      await store.applyBlock(batch(4, { rows: [row(2, 22)] }), 0)
      assert.deepEqual(await values(3), [[1, 11, 2]])
      assert.deepEqual(await values(4), [
        [1, 11, 2],
        [2, 22, 4],
      ])
      assert.deepEqual(await values(2), [
        [1, 11, 2],
        [2, 20, 1],
      ])
      assert.equal(
        (await store.tableRow({ code: 'rawdb', table: 'rows', scope: 'alice', primaryKey: 2n, blockNum: 2 }))?.value[0],
        20,
      )
      assert.equal(
        await store.tableRow({ code: 'rawdb', table: 'rows', scope: 'alice', primaryKey: 2n, blockNum: 3 }),
        undefined,
      )
      assert.deepEqual(await store.scopes({ code: 'rawdb', table: 'rows', blockNum: 1 }), ['alice'])
      assert.deepEqual(await store.scopes({ code: 'rawdb', table: 'rows', blockNum: 2 }), ['alice', 'bob'])
      const many = await store.tableRowsOfScopes({
        code: 'rawdb',
        table: 'rows',
        scopes: ['bob', 'alice', 'nobody', 'alice'],
        blockNum: 2,
      })
      assert.deepEqual(
        many.map((r) => [r.scope, Number(r.primaryKey), r.value[0]]),
        [
          ['alice', 1, 11],
          ['alice', 2, 20],
          ['bob', 3, 30],
        ],
      )
      assert.deepEqual(await store.tableRowsOfScopes({ code: 'rawdb', table: 'rows', scopes: [], blockNum: 2 }), [])
      const atHead = await store.tableRowsOfScopes({
        code: 'rawdb',
        table: 'rows',
        scopes: ['alice', 'bob'],
        blockNum: 99,
      })
      assert.deepEqual(
        atHead.map((r) => [r.scope, Number(r.primaryKey), r.value[0], r.blockNum]),
        [
          ['alice', 1, 11, 2],
          ['alice', 2, 22, 4],
          ['bob', 3, 30, 2],
        ],
      )
      const beforeRemoval = await store.tableRowsOfScopes({
        code: 'rawdb',
        table: 'rows',
        scopes: ['alice'],
        blockNum: 3,
      })
      assert.deepEqual(
        beforeRemoval.map((r) => [Number(r.primaryKey), r.value[0]]),
        [[1, 11]],
      )
    },
  )

  test(
    `${name}: snapshot() reads one state: a block applied and another undone by a second open meanwhile are seen by none of its reads`,
    { skip },
    async (t) => {
      const backing = await factory(t)
      const writer = await backing.open()
      const reader = await backing.open()
      t.after(async () => {
        await reader.close()
        await writer.close()
      })
      await writer.applyBlock(batch(1, { rows: [row(1, 10)] }), 0)
      await writer.applyBlock(batch(2, { rows: [row(1, 11), row(2, 20)] }), 0)
      const seen = await reader.snapshot(async (r) => {
        const before = await r.position()
        await writer.applyBlock(batch(3, { rows: [row(1, 12)] }), 0)
        await writer.undoFrom(2)
        const rows = (await r.tableRows({ code: 'rawdb', table: 'rows', scope: 'alice', blockNum: 2 })).map((x) => [
          Number(x.primaryKey),
          x.value[0],
        ])
        const atHead = (
          await r.tableRowsOfScopes({ code: 'rawdb', table: 'rows', scopes: ['alice'], blockNum: 99 })
        ).map((x) => [Number(x.primaryKey), x.value[0]])
        return {
          before,
          after: await r.position(),
          rows,
          atHead,
          block2: (await r.blockByNum(2))?.id,
          block3: await r.blockByNum(3),
        }
      })
      assert.deepEqual(seen.after, seen.before)
      assert.equal(seen.before?.head.blockNum, 2)
      assert.deepEqual(seen.rows, [
        [1, 11],
        [2, 20],
      ])
      assert.deepEqual(seen.atHead, [
        [1, 11],
        [2, 20],
      ])
      assert.equal(seen.block2, id(2))
      assert.equal(seen.block3, undefined)
      // Outside the snapshot the writes are there, and a new snapshot sees them.
      assert.equal((await reader.position())?.head.blockNum, 1)
      assert.equal(await reader.snapshot(async (r) => (await r.blockByNum(2))?.id), undefined)
      assert.deepEqual(
        (await reader.snapshot((r) => r.tableRows({ code: 'rawdb', table: 'rows', scope: 'alice', blockNum: 99 }))).map(
          (x) => x.value[0],
        ),
        [10],
      )
    },
  )

  test(
    `${name}: overlapping snapshots that wait on I/O each read one state while another open writes`,
    { skip },
    async (t) => {
      const backing = await factory(t)
      const writer = await backing.open()
      const reader = await backing.open()
      t.after(async () => {
        await reader.close()
        await writer.close()
      })
      await writer.applyBlock(batch(1, { rows: [row(1, 10)] }), 0)
      const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
      const value = async (r: Pick<Store, 'tableRows'>) =>
        (await r.tableRows({ code: 'rawdb', table: 'rows', scope: 'alice', blockNum: 99 }))[0].value[0]
      const twice = (waitMs: number) =>
        reader.snapshot(async (r) => [await value(r), await sleep(waitMs).then(() => value(r))])
      const first = twice(40)
      await sleep(5)
      const second = twice(80)
      await sleep(5)
      await writer.applyBlock(batch(2, { rows: [row(1, 11)] }), 0)
      const [a, b] = await Promise.all([first, second])
      assert.equal(a[0], a[1], 'the first snapshot read one state')
      assert.equal(b[0], b[1], 'the second snapshot read one state, also after the first ended')
      assert.equal(await reader.snapshot(value), 11)
    },
  )

  test(
    `${name}: undoFrom() removes every effect of the undone blocks and records undo steps newest first`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      const key = { key: 'PUB_K1_6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5BoDq63', weight: 1 }
      await store.applyBlock(
        batch(1, {
          rows: [row(1, 10)],
          abis: [{ account: 'rawdb', abi: new Uint8Array([1]) }],
          permissions: [
            {
              owner: 'alice',
              name: 'active',
              parent: 'owner',
              threshold: 1,
              keys: [key],
              accounts: [],
              removed: false,
            },
          ],
        }),
        0,
      )
      await store.applyBlock(
        batch(2, {
          rows: [row(1, 11)],
          abis: [{ account: 'rawdb', abi: new Uint8Array([2]) }],
          permissions: [
            { owner: 'alice', name: 'active', parent: 'owner', threshold: 1, keys: [], accounts: [], removed: false },
          ],
          links: [{ account: 'alice', code: 'rawdb', messageType: 'put', requiredPermission: 'active' }],
        }),
        0,
      )
      await store.applyBlock(batch(3, { rows: [row(1, undefined)] }), 0)
      await store.undoFrom(2)
      assert.deepEqual(await store.position(), { head: { blockNum: 1, blockId: id(1) }, lib: 0 })
      assert.deepEqual(
        (await store.tableRows({ code: 'rawdb', table: 'rows', scope: 'alice', blockNum: 9 })).map((r) => r.value[0]),
        [10],
      )
      assert.deepEqual((await store.abi({ account: 'rawdb', blockNum: 9 }))?.abi, new Uint8Array([1]))
      assert.deepEqual(await store.keyAccounts({ publicKey: key.key, blockNum: 9 }), [
        { account: 'alice', permission: 'active' },
      ])
      assert.equal(await store.blockByNum(2), undefined)
      const steps = await store.stepsAfter(0, 100)
      assert.deepEqual(
        steps.map((s) => `${s.type}:${s.blockNum}`),
        ['new:1', 'new:2', 'new:3', 'undo:3', 'undo:2'],
      )
      // The other branch applies on top of block 1.
      await store.applyBlock(batch(2, { rows: [row(1, 12)] }, 'b', 'a'), 0)
      assert.deepEqual(
        (await store.tableRows({ code: 'rawdb', table: 'rows', scope: 'alice', blockNum: 9 })).map((r) => r.value[0]),
        [12],
      )
    },
  )

  test(
    `${name}: applyBlock() refuses a block that does not link, and undoFrom() refuses to cross LIB`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      await store.applyBlock(batch(1), 0)
      await store.applyBlock(batch(2), 1)
      await assert.rejects(
        store.applyBlock(batch(4), 1),
        (e: { code?: string }) => e.code === 'store_block_does_not_link_error',
      )
      await assert.rejects(
        store.applyBlock(batch(3, {}, 'x', 'x'), 1),
        (e: { code?: string }) => e.code === 'store_block_does_not_link_error',
      )
      await assert.rejects(store.undoFrom(1), (e: { code?: string }) => e.code === 'store_irreversible_undo_error')
      const steps = await store.stepsAfter(0, 100)
      assert.deepEqual(
        steps.map((s) => `${s.type}:${s.blockNum}`),
        ['new:1', 'new:2', 'irreversible:1'],
      )
      assert.deepEqual(await store.reversibleBlocks(), [{ blockNum: 2, blockId: id(2) }])
    },
  )

  test(
    `${name}: a write the database refuses changes nothing, a write queued behind it is refused too, and writing resumes from what is stored`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      await store.applyBlock(batch(1), 0)
      await store.applyBlock(batch(2), 1)
      // Links, but writes the same row version twice: the database refuses it inside the write.
      const refused = store.applyBlock(batch(3, { rows: [row(1, 1), row(1, 2)] }), 1)
      const queued = store.applyBlock(batch(4), 1)
      const outcomes = await Promise.allSettled([refused, queued])
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['rejected', 'rejected'],
      )
      assert.deepEqual((await store.position())?.head, { blockNum: 2, blockId: id(2) })
      assert.equal(await store.blockByNum(3), undefined)
      await store.applyBlock(batch(3, { rows: [row(1, 1)] }), 2)
      await store.applyBlock(batch(4), 2)
      assert.deepEqual((await store.position())?.head, { blockNum: 4, blockId: id(4) })
      assert.deepEqual(
        (await store.tableRows({ code: 'rawdb', table: 'rows', scope: 'alice', blockNum: 4 })).map((r) => r.value[0]),
        [1],
      )
      assert.deepEqual(await store.integrityFindings(), [])
    },
  )

  test(`${name}: a reopened store continues where it stopped`, { skip }, async (t) => {
    const backing = await factory(t)
    const first = await backing.open()
    await first.applyBlock(batch(1, { rows: [row(1, 10)] }), 0)
    await first.close()
    const second = await backing.open()
    t.after(() => second.close())
    assert.deepEqual((await second.position())?.head, { blockNum: 1, blockId: id(1) })
    await second.applyBlock(batch(2), 1)
    assert.equal((await second.blockByNum(2))?.timestampMs, 1_001_000)
  })

  test(`${name}: applyBlocks() writes consecutive blocks atomically: all of them or none`, { skip }, async (t) => {
    const store = await (await factory(t)).open()
    t.after(() => store.close())
    await store.applyBlocks([batch(1, { rows: [row(1, 10)] }), batch(2, { rows: [row(1, 11)] })], 1)
    await assert.rejects(
      store.applyBlocks([batch(3, { rows: [row(1, 12)] }), batch(5)], 2),
      (e: { code?: string }) => e.code === 'store_block_does_not_link_error',
    )
    assert.deepEqual((await store.position())?.head, { blockNum: 2, blockId: id(2) })
    assert.equal(await store.blockByNum(3), undefined)
    assert.deepEqual(
      (await store.tableRows({ code: 'rawdb', table: 'rows', scope: 'alice', blockNum: 9 })).map((r) => r.value[0]),
      [11],
    )
    const steps = await store.stepsAfter(0, 100)
    assert.deepEqual(
      steps.map((s) => `${s.type}:${s.blockNum}`),
      ['new:1', 'irreversible:1', 'new:2'],
    )
  })

  test(
    `${name}: a key changed several times within one applyBlocks() write has the same history as block-by-block writes`,
    { skip },
    async (t) => {
      const backing = await factory(t)
      const batched = await backing.open()
      t.after(() => batched.close())
      const blocks = [
        batch(1, { rows: [row(1, 10), row(2, 20)] }),
        batch(2, { rows: [row(1, 11)] }),
        batch(3, { rows: [row(1, undefined), row(2, 21), row(3, 30)] }),
        batch(4, { rows: [row(1, 13)] }),
        batch(5),
      ]
      await batched.applyBlocks(blocks.slice(0, 1), 0)
      // LIB moves to 3 within the second write: its steps interleave as block-by-block writes leave them.
      await batched.applyBlocks(blocks.slice(1), 3)
      const history = async (store: Store) => ({
        rows: await Promise.all(
          [1, 2, 3, 4, 5].map(async (h) =>
            (await store.tableRows({ code: 'rawdb', table: 'rows', scope: 'alice', blockNum: h })).map((r) => [
              Number(r.primaryKey),
              r.value[0],
              r.blockNum,
            ]),
          ),
        ),
        changes: await Promise.all(
          [1, 2, 3, 4].map(async (h) =>
            (await store.rowChanges(h)).map((c) => [
              Number(c.primaryKey),
              c.value?.[0],
              c.old === undefined ? 'none' : c.old.value?.[0],
            ]),
          ),
        ),
        steps: (await store.stepsAfter(0, 100)).map((x) => `${x.type}:${x.blockNum}`),
      })
      const got = await history(batched)
      assert.deepEqual(got.steps, [
        'new:1',
        'new:2',
        'irreversible:1',
        'irreversible:2',
        'new:3',
        'irreversible:3',
        'new:4',
        'new:5',
      ])
      assert.deepEqual(got.rows[1], [
        [1, 11, 2],
        [2, 20, 1],
      ])
      assert.deepEqual(got.rows[3], [
        [1, 13, 4],
        [2, 21, 3],
        [3, 30, 3],
      ])
      assert.deepEqual(got.changes[2], [
        [1, undefined, 11],
        [2, 21, 20],
        [3, 30, 'none'],
      ])
      // Undo inside the write reopens the versions its blocks closed.
      await batched.undoFrom(4)
      assert.deepEqual(
        (await batched.tableRows({ code: 'rawdb', table: 'rows', scope: 'alice', blockNum: 9 })).map((r) => [
          Number(r.primaryKey),
          r.value[0],
        ]),
        [
          [2, 21],
          [3, 30],
        ],
      )
      await batched.applyBlocks(blocks.slice(3), 3)

      const single = await (await factory(t)).open()
      t.after(() => single.close())
      await single.applyBlock(blocks[0], 0)
      for (const b of blocks.slice(1)) await single.applyBlock(b, 3)
      await single.undoFrom(4)
      for (const b of blocks.slice(3)) await single.applyBlock(b, 3)
      assert.deepEqual(await history(batched), await history(single))
      // Closed here, not only by the after hooks: those run in registration order, after the first
      // store's directory cleanup.
      await single.close()
      await batched.close()
    },
  )

  test(
    `${name}: blockByTime() answers each comparator; transactionsByIdPrefix() finds ids by prefix`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      const trx = (id: string, blockNum: number, blockIndex: number) => ({
        id,
        blockNum,
        blockIndex,
        status: 0,
        cpuUsageUs: 100,
        netUsageWords: 10,
        scheduled: false,
      })
      for (let n = 1; n <= 4; n++)
        await store.applyBlock(
          batch(n, {
            transactions: [
              trx(`${'ab'.repeat(n)}${'0'.repeat(64 - 2 * n)}`, n, 1),
              trx(`${n}f${'e'.repeat(62)}`, n, 2),
            ],
          }),
          0,
        )
      const at = (n: number) => 1_000_000 + n * 500
      const num = async (timeMs: number, comparator: 'gt' | 'gte' | 'lt' | 'lte' | 'eq') =>
        (await store.blockByTime({ timeMs, comparator }))?.num
      assert.deepEqual(
        [
          await num(at(2), 'gt'),
          await num(at(2), 'gte'),
          await num(at(2), 'lt'),
          await num(at(2), 'lte'),
          await num(at(2), 'eq'),
        ],
        [3, 2, 1, 2, 2],
      )
      assert.deepEqual(
        [await num(at(2) + 1, 'eq'), await num(at(4), 'gt'), await num(at(1), 'lt')],
        [undefined, undefined, undefined],
      )
      assert.deepEqual(
        (await store.transactionsByIdPrefix('abab', 10)).map((x) => x.blockNum),
        [2, 3, 4],
      )
      assert.deepEqual(
        (await store.transactionsByIdPrefix('2f', 10)).map((x) => x.blockIndex),
        [2],
      )
      assert.deepEqual((await store.transactionsByIdPrefix('ab', 2)).length, 2)
      assert.deepEqual(await store.transactionsByIdPrefix('zz', 10), [])
      assert.equal((await store.transaction('3f' + 'e'.repeat(62)))?.blockNum, 3)
    },
  )

  test(
    `${name}: transactionHistory() keeps delayed, canceled and forked-out facts; a re-applied block is a redo step`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      const delayed = 'de'.repeat(32)
      const other = 'f0'.repeat(32)
      await store.applyBlock(batch(1, { transactions: [trx(delayed, 1, 1, 3)] }), 0)
      await store.applyBlock(
        batch(2, { transactions: [trx(other, 2, 1), trx(delayed, 2, -1, TRANSACTION_CANCELED)] }),
        0,
      )
      await store.undoFrom(2)
      await store.applyBlock(batch(2, { transactions: [trx(delayed, 2, 1, 0)] }, 'b', 'a'), 0)
      const history = await store.transactionHistory(delayed)
      assert.deepEqual(
        history.records.map((r) => [r.blockNum, r.status]),
        [
          [1, 3],
          [2, 0],
        ],
      )
      assert.deepEqual(history.forkedOut, [])
      assert.deepEqual((await store.transactionHistory(other)).records, [])
      assert.deepEqual((await store.transactionHistory(other)).forkedOut, [{ blockNum: 2, blockId: id(2) }])
      await store.undoFrom(2)
      await store.applyBlock(batch(2, {}, 'a'), 0)
      assert.deepEqual(
        (await store.stepsOfBlock(id(2))).map((s) => s.type),
        ['new', 'undo', 'redo'],
      )
      assert.deepEqual(
        (await store.stepsOfBlock(id(2, 'b'))).map((s) => s.type),
        ['new', 'undo'],
      )
      assert.deepEqual(await store.stepsOfBlock('00'.repeat(32)), [])
    },
  )

  test(`${name}: libBeforeStep is the block of the last irreversible step before a step`, { skip }, async (t) => {
    const store = await (await factory(t)).open()
    t.after(() => store.close())
    await store.applyBlock(batch(1), 0)
    await store.applyBlock(batch(2, {}, 'a'), 1)
    await store.applyBlock(batch(3, {}, 'a'), 2)
    const steps = await store.stepsAfter(0, 100)
    assert.ok(steps.some((s) => s.type === 'irreversible'))
    for (const step of steps) {
      const before = steps.filter((s) => s.seq < step.seq && s.type === 'irreversible').at(-1)?.blockNum
      assert.equal(await store.libBeforeStep(step.seq), before, `before step ${step.seq}`)
    }
    assert.equal(await store.libBeforeStep(steps.at(-1)!.seq + 1), 2)
    assert.equal(await store.libBeforeStep(1), undefined)
  })

  test(
    `${name}: a transaction delayed and canceled in one block keeps both records; the cancelation is its latest`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      const delayed = 'dd'.repeat(32)
      // Same first 13 hex digits (same id key), another id: never confused with the first.
      const neighbour = 'dd'.repeat(7) + 'ee'.repeat(25)
      await store.applyBlock(
        batch(1, {
          transactions: [trx(delayed, 1, 1, 3), trx(neighbour, 1, 2, 0), trx(delayed, 1, -1, TRANSACTION_CANCELED)],
        }),
        0,
      )
      assert.deepEqual(
        (await store.transactionHistory(delayed)).records.map((r) => [r.blockIndex, r.status]),
        [
          [-1, TRANSACTION_CANCELED],
          [1, 3],
        ],
      )
      assert.equal((await store.transaction(delayed))?.status, TRANSACTION_CANCELED)
      assert.equal((await store.transaction(neighbour))?.blockIndex, 2)
      assert.deepEqual(
        (await store.transactionsByIdPrefix('dd'.repeat(7), 10)).map((r) => [r.id === delayed, r.blockIndex]),
        [
          [true, -1],
          [true, 1],
          [false, 2],
        ],
      )
    },
  )

  test(`${name}: rowChanges() gives a block's row changes with the versions they replaced`, { skip }, async (t) => {
    const store = await (await factory(t)).open()
    t.after(() => store.close())
    await store.applyBlock(batch(1, { rows: [row(1, 10), row(2, 20)] }), 0)
    await store.applyBlock(batch(2, { rows: [row(1, 11), row(2, undefined), row(3, 30)] }), 0)
    const changes = await store.rowChanges(2)
    assert.deepEqual(
      changes.map((c) => [Number(c.primaryKey), c.value?.[0], c.old && c.old.value?.[0]]),
      [
        [1, 11, 10],
        [2, undefined, 20],
        [3, 30, undefined],
      ],
    )
    assert.equal(changes[2].old, undefined)
    assert.deepEqual(await store.rowChanges(3), [])
  })

  test(
    `${name}: scopes() lists the scopes holding rows at a height: emptied, refilled, and written after it`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      const scopes = (blockNum: number) => store.scopes({ code: 'rawdb', table: 'rows', blockNum })
      // carol's only row is removed at 2 and written again at 4; dave loses his first key at 2 but
      // keeps his second; erin's row is rewritten at 3 (its version at 2 is an older one); frank
      // first appears at 3; gina is emptied at 3 for good.
      await store.applyBlock(
        batch(1, {
          rows: [row(1, 10, 'carol'), row(1, 10, 'dave'), row(2, 20, 'dave'), row(1, 10, 'erin'), row(1, 10, 'gina')],
        }),
        0,
      )
      await store.applyBlock(batch(2, { rows: [row(1, undefined, 'carol'), row(1, undefined, 'dave')] }), 0)
      await store.applyBlock(
        batch(3, { rows: [row(1, 11, 'erin'), row(5, 50, 'frank'), row(1, undefined, 'gina')] }),
        0,
      )
      await store.applyBlock(batch(4, { rows: [row(1, 12, 'carol')] }), 0)
      assert.deepEqual(await scopes(0), [])
      assert.deepEqual(await scopes(1), ['carol', 'dave', 'erin', 'gina'])
      assert.deepEqual(await scopes(2), ['dave', 'erin', 'gina'])
      assert.deepEqual(await scopes(3), ['dave', 'erin', 'frank'])
      assert.deepEqual(await scopes(4), ['carol', 'dave', 'erin', 'frank'])
      assert.deepEqual(await scopes(99), ['carol', 'dave', 'erin', 'frank'])
      assert.deepEqual(await store.scopes({ code: 'rawdb', table: 'other', blockNum: 99 }), [])
      // Undone, carol is empty again at head; a snapshot sees the same.
      await store.undoFrom(4)
      assert.deepEqual(await scopes(99), ['dave', 'erin', 'frank'])
      assert.deepEqual(await store.snapshot((r) => r.scopes({ code: 'rawdb', table: 'rows', blockNum: 2 })), [
        'dave',
        'erin',
        'gina',
      ])
    },
  )

  test(
    `${name}: permissions() and permissionLinks() answer an account's authority at any height, removals and unlinks hidden, forks undone`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      await store.applyBlock(
        batch(1, {
          permissions: [
            perm('alice', 'owner', '', 1, [K1]),
            perm('alice', 'active', 'owner', 1, [K1]),
            perm('bob', 'active', 'owner', 1, [K2]),
          ],
          links: [
            link('alice', 'eosio.token', 'transfer', 'active'),
            link('alice', 'rawdb', '', 'active'),
            link('bob', 'rawdb', 'put', 'active'),
          ],
        }),
        0,
      )
      await store.applyBlock(
        batch(2, {
          permissions: [
            perm('alice', 'active', 'owner', 2, [K1, K2], ['bob@active']),
            perm('alice', 'claim', 'active', 1, [K2]),
          ],
          links: [
            link('alice', 'eosio.token', 'transfer', 'claim'),
            link('alice', 'eosio.token', '', 'active'),
            link('alice', 'rawdb', '', undefined),
          ],
        }),
        0,
      )
      await store.applyBlock(
        batch(3, {
          permissions: [perm('alice', 'claim', 'active', 1, [K2], [], true)],
          links: [link('alice', 'rawdb', '', 'claim')],
        }),
        0,
      )

      const active1 = ['active', 'owner', 1, ['Dq63:1'], [], 1]
      const active2 = ['active', 'owner', 2, ['Dq63:1', 'Ya5H:2'], ['bob@active:1'], 2]
      const owner = ['owner', '', 1, ['Dq63:1'], [], 1]
      const claim = ['claim', 'active', 1, ['Ya5H:1'], [], 2]
      assert.deepEqual(await permissionsOf(store, 'alice', 0), [])
      assert.deepEqual(await permissionsOf(store, 'alice', 1), [active1, owner])
      assert.deepEqual(await permissionsOf(store, 'alice', 2), [active2, claim, owner])
      assert.deepEqual(await permissionsOf(store, 'alice', 3), [active2, owner])
      assert.deepEqual(await permissionsOf(store, 'alice', 99), [active2, owner])
      assert.deepEqual(await permissionsOf(store, 'bob', 99), [['active', 'owner', 1, ['Ya5H:1'], [], 1]])
      assert.deepEqual(await permissionsOf(store, 'nobody', 99), [])

      assert.deepEqual(await linksOf(store, 'alice', 0), [])
      assert.deepEqual(await linksOf(store, 'alice', 1), ['eosio.token:transfer=active@1', 'rawdb:=active@1'])
      assert.deepEqual(await linksOf(store, 'alice', 2), ['eosio.token:=active@2', 'eosio.token:transfer=claim@2'])
      assert.deepEqual(await linksOf(store, 'alice', 3), [
        'eosio.token:=active@2',
        'eosio.token:transfer=claim@2',
        'rawdb:=claim@3',
      ])
      assert.deepEqual(await linksOf(store, 'alice', 99), await linksOf(store, 'alice', 3))
      assert.deepEqual(await linksOf(store, 'bob', 99), ['rawdb:put=active@1'])

      // A fork undoes blocks 2 and 3: the versions they replaced are back, the ones they wrote gone.
      await store.undoFrom(2)
      assert.deepEqual(await permissionsOf(store, 'alice', 99), [active1, owner])
      assert.deepEqual(await linksOf(store, 'alice', 99), ['eosio.token:transfer=active@1', 'rawdb:=active@1'])
      await store.applyBlock(
        batch(
          2,
          {
            permissions: [perm('alice', 'owner', '', 1, [K2])],
            links: [link('alice', 'eosio.token', 'transfer', undefined)],
          },
          'b',
          'a',
        ),
        0,
      )
      assert.deepEqual(await permissionsOf(store, 'alice', 99), [active1, ['owner', '', 1, ['Ya5H:1'], [], 2]])
      assert.deepEqual(await permissionsOf(store, 'alice', 1), [active1, owner])
      assert.deepEqual(await linksOf(store, 'alice', 99), ['rawdb:=active@1'])
      assert.deepEqual(await linksOf(store, 'alice', 1), ['eosio.token:transfer=active@1', 'rawdb:=active@1'])
      assert.deepEqual(await store.integrityFindings(), [])
    },
  )

  test(
    `${name}: permissions() and permissionLinks() in a snapshot see one state while a second open writes and undoes`,
    { skip },
    async (t) => {
      const backing = await factory(t)
      const writer = await backing.open()
      const reader = await backing.open()
      t.after(async () => {
        await reader.close()
        await writer.close()
      })
      await writer.applyBlock(
        batch(1, {
          permissions: [perm('alice', 'active', 'owner', 1, [K1])],
          links: [link('alice', 'rawdb', 'put', 'active')],
        }),
        0,
      )
      await writer.applyBlock(
        batch(2, {
          permissions: [perm('alice', 'active', 'owner', 2, [K1, K2])],
          links: [link('alice', 'rawdb', 'put', undefined)],
        }),
        0,
      )
      const seen = await reader.snapshot(async (r) => {
        const before = { permissions: await permissionsOf(r, 'alice', 99), links: await linksOf(r, 'alice', 99) }
        await writer.applyBlock(
          batch(3, {
            permissions: [perm('alice', 'active', 'owner', 3, [K2])],
            links: [link('alice', 'rawdb', 'get', 'active')],
          }),
          0,
        )
        await writer.undoFrom(2)
        return {
          before,
          after: { permissions: await permissionsOf(r, 'alice', 99), links: await linksOf(r, 'alice', 99) },
          links1: await linksOf(r, 'alice', 1),
        }
      })
      assert.deepEqual(seen.before, { permissions: [['active', 'owner', 2, ['Dq63:1', 'Ya5H:2'], [], 2]], links: [] })
      assert.deepEqual(seen.after, seen.before)
      assert.deepEqual(seen.links1, ['rawdb:put=active@1'])
      // Outside the snapshot the undo is seen.
      assert.deepEqual(await permissionsOf(reader, 'alice', 99), [['active', 'owner', 1, ['Dq63:1'], [], 1]])
      assert.deepEqual(await linksOf(reader, 'alice', 99), ['rawdb:put=active@1'])
    },
  )
}
