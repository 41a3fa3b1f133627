import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  FLAG_INPUT,
  FLAG_NOTIF,
  FLAG_SCHEDULED,
  blockSearchTerms,
  type ActionRecord,
  type BlockBatch,
  type RowChangeRecord,
  type SearchExpr,
  type TransactionRecord,
} from '../../../src/store/index.ts'
import { seededRandom } from '../../_helpers/store.ts'
import type { StoreFactory } from './store-contract.ts'

const ACCOUNTS = ['alice', 'bob', 'carol', 'dave', 'eosio.token']
const VOCABULARY = [
  'data.to:alice',
  'data.to:bob',
  'data.from:carol',
  'data.quantity:1.0000 EOS',
  'ram.consumed:dave',
  'rare:x',
]

interface ModelAction {
  readonly seq: number
  readonly block: number
  readonly terms: ReadonlySet<string>
  readonly flags: number
}

/**
 * A seeded chain of blocks with random actions and row changes; `seq` continues from the block's
 * parent, as on a real fork. Terms are what ingest computes (store/search/terms.ts), the random
 * vocabulary standing in for `data.*`: so `db.*` and `parent.*` are written with the
 * block and undone with it.
 */
function randomBlock(
  num: number,
  branch: string,
  parentId: string,
  firstSeq: number,
  random: () => number,
): { batch: BlockBatch; model: ModelAction[] } {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]
  const transactions: TransactionRecord[] = []
  const actions: ActionRecord[] = []
  const vocabulary: string[][] = []
  const flags: number[] = []
  let seq = firstSeq
  const trxCount = 1 + Math.floor(random() * 3)
  for (let t = 0; t < trxCount; t++) {
    const trxId = `${num.toString(16).padStart(8, '0')}${branch}${t}`.padEnd(64, '0')
    const scheduled = random() < 0.2
    transactions.push({
      id: trxId,
      blockNum: num,
      blockIndex: t,
      status: 0,
      cpuUsageUs: 100,
      netUsageWords: 10,
      scheduled,
    })
    const actionCount = 1 + Math.floor(random() * 4)
    for (let o = 1; o <= actionCount; o++) {
      const receiver = pick(ACCOUNTS)
      const account = random() < 0.7 ? receiver : pick(ACCOUNTS)
      const name = pick(['transfer', 'put'])
      vocabulary.push(VOCABULARY.filter((v) => random() < (v === 'rare:x' ? 0.02 : 0.3)))
      const creator = o === 1 ? 0 : Math.floor(random() * o)
      actions.push({
        globalSequence: seq,
        blockNum: num,
        trxId,
        actionOrdinal: o,
        creatorActionOrdinal: creator,
        receiver,
        account,
        name,
        authorization: [{ actor: receiver, permission: 'active' }],
        data: new Uint8Array([o]),
        returnValue: new Uint8Array(0),
        actDigest: '0'.repeat(64),
        recvSequence: 1n,
        ramDeltas: [{ account: receiver, delta: 10n }],
      })
      flags.push(
        (creator === 0 ? FLAG_INPUT : 0) | (receiver !== account ? FLAG_NOTIF : 0) | (scheduled ? FLAG_SCHEDULED : 0),
      )
      seq++
    }
  }
  // A block reports each row once: as the block left it.
  const rowsByKey = new Map<string, RowChangeRecord>()
  for (let r = Math.floor(random() * 4); r > 0; r--) {
    const scope = pick(['alice', 'bob'])
    const row = {
      code: pick(ACCOUNTS),
      table: pick(['accounts', 'rows']),
      scope,
      primaryKey: BigInt(Math.floor(random() * 3)),
      payer: scope,
      value: new Uint8Array([1]),
    }
    rowsByKey.set(`${row.code}/${row.table}/${row.scope}/${row.primaryKey}`, row)
  }
  const rows = [...rowsByKey.values()]
  const terms = blockSearchTerms(actions, rows, (i) => vocabulary[i])
  const withTerms = actions.map((a, i) => ({ ...a, searchTerms: terms[i] }))
  // `trx_id:` is answered from the transactions table: a term of the model, not of the postings.
  const model = withTerms.map((a, i) => ({
    seq: Number(a.globalSequence),
    block: num,
    terms: new Set([...terms[i], `trx_id:${a.trxId}`]),
    flags: flags[i],
  }))
  const id = `${num.toString(16).padStart(8, '0')}${branch.repeat(56)}`
  return {
    batch: {
      block: {
        num,
        id,
        previous: parentId,
        timestampMs: 1_000_000 + num * 500,
        producer: 'producera',
        transactionCount: transactions.length,
        actionCount: actions.length,
      },
      transactions,
      actions: withTerms,
      rows,
      abis: [],
      permissions: [],
      links: [],
    },
    model,
  }
}

