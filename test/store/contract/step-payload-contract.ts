import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  FORKED_RETENTION_BLOCKS,
  TRANSACTION_CANCELED,
  type ActionRecord,
  type BlockBatch,
  type RowChangeRecord,
  type Step,
  type StepPayload,
  type Store,
  type TransactionRecord,
} from '../../../src/store/index.ts'
import type { StoreFactory } from './store-contract.ts'

const id = (num: number, branch = 'a') => num.toString(16).padStart(8, '0') + branch.repeat(56)
const trxId = (num: number, k: number, branch: string) =>
  `${branch}${k}`.padEnd(8, '0') + num.toString(16).padStart(56, '0')

/** Global sequences by block: 10 per block, so a branch's blocks take the same range as the ones they replace. */
const seq = (num: number, k: number) => num * 10 + k

function action(num: number, k: number, trx: string, ordinal: number, creator: number): ActionRecord {
  return {
    globalSequence: seq(num, k),
    blockNum: num,
    trxId: trx,
    actionOrdinal: ordinal,
    creatorActionOrdinal: creator,
    receiver: creator ? 'bob' : 'rawdb',
    account: 'rawdb',
    name: 'put',
    authorization: [{ actor: 'rawdb', permission: 'active' }],
    data: new Uint8Array([num, k, 0xff]),
    returnValue: k === 1 ? new Uint8Array([7]) : new Uint8Array(0),
    actDigest: `${num}${k}`.padEnd(64, 'c'),
    recvSequence: BigInt(100 + k),
    ramDeltas: k === 0 ? [{ account: 'rawdb', delta: -12n }] : [],
    trace: {
      elapsedUs: 3,
      console: `block ${num}`,
      contextFree: false,
      except: undefined,
      authSequence: [['rawdb', String(k)]],
      codeSequence: 1,
      abiSequence: 1,
    },
  }
}

const row = (key: number, value: number | undefined, scope = 'alice'): RowChangeRecord => ({
  code: 'rawdb',
  scope,
  table: 'rows',
  primaryKey: BigInt(key),
  payer: 'rawdb',
  value: value === undefined ? undefined : new Uint8Array([value]),
})

/**
 * A block of `branch` with two transactions (three actions, one inline), a canceled delayed
 * transaction (a fact without a trace, index -1) and `rows`; listed out of order on purpose.
 */
function block(num: number, rows: RowChangeRecord[], branch = 'a', parentBranch = branch): BlockBatch {
  const [t0, t1] = [trxId(num, 0, branch), trxId(num, 1, branch)]
  const trx = (tid: string, blockIndex: number, status = 0): TransactionRecord => ({
    id: tid,
    blockNum: num,
    blockIndex,
    status,
    cpuUsageUs: 10 + blockIndex,
    netUsageWords: 2,
    scheduled: status !== 0,
  })
  return {
    block: {
      num,
      id: id(num, branch),
      previous: num === 1 ? '0'.repeat(64) : id(num - 1, parentBranch),
      timestampMs: 1_000_000 + num * 500,
      producer: 'producera',
      transactionCount: 2,
      actionCount: 3,
    },
    transactions: [trx('ca'.repeat(32), -1, TRANSACTION_CANCELED), trx(t1, 1), trx(t0, 0)],
    actions: [action(num, 0, t0, 1, 0), action(num, 1, t1, 1, 0), action(num, 2, t1, 2, 1)],
    rows,
    abis: [],
    permissions: [],
    links: [],
  }
}

/** A block with no transaction, action or row. */
function empty(num: number, branch = 'a', parentBranch = branch): BlockBatch {
  const full = block(num, [], branch, parentBranch)
  return { ...full, transactions: [], actions: [], block: { ...full.block, transactionCount: 0, actionCount: 0 } }
}

