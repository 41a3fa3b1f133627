import assert from 'node:assert/strict'
import { test } from 'node:test'
import { actionSearchTerms } from '../../src/store/search/terms.ts'
import {
  openPostgresStore,
  type ActionRecord,
  type BlockBatch,
  type SearchExpr,
  type Store,
  type TransactionRecord,
} from '../../src/store/index.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import { foldNotifications } from '../../src/hyperion/action-documents.ts'
import { planActionQuery } from '../../src/hyperion/action-query.ts'
import {
  countableByPostings,
  countingQuery,
  onOriginal,
  searchActionDocuments,
} from '../../src/hyperion/action-search.ts'
import type { BlockDecoderSource } from '../../src/lifecycle/decoder.ts'
import { mulberry32 } from '../_helpers/random.ts'
import { tempSqliteStore } from '../_helpers/store.ts'

/** No ABIs: every action's data is its hex. */
const noDecoders: BlockDecoderSource = async (blocks) =>
  new Map([...blocks.keys()].map((n) => [n, Object.assign(() => undefined, { abiOf: () => undefined })]))

const NAMES = ['alice', 'bob', 'carol', 'dave']
const CONTRACTS = ['eosio.token', 'tok']

/** A trace as the model knows it: the action, its terms and flags. */
interface ModelTrace {
  readonly action: ActionRecord
  readonly terms: ReadonlySet<string>
  readonly notif: boolean
}

/**
 * A random chain as nodeos runs it: each transaction's top-level actions (ordinals 1..n, some identical), each
 * followed by its notifications (creator ordinal = the original's ordinal), then sometimes an inline action of the
 * original with its own notifications.
 */
function randomChain(seed: number, blocks: number): { batches: BlockBatch[]; traces: ModelTrace[][] } {
  const random = mulberry32(seed)
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]
  let seq = 1
  const batches: BlockBatch[] = []
  const executions: ModelTrace[][] = []
  for (let num = 1; num <= blocks; num++) {
    const transactions: TransactionRecord[] = []
    const actions: ActionRecord[] = []
    for (let t = Math.floor(random() * 3); t > 0; t--) {
      const trxId = `${num.toString(16).padStart(6, '0')}${t.toString(16).padStart(2, '0')}${'e'.repeat(56)}`
      transactions.push({
        id: trxId,
        blockNum: num,
        blockIndex: transactions.length,
        status: 0,
        cpuUsageUs: 100 + t,
        netUsageWords: 10,
        scheduled: false,
      })
      const execution: ModelTrace[] = []
      const calls = Array.from({ length: 1 + Math.floor(random() * 3) }, () => ({
        account: pick(CONTRACTS),
        name: pick(['transfer', 'issue']),
        actor: pick(NAMES),
        to: pick(NAMES),
        notified: NAMES.filter(() => random() < 0.4),
        inline: random() < 0.3,
      }))
      // Sometimes the same call twice (the same digest): two actions, two documents.
      if (random() < 0.3) calls.push({ ...calls[0] })
      let ordinal = calls.length
      const run = (
        call: Omit<(typeof calls)[number], 'inline'>,
        actionOrdinal: number,
        creatorActionOrdinal: number,
      ): number => {
        const digest = `${call.account}/${call.name}/${call.actor}/${call.to}`.padEnd(64, '0').slice(0, 64)
        const receivers = [call.account, ...call.notified.filter((n) => n !== call.account)]
        receivers.forEach((receiver, i) => {
          const action: ActionRecord = {
            globalSequence: seq++,
            blockNum: num,
            trxId,
            actionOrdinal: i === 0 ? actionOrdinal : ++ordinal,
            creatorActionOrdinal: i === 0 ? creatorActionOrdinal : actionOrdinal,
            receiver,
            account: call.account,
            name: call.name,
            authorization: [{ actor: call.actor, permission: 'active' }],
            data: new Uint8Array(Buffer.from(digest)),
            returnValue: new Uint8Array(0),
            actDigest: digest,
            recvSequence: BigInt(seq),
            ramDeltas: [],
          }
          const terms = actionSearchTerms(action, [`data.to:${call.to}`])
          actions.push({ ...action, searchTerms: terms })
          execution.push({ action, terms: new Set([...terms, `trx_id:${trxId}`]), notif: i > 0 })
        })
        return actionOrdinal
      }
      calls.forEach((call, i) => {
        run(call, i + 1, 0)
        if (call.inline) run({ ...call, account: 'tok', name: 'log', notified: [pick(NAMES)] }, ++ordinal, i + 1)
      })
      executions.push(execution)
    }
    batches.push({
      block: {
        num,
        id: `${num.toString(16).padStart(8, '0')}${'d'.repeat(56)}`,
        previous: num === 1 ? '0'.repeat(64) : `${(num - 1).toString(16).padStart(8, '0')}${'d'.repeat(56)}`,
        timestampMs: Date.UTC(2030, 0, 1) + num * 500,
        producer: 'prod',
        transactionCount: transactions.length,
        actionCount: actions.length,
      },
      transactions,
      actions,
      rows: [],
      abis: [],
      permissions: [],
      links: [],
    })
  }
  return { batches, traces: executions }
}

/** Whether one trace matches the expression (the model of the index). */
function matches(expr: SearchExpr, trace: ModelTrace): boolean {
  if ('term' in expr) return trace.terms.has(expr.term)
  if ('flag' in expr) {
    const on =
      expr.flag === 'notif' ? trace.notif : expr.flag === 'input' ? trace.action.creatorActionOrdinal === 0 : false
    return on === expr.value
  }
  if ('not' in expr) return !matches(expr.not, trace)
  if ('and' in expr) return expr.and.every((e) => matches(e, trace))
  return expr.or.some((e) => matches(e, trace))
}