function matches(expr: SearchExpr, a: ModelAction): boolean {
  if ('term' in expr) return a.terms.has(expr.term)
  if ('flag' in expr) {
    const bit = { input: FLAG_INPUT, notif: FLAG_NOTIF, scheduled: FLAG_SCHEDULED }[expr.flag]
    return ((a.flags & bit) !== 0) === expr.value
  }
  if ('and' in expr) return expr.and.every((e) => matches(e, a))
  if ('or' in expr) return expr.or.some((e) => matches(e, a))
  return !matches(expr.not, a)
}

const QUERIES: SearchExpr[] = [
  { term: 'receiver:alice' },
  { and: [{ term: 'receiver:bob' }, { term: 'data.to:alice' }] },
  { and: [{ term: 'account:eosio.token' }, { term: 'data.from:carol' }, { term: 'rare:x' }] },
  { or: [{ term: 'rare:x' }, { term: 'receiver:dave' }] },
  { and: [{ term: 'data.to:bob' }, { not: { term: 'receiver:alice' } }] },
  { and: [{ flag: 'input', value: false }, { term: 'action:put' }] },
  { flag: 'notif', value: true },
  {
    and: [
      { flag: 'scheduled', value: true },
      { flag: 'input', value: true },
    ],
  },
  { not: { term: 'data.quantity:1.0000 EOS' } },
  {
    and: [
      { or: [{ term: 'receiver:carol' }, { term: 'receiver:dave' }] },
      { or: [{ term: 'data.to:alice' }, { term: 'ram.consumed:dave' }] },
      { flag: 'notif', value: false },
    ],
  },
  { term: 'no:such-term' },
  // Terms that depend on the block: its row changes, the action's parent, its transaction.
  { term: 'db.table:accounts' },
  { and: [{ term: 'db.table:rows/bob' }, { flag: 'notif', value: false }] },
  { or: [{ term: 'db.key:accounts/alice/............1' }, { term: 'db.key:rows/bob/' }] },
  { and: [{ term: 'parent.receiver:carol' }, { term: 'parent.action:put' }] },
  { and: [{ term: 'parent.account:eosio.token' }, { not: { term: 'db.table:rows' } }] },
]