/** What a block of these fixtures holds, as a payload must give it: records in the documented orders. */
function expectedContent(b: BlockBatch, olds: Record<number, number | undefined | 'none'>): Omit<StepPayload, 'step'> {
  const traced = b.transactions.filter((t) => t.blockIndex >= 0).sort((x, y) => x.blockIndex - y.blockIndex)
  const facts = b.transactions.filter((t) => t.blockIndex < 0).sort((x, y) => y.blockIndex - x.blockIndex)
  const rowChanges = [...b.rows]
    .sort((x, y) => (x.scope < y.scope ? -1 : x.scope > y.scope ? 1 : Number(x.primaryKey - y.primaryKey)))
    .map((r) => {
      const old = olds[Number(r.primaryKey)]
      return {
        code: r.code,
        table: r.table,
        scope: r.scope,
        primaryKey: r.primaryKey,
        payer: r.payer,
        value: r.value,
        old:
          old === 'none' ? undefined : { payer: 'rawdb', value: old === undefined ? undefined : new Uint8Array([old]) },
      }
    })
  return {
    block: b.block,
    transactions: [...traced, ...facts],
    actions: [...b.actions].sort((x, y) => Number(x.globalSequence - y.globalSequence)),
    rowChanges,
  }
}

/** A payload as plain data: undefined fields left out (as JSON columns keep them), bytes as hex, bigints as text. */
const plain = (value: unknown) =>
  JSON.parse(
    JSON.stringify(value, (_k, v: unknown) =>
      typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v,
    ),
  ) as unknown

const withoutStep = (p: StepPayload | undefined) => {
  if (!p) return p
  const { step: _step, ...content } = p
  return content
}

const label = (s: Step) => `${s.type}:${s.blockNum}:${s.blockId.slice(-1)}`