/** Paging and total over a store against a brute-force fold of the whole chain. */
async function checkPagingAndTotal(store: Store): Promise<void> {
  const { batches, traces } = randomChain(7, 80)
  await store.applyBlocks(batches, 80)
  const byAction = new Map(traces.flat().map((tr) => [tr.action, tr]))
  // Every document of the chain: the fold of each execution, in global-sequence order.
  const documents = traces.flatMap((execution) =>
    foldNotifications(execution.map((tr) => tr.action)).map((group) => group.map((a) => byAction.get(a)!)),
  )
  const queries = [
    ...NAMES.map((n) => `account=${n}`),
    'account=tok',
    'account=bob&filter=tok:*',
    'filter=eosio.token:transfer,tok:issue',
    'receipts.receiver=alice,bob',
    'receipts.receiver=!alice',
    'act.name=!transfer&account=carol',
    'transfer.to=dave',
    'act.data.to=alice&act.authorization.actor=bob',
    'account=alice&block_num=10-40',
    'account=bob&global_sequence=20-120',
    'account=dave&after=30&before=60',
    '',
  ]
  let checked = 0
  for (const query of queries) {
    const plan = planActionQuery(Object.fromEntries(new URLSearchParams(query)))
    const inRange = (doc: ModelTrace[]) => {
      const a = doc[0].action
      const { blocks, seq } = plan
      return (
        a.blockNum >= (blocks.low ?? 0) &&
        a.blockNum <= (blocks.high ?? Infinity) &&
        doc.some(
          (tr) => tr.action.globalSequence >= (seq.low ?? 0) && tr.action.globalSequence <= (seq.high ?? Infinity),
        )
      )
    }
    const expected = documents.filter(
      (doc) =>
        inRange(doc) &&
        doc.some(
          (tr) =>
            matches(plan.expr, tr) &&
            tr.action.globalSequence >= (plan.seq.low ?? 0) &&
            tr.action.globalSequence <= (plan.seq.high ?? Infinity),
        ),
    )
    for (const [direction, skip, limit, cap] of [
      ['backward', 0, 1000, 10_000],
      ['forward', 0, 1000, 10_000],
      ['backward', 3, 4, 5],
      ['forward', 7, 2, 1],
    ] as const) {
      const page = await searchActionDocuments(store, noDecoders, { plan, direction, skip, limit, countCap: cap })
      const order = direction === 'forward' ? expected : [...expected].reverse()
      assert.deepEqual(
        page.documents.map((d) => d.global_sequence),
        order.slice(skip, skip + limit).map((doc) => doc[0].action.globalSequence),
        `${query} ${direction} skip ${skip} limit ${limit}`,
      )
      assert.deepEqual(
        page.documents.map((d) => d.receipts.map((r) => r.receiver)),
        order.slice(skip, skip + limit).map((doc) => doc.map((tr) => tr.action.receiver)),
      )
      assert.deepEqual(
        page.total,
        expected.length > cap ? { value: cap, relation: 'gte' } : { value: expected.length, relation: 'eq' },
        `${query}: total with cap ${cap}`,
      )
      checked++
    }
  }
  assert.equal(checked, queries.length * 4)
  // The documents really fold: some have notifications, and identical calls stay apart.
  assert.ok(documents.some((d) => d.length > 2))
}

test(
  'sqlite: get_actions paging and total equal a brute-force fold of the whole chain',
  { timeout: 120_000 },
  async (t) => checkPagingAndTotal(tempSqliteStore(t)),
)

test(
  'postgres: get_actions paging and total equal a brute-force fold of the whole chain',
  { timeout: 120_000, skip: PG_SKIP_REASON },
  async (t) => {
    const store = await openPostgresStore(await withPostgresDatabase(t))
    onCleanup(t, () => store.close())
    await checkPagingAndTotal(store)
  },
)

test('counting from postings is used only where it is exact', { timeout: 10_000 }, () => {
  const plan = (query: string) => planActionQuery(Object.fromEntries(new URLSearchParams(query))).expr
  assert.equal(countableByPostings(plan('account=alice')), true)
  assert.equal(countableByPostings(plan('account=alice&filter=tok:*')), true)
  assert.equal(countableByPostings(plan('act.name=transfer')), true)
  assert.equal(countableByPostings(plan('receipts.receiver=alice,bob')), false, 'two receivers may both be notified')
  assert.equal(countableByPostings(plan('receipts.receiver=!alice')), false, 'every other receiver matches')
  assert.equal(countableByPostings(plan('account=alice&receipts.receiver=bob')), false)

  // The notifications-only count of an account: the authorizer branch cannot match (a notification's authorizers are
  // its original's), so only the receiver's list is walked, filtered by its own flags.
  const account = plan('account=alice')
  assert.deepEqual(countingQuery({ and: [account, { flag: 'notif', value: true }, { not: onOriginal(account) }] }), {
    and: [
      { term: 'receiver:alice' },
      { flag: 'notif', value: true },
      { not: { or: [{ term: 'account:alice' }, { term: 'auth:alice' }] } },
    ],
  })
  const filtered = plan('account=alice&filter=tok:issue')
  assert.deepEqual(countingQuery({ and: [filtered, { flag: 'notif', value: true }, { not: onOriginal(filtered) }] }), {
    and: [
      { term: 'receiver:alice' },
      { term: 'account:tok' },
      { term: 'action:issue' },
      { flag: 'notif', value: true },
      { not: { or: [{ term: 'account:alice' }, { term: 'auth:alice' }] } },
    ],
  })
})