/** Search against a brute-force model, after forks and batched writes, on one adapter. */
export function runSearchContract(name: string, factory: StoreFactory, skip: string | false = false): void {
  test(
    `${name}: searchActions() equals a brute-force scan in both directions, after forks that cut batched posting chunks`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      const random = seededRandom(Number(process.env.ANTLER_SEED ?? 5))
      const chain: { id: string; model: ModelAction[]; nextSeq: number }[] = []
      let branch = 0
      const grow = async (count: number, batched: boolean) => {
        const batches: BlockBatch[] = []
        for (let i = 0; i < count; i++) {
          const parent = chain[chain.length - 1]
          const b = randomBlock(
            chain.length + 1,
            'abcdef'[branch % 6],
            parent?.id ?? '0'.repeat(64),
            parent?.nextSeq ?? 1,
            random,
          )
          chain.push({ id: b.batch.block.id, model: b.model, nextSeq: (parent?.nextSeq ?? 1) + b.model.length })
          batches.push(b.batch)
        }
        // The store's LIB stays at 0 so any block can be undone.
        if (batched) await store.applyBlocks(batches, 0)
        else for (const b of batches) await store.applyBlock(b, 0)
      }
      await grow(60, true)
      // Transaction 0 of a block (every block has one): its id from the block id's number and branch.
      const trxZero = (blockId: string) => `${blockId.slice(0, 9)}0`.padEnd(64, '0')
      const undone: string[] = []
      for (let fork = 0; fork < 6; fork++) {
        const from = chain.length - Math.floor(random() * 15)
        undone.push(...chain.slice(from - 1).map((b) => trxZero(b.id)))
        await store.undoFrom(from)
        chain.length = from - 1
        branch++
        await grow(5 + Math.floor(random() * 10), random() < 0.5)
      }
      const all = chain.flatMap((b) => b.model)
      // A transaction of the final chain's last block, and those of blocks forks undid (gone unless a later branch
      // wrote the same id).
      const lastTrx = trxZero(chain[chain.length - 1].id)
      const trxQueries: SearchExpr[] = [
        { term: `trx_id:${lastTrx}` },
        { and: [{ term: `trx_id:${lastTrx}` }, { flag: 'input', value: true }] },
        { or: undone.map((id) => ({ term: `trx_id:${id}` })) },
      ]
      assert.ok(all.some((a) => a.terms.has(`trx_id:${lastTrx}`)) && undone.length > 0)
      // An id that cannot be stored matches nothing (and is not an error): upper case, short, not hex.
      for (const id of [lastTrx.toUpperCase(), lastTrx.slice(1), 'nothex'])
        assert.deepEqual(
          await store.searchActions({ query: { term: `trx_id:${id}` }, direction: 'forward', limit: 10 }),
          [],
        )
      for (const query of [...QUERIES, ...trxQueries]) {
        for (const direction of ['forward', 'backward'] as const) {
          const expected = all.filter((a) => matches(query, a)).map((a) => a.seq)
          if (direction === 'backward') expected.reverse()
          const found = await store.searchActions({ query, direction, limit: 10_000 })
          assert.deepEqual(
            found.map((m) => m.seq),
            expected,
            `${JSON.stringify(query)} ${direction}`,
          )
          // From a position, with a limit: the same slice.
          const from = all[Math.floor(all.length / 3)].seq
          const slice = expected.filter((s) => (direction === 'forward' ? s >= from : s <= from)).slice(0, 7)
          assert.deepEqual(
            (await store.searchActions({ query, direction, fromSeq: from, limit: 7 })).map((m) => m.seq),
            slice,
          )
        }
      }
      const someSeqs = [all[3].seq, all[all.length - 1].seq, 999_999]
      assert.deepEqual(
        (await store.actionsBySeq(someSeqs)).map((a) => Number(a.globalSequence)),
        someSeqs.slice(0, 2),
      )
      assert.equal(await store.firstSeqFromBlock(1), 1)
      assert.equal(await store.firstSeqFromBlock(chain.length + 1), undefined)
    },
  )

  test(
    `${name}: a term with more entries than one chunk holds is read whole, and cut exactly by undo`,
    { skip },
    async (t) => {
      const store = await (await factory(t)).open()
      t.after(() => store.close())
      const random = seededRandom(9)
      const batches: BlockBatch[] = []
      let parent = '0'.repeat(64)
      let seq = 1
      for (let num = 1; num <= 40; num++) {
        const b = randomBlock(num, 'a', parent, seq, random)
        // Widen each block to 120 actions under one term: 4,800 entries span several chunks.
        const actions = Array.from({ length: 120 }, (_, i) => ({
          ...b.batch.actions[0],
          globalSequence: seq + i,
          actionOrdinal: i + 1,
          searchTerms: ['dense:yes'],
        }))
        batches.push({
          ...b.batch,
          actions,
          transactions: b.batch.transactions.slice(0, 1),
          block: { ...b.batch.block, actionCount: 120 },
        })
        parent = b.batch.block.id
        seq += 120
      }
      await store.applyBlocks(batches, 0)
      const dense = await store.searchActions({ query: { term: 'dense:yes' }, direction: 'forward', limit: 100_000 })
      assert.equal(dense.length, 4800)
      await store.undoFrom(25)
      const cut = await store.searchActions({ query: { term: 'dense:yes' }, direction: 'backward', limit: 100_000 })
      assert.equal(cut.length, 24 * 120)
      assert.equal(cut[0].seq, 24 * 120)
      // Every widened action is an input action: the list of all actions ends at the cut too.
      const tail = await store.searchActions({
        query: { flag: 'input', value: true },
        direction: 'forward',
        fromSeq: 24 * 120 - 5,
        limit: 10,
      })
      assert.deepEqual(
        tail.map((m) => m.seq),
        [2875, 2876, 2877, 2878, 2879, 2880],
      )
    },
  )
}