/** StepReader.stepPayloads, run against one adapter. */
export function runStepPayloadContract(name: string, factory: StoreFactory, skip: string | false = false): void {
  test(
    `${name}: stepPayloads() gives each new and irreversible step its stored block, transactions, actions and row changes`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      const b1 = block(1, [row(1, 10), row(2, 20)])
      const b2 = block(2, [row(2, undefined), row(1, 11), row(3, 30, 'bob')])
      await store.applyBlock(b1, 0)
      await store.applyBlock(b2, 1)
      await store.applyBlock(empty(3), 1)
      const steps = await store.stepsAfter(0, 100)
      assert.deepEqual(steps.map(label), ['new:1:a', 'new:2:a', 'irreversible:1:a', 'new:3:a'])
      const payloads = await store.stepPayloads(steps)
      assert.equal(payloads.length, steps.length)
      payloads.forEach((p, i) => assert.deepEqual(p?.step, steps[i]))
      const e1 = expectedContent(b1, { 1: 'none', 2: 'none' })
      const e2 = expectedContent(b2, { 1: 10, 2: 20, 3: 'none' })
      assert.deepEqual(plain(withoutStep(payloads[0])), plain(e1))
      assert.deepEqual(plain(withoutStep(payloads[1])), plain(e2))
      assert.deepEqual(plain(withoutStep(payloads[2])), plain(e1), 'an irreversible step carries its block too')
      assert.deepEqual(plain(withoutStep(payloads[3])), plain(expectedContent(empty(3), {})))
      // What the other readers answer for the same block.
      assert.deepEqual(payloads[1]?.block, await store.blockByNum(2))
      assert.deepEqual(payloads[1]?.rowChanges, await store.rowChanges(2))
      assert.deepEqual(payloads[1]?.actions, [
        ...(await store.actionsOfTransaction(trxId(2, 0, 'a'))),
        ...(await store.actionsOfTransaction(trxId(2, 1, 'a'))),
      ])
      assert.deepEqual(
        payloads[1]?.actions.map((a) => [a.globalSequence, a.trxId]),
        [
          [20, trxId(2, 0, 'a')],
          [21, trxId(2, 1, 'a')],
          [22, trxId(2, 1, 'a')],
        ],
      )
      assert.deepEqual(
        payloads[1]?.transactions.map((x) => x.blockIndex),
        [0, 1, -1],
      )
      // Steps in any order and repeated, unknown blocks, and no steps at all.
      const unknown: Step = { seq: 99, type: 'new', blockNum: 9, blockId: id(9, 'z') }
      const mixed = await store.stepPayloads([steps[3], unknown, steps[0], steps[0]])
      assert.deepEqual(
        mixed.map((p) => p && label(p.step)),
        ['new:3:a', undefined, 'new:1:a', 'new:1:a'],
      )
      assert.deepEqual(await store.stepPayloads([]), [])
    },
  )

  test(
    `${name}: an undo step carries exactly what the undone block held, and so does the earlier new step of a block forked out; a reopened store still has them`,
    { skip },
    async (t) => {
      const backing = await factory(t)
      let store = await backing.open()
      t.after(() => store.close())
      const blocks = [
        block(1, [row(1, 10)]),
        block(2, [row(1, 11), row(2, 20)]),
        block(3, [row(1, undefined), row(2, 21)]),
        block(4, [row(1, 14), row(5, 50)]),
      ]
      for (const b of blocks) await store.applyBlock(b, b.block.num === 1 ? 0 : 1)
      const before = await store.stepPayloads(await store.stepsAfter(0, 100))
      const held = new Map(before.map((p) => [p!.step.blockId, withoutStep(p)]))
      await store.undoFrom(3)
      // The other branch reuses the numbers, the global sequences and a row key.
      await store.applyBlock(block(3, [row(2, 99)], 'b', 'a'), 1)
      const steps = await store.stepsAfter(0, 100)
      assert.deepEqual(steps.map(label), [
        'new:1:a',
        'new:2:a',
        'irreversible:1:a',
        'new:3:a',
        'new:4:a',
        'undo:4:a',
        'undo:3:a',
        'new:3:b',
      ])
      const check = async (reader: Store) => {
        const payloads = await reader.stepPayloads(steps)
        for (const [i, s] of steps.entries()) {
          if (s.blockId === id(3, 'b')) continue
          assert.deepEqual(withoutStep(payloads[i]), held.get(s.blockId), label(s))
          assert.deepEqual(payloads[i]?.step, s)
        }
        assert.deepEqual(
          plain(withoutStep(payloads[6])),
          plain(expectedContent(blocks[2], { 1: 11, 2: 20 })),
          'the undo of 3 restores 1 to 11 and 2 to 20',
        )
        assert.deepEqual(
          plain(withoutStep(payloads[5])),
          plain(expectedContent(blocks[3], { 1: undefined, 5: 'none' })),
          'the undo of 4 restores the tombstone of 1',
        )
        assert.deepEqual(
          plain(withoutStep(payloads[7])),
          plain(expectedContent(block(3, [row(2, 99)], 'b', 'a'), { 2: 20 })),
        )
      }
      await check(store)
      await store.close()
      store = await backing.open()
      await check(store)
      assert.deepEqual(await store.integrityFindings(), [])
    },
  )

  test(
    `${name}: a block undone, redone and undone again keeps one payload, and every one of its steps answers it`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      const b2 = block(2, [row(1, 12)])
      const b3 = block(3, [row(1, 13), row(2, 23)])
      await store.applyBlock(block(1, [row(1, 11)]), 0)
      await store.applyBlock(b2, 0)
      await store.applyBlock(b3, 0)
      const held = withoutStep((await store.stepPayloads((await store.stepsOfBlock(id(3))).slice(0, 1)))[0])
      await store.undoFrom(3)
      await store.applyBlock(b3, 0)
      await store.undoFrom(2)
      await store.applyBlock(b2, 0)
      await store.applyBlock(b3, 0)
      await store.undoFrom(3)
      await store.applyBlock(block(3, [row(1, 33)], 'b', 'a'), 0)
      const steps = await store.stepsOfBlock(id(3))
      assert.deepEqual(
        steps.map((s) => s.type),
        ['new', 'undo', 'redo', 'undo', 'redo', 'undo'],
      )
      const payloads = await store.stepPayloads(steps)
      for (const p of payloads) assert.deepEqual(withoutStep(p), held)
      assert.deepEqual(plain(held), plain(expectedContent(b3, { 1: 12, 2: 'none' })))
      // While redone, its steps are answered from the stored block: the same content.
      const all = await store.stepsAfter(0, 1000)
      const b2Steps = all.filter((s) => s.blockId === id(2))
      assert.deepEqual(
        b2Steps.map((s) => s.type),
        ['new', 'undo', 'redo'],
      )
      for (const p of await store.stepPayloads(b2Steps))
        assert.deepEqual(plain(withoutStep(p)), plain(expectedContent(b2, { 1: 11 })))
      // A batch answers what steps asked one by one answer.
      const batch = await store.stepPayloads(all)
      assert.deepEqual(batch, (await Promise.all(all.map((s) => store.stepPayloads([s])))).flat())
      assert.ok(batch.every((p) => p !== undefined))
    },
  )

  test(
    `${name}: forked-out content is kept until LIB is FORKED_RETENTION_BLOCKS past it, pruned by block writes, then answered as undefined`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      await store.applyBlock(block(1, [row(1, 10)]), 0)
      await store.applyBlock(block(2, [row(1, 11)]), 1)
      await store.applyBlock(block(3, [row(1, 12)]), 1)
      await store.undoFrom(2)
      await store.applyBlock(block(2, [row(1, 21)], 'b', 'a'), 1)
      await store.applyBlock(block(3, [row(1, 22)], 'b'), 1)
      await store.undoFrom(3)
      const forkedSteps = (await store.stepsAfter(0, 100)).filter(
        (s) => (s.blockId.endsWith('a') && s.blockNum >= 2) || s.blockId === id(3, 'b'),
      )
      assert.deepEqual(forkedSteps.map(label), ['new:2:a', 'new:3:a', 'undo:3:a', 'undo:2:a', 'new:3:b', 'undo:3:b'])
      const kept = await store.stepPayloads(forkedSteps)
      assert.ok(kept.every((p) => p !== undefined))
      // Empty blocks of a branch c on top of 2b up to far past the fork, LIB trailing: block 3 of a
      // and of b (forked) are kept while LIB < 3 + retention, block 2 of a while LIB < 2 + retention.
      const last = 3 + FORKED_RETENTION_BLOCKS + 5
      const chain = Array.from({ length: last - 2 }, (_, i) => empty(i + 3, 'c', i === 0 ? 'b' : 'c'))
      const payloadsAt = async () => (await store.stepPayloads(forkedSteps)).map((p) => (p ? 'kept' : 'gone'))
      for (let i = 0; i < chain.length - 6; i += 1_000)
        await store.applyBlocks(chain.slice(i, Math.min(i + 1_000, chain.length - 6)), 2 + FORKED_RETENTION_BLOCKS - 1)
      assert.equal((await store.position())?.lib, 1 + FORKED_RETENTION_BLOCKS)
      assert.deepEqual(await payloadsAt(), ['kept', 'kept', 'kept', 'kept', 'kept', 'kept'])
      await store.applyBlocks(chain.slice(-6, -5), 2 + FORKED_RETENTION_BLOCKS)
      assert.deepEqual(
        await payloadsAt(),
        ['gone', 'kept', 'kept', 'gone', 'kept', 'kept'],
        'block 2 of a is pruned once LIB is the retention past it',
      )
      await store.applyBlocks(chain.slice(-5, -4), 2 + FORKED_RETENTION_BLOCKS)
      assert.deepEqual(
        await payloadsAt(),
        ['gone', 'kept', 'kept', 'gone', 'kept', 'kept'],
        'LIB did not move: nothing more is pruned',
      )
      await store.applyBlock(chain.at(-4)!, 3 + FORKED_RETENTION_BLOCKS)
      assert.deepEqual(await payloadsAt(), ['gone', 'gone', 'gone', 'gone', 'gone', 'gone'])
      // Stored blocks are answered whatever their age.
      const first = (await store.stepsAfter(0, 3)).slice(0, 1)
      assert.deepEqual(
        plain(withoutStep((await store.stepPayloads(first))[0])),
        plain(expectedContent(block(1, [row(1, 10)]), { 1: 'none' })),
      )
      const head = await store.stepsOfBlock(id(last - 4, 'c'))
      assert.equal((await store.stepPayloads(head))[0]?.block.num, last - 4)
      assert.deepEqual(await store.integrityFindings(), [])
    },
  )
}
