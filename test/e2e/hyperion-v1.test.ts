import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { APIClient, APIError } from '@wharfkit/antelope'
import { JsonRpc as EosjsRpc } from 'eosjs'
import { send } from '../_helpers/http.ts'
import { issueToken, startPlatform } from '../_helpers/platform.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import { flattenTraces, seedHyperion, type DfuseActionTrace } from '../_helpers/hyperion.ts'

/**
 * The v1 compatibility routes against `antler dev` (docs/HYPERION.md): /v1/history/get_actions with nodeos's
 * pos/offset numbering of an account's traces, /v1/history/get_transaction with the real transaction, and
 * /v1/trace_api/get_block, each decoded by @wharfkit/antelope's typed client or eosjs and checked against the dfuse
 * routes' answers for the same facts.
 */

interface V1Action {
  global_action_seq: number
  account_action_seq: number
  block_num: number
  block_time: string
  action_trace: {
    receiver: string
    trx_id: string
    receipt: { global_sequence: number; receiver: string; act_digest: string }
    act: { account: string; name: string; data: unknown; hex_data: string }
  }
}

async function v1Against(t: TestContext, store: 'sqlite' | 'postgres') {
  const p = await startPlatform(t, [
    ...(store === 'postgres' ? ['--store', await withPostgresDatabase(t)] : []),
    '--rate-limits',
    JSON.stringify({ publicCallsPerIp: { limit: 100_000, windowMs: 60_000 } }),
  ])
  const seed = await seedHyperion(p.chainApi, p.api)
  const X = seed.account
  const token = await issueToken(p, p.apiKey)
  const rest = async <T>(path: string): Promise<T> => {
    const answer = await send(`${p.api}${path}`, { headers: { authorization: `Bearer ${token}` } })
    assert.equal(answer.status, 200, `${path}: ${answer.text.slice(0, 300)}`)
    return answer.body as T
  }
  const post = (path: string, body: unknown) =>
    send(`${p.api}${path}`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    })

  // The facts: every trace of the account's transactions whose receiver is X or that X authorized, by global sequence.
  type Lifecycle = { execution_trace: { action_traces: DfuseActionTrace[] } }
  const q = encodeURIComponent(`receiver:${X} OR auth:${X}`)
  const found = await rest<{ transactions: { lifecycle: Lifecycle }[] | null }>(
    `/v0/search/transactions?q=${q}&limit=100&with_reversible=true`,
  )
  const expected = (found.transactions ?? [])
    .flatMap((tr) => flattenTraces(tr.lifecycle.execution_trace.action_traces))
    .filter((tr) => tr.receiver === X || tr.act.authorization.some((a) => a.actor === X))
    .map((tr) => Number(tr.receipt.global_sequence))
    .sort((a, b) => a - b)
  assert.ok(expected.length >= 10, `the seed gives the account many traces (${expected.length})`)
  const n = expected.length

  await t.test(
    "wharfkit's typed get_actions: pos -1 / offset -20 is the whole (short) history, numbered from 0",
    async () => {
      const history = new APIClient({ url: p.api }).v1.history
      const all = await history.get_actions(X, -1, -20)
      assert.ok(Number(all.head_block_num) >= seed.trx.linkauth.blockNum)
      assert.ok(Number(all.last_irreversible_block) <= Number(all.head_block_num))
      assert.deepEqual(
        all.actions.map((a) => Number(a.global_action_seq)),
        expected.slice(Math.max(0, n - 20)),
      )
      assert.deepEqual(
        all.actions.map((a) => Number(a.account_action_seq)),
        expected.map((_, i) => i).slice(Math.max(0, n - 20)),
      )
    },
  )

  await t.test("nodeos's windows: from a position forward, the last few, a single entry, past the end", async () => {
    const window = async (pos: number | undefined, offset: number | undefined) => {
      const answer = await post('/v1/history/get_actions', { account_name: X, pos, offset })
      assert.equal(answer.status, 200, answer.text.slice(0, 300))
      const body = answer.body as { actions: V1Action[]; head_block_num: number; query_time_ms?: number }
      assert.equal(body.query_time_ms, undefined, "nodeos's shape: no Hyperion envelope")
      return body.actions.map((a) => [a.account_action_seq, a.global_action_seq])
    }
    const entries = (from: number, to: number) =>
      expected.map((seq, i) => [i, seq]).filter(([i]) => i >= from && i <= to)
    assert.deepEqual(await window(2, 3), entries(2, 5), 'pos 2, offset 3: entries 2 to 5')
    assert.deepEqual(await window(-1, -3), entries(n - 3, n), 'pos -1, offset -3: the last three')
    assert.deepEqual(await window(0, 0), entries(0, 0), 'pos 0, offset 0: the first')
    assert.deepEqual(await window(4, -2), entries(2, 4), 'pos 4, offset -2: entries 2 to 4')
    assert.deepEqual(await window(n + 5, 10), [], 'past the end: none')
    assert.deepEqual(await window(undefined, undefined), entries(n - 20, n), 'defaults: pos -1, offset -20')
    const withHex = await post('/v1/history/get_actions', { account_name: X, pos: 0, offset: 0, hex_data: true })
    assert.equal((withHex.body as { actions: V1Action[] }).actions[0].action_trace.act.hex_data.length > 0, true)
    const none = await post('/v1/history/get_actions', { account_name: 'nobody.here' })
    assert.deepEqual((none.body as { actions: unknown[] }).actions, [])
  })

  await t.test("eosjs's history_get_actions: each trace is the dfuse trace (receipt, act, block)", async () => {
    const rpc = new EosjsRpc(p.api, { fetch })
    const listed = (await rpc.history_get_actions(X, -1, -100)) as unknown as { actions: V1Action[] }
    assert.equal(listed.actions.length, n)
    const traces = new Map(
      (found.transactions ?? [])
        .flatMap((tr) => flattenTraces(tr.lifecycle.execution_trace.action_traces))
        .map((tr) => [Number(tr.receipt.global_sequence), tr]),
    )
    for (const a of listed.actions) {
      const fact = traces.get(a.global_action_seq)!
      assert.equal(a.action_trace.receiver, fact.receiver)
      assert.equal(a.action_trace.trx_id, fact.trx_id)
      assert.equal(a.block_num, fact.block_num)
      assert.equal(a.block_time, fact.block_time)
      assert.equal(a.action_trace.receipt.act_digest, fact.receipt.act_digest)
      assert.deepEqual(a.action_trace.act.data, fact.act.data)
      assert.equal(a.action_trace.act.name, fact.act.name)
    }
  })

  await t.test(
    'get_transaction: the real transaction (packed_trx hashes to the id), traces as dfuse, not found as nodeos',
    async () => {
      const history = new APIClient({ url: p.api }).v1.history
      const twice = seed.trx.twice.id
      const answer = await post('/v1/history/get_transaction', { id: twice })
      assert.equal(answer.status, 200, answer.text.slice(0, 300))
      const body = answer.body as {
        trx: {
          receipt: { status: string; cpu_usage_us: number; trx: [number, { signatures: string[]; packed_trx: string }] }
          trx: { actions: { name: string; data: { memo: string } }[]; signatures: string[] }
        }
        traces: { receipt: { global_sequence: number }; receiver: string }[]
      }
      const [kind, packed] = body.trx.receipt.trx
      assert.equal(kind, 1)
      assert.equal(createHash('sha256').update(Buffer.from(packed.packed_trx, 'hex')).digest('hex'), twice)
      assert.deepEqual(packed.signatures, seed.trx.twice.signatures)
      assert.deepEqual(body.trx.trx.signatures, seed.trx.twice.signatures)
      assert.deepEqual(
        body.trx.trx.actions.map((a) => a.data.memo),
        [seed.twiceMemo, seed.twiceMemo],
      )
      const lifecycle = await rest<Lifecycle & { execution_trace: { receipt: { cpu_usage_us: number } } }>(
        `/v0/transactions/${twice}`,
      )
      assert.equal(body.trx.receipt.cpu_usage_us, lifecycle.execution_trace.receipt.cpu_usage_us)
      assert.equal(body.trx.receipt.status, 'executed')
      assert.deepEqual(
        body.traces.map((tr) => [tr.receipt.global_sequence, tr.receiver]),
        flattenTraces(lifecycle.execution_trace.action_traces).map((tr) => [
          Number(tr.receipt.global_sequence),
          tr.receiver,
        ]),
      )
      const decoded = await history.get_transaction(twice)
      assert.equal(String(decoded.id), twice)
      assert.equal(Number(decoded.block_num), seed.trx.twice.blockNum)
      const eosjs = (await new EosjsRpc(p.api, { fetch }).history_get_transaction(twice)) as { id: string }
      assert.equal(eosjs.id, twice)

      const unknown = 'ab'.repeat(32)
      const missing = await post('/v1/history/get_transaction', { id: unknown })
      assert.equal(missing.status, 404)
      const error = missing.body as {
        code: number
        error: { code: number; name: string; details: { message: string }[] }
      }
      assert.equal(error.code, 404)
      assert.equal(error.error.code, 3040011)
      assert.equal(error.error.name, 'tx_not_found')
      assert.match(error.error.details[0].message, new RegExp(`Transaction ${unknown} not found`))
      await assert.rejects(
        history.get_transaction(unknown),
        (e: unknown) =>
          e instanceof APIError && e.response.status === 404 && e.code === 3040011 && e.name === 'tx_not_found',
      )
      await assert.rejects(new EosjsRpc(p.api, { fetch }).history_get_transaction(unknown))
    },
  )

  await t.test(
    'trace_api get_block: the block of a transaction by number and id, the head, and a missing block',
    async () => {
      const block = await post('/v1/trace_api/get_block', { block_num: seed.trx.twice.blockNum })
      assert.equal(block.status, 200, block.text.slice(0, 300))
      const b = block.body as {
        id: string
        number: number
        status: string
        timestamp: string
        transactions: {
          id: string
          status: string
          cpu_usage_us: number
          signatures: string[]
          actions: { receiver: string; action: string; data: { memo: string } }[]
        }[]
      }
      assert.equal(b.number, seed.trx.twice.blockNum)
      const lifecycle = await rest<
        Lifecycle & {
          execution_trace: { producer_block_id: string; block_time: string; receipt: { cpu_usage_us: number } }
        }
      >(`/v0/transactions/${seed.trx.twice.id}`)
      assert.equal(b.id, lifecycle.execution_trace.producer_block_id)
      assert.equal(b.timestamp, lifecycle.execution_trace.block_time)
      assert.match(b.status, /^(irreversible|pending)$/)
      const twice = b.transactions.find((tr) => tr.id === seed.trx.twice.id)
      assert.ok(twice, 'the transaction is in its block')
      assert.deepEqual(
        twice.actions.map((a) => a.receiver),
        flattenTraces(lifecycle.execution_trace.action_traces).map((tr) => tr.receiver),
      )
      assert.equal(twice.actions[0].data.memo, seed.twiceMemo)
      assert.equal(twice.cpu_usage_us, lifecycle.execution_trace.receipt.cpu_usage_us)
      assert.equal(twice.status, 'executed')
      assert.deepEqual(twice.signatures, seed.trx.twice.signatures)
      const byId = await post('/v1/trace_api/get_block', { block_id: b.id })
      assert.equal((byId.body as { number: number }).number, b.number)
      const head = await post('/v1/trace_api/get_block', { block_num: -1 })
      assert.ok((head.body as { number: number }).number >= b.number)
      const missing = await post('/v1/trace_api/get_block', { block_num: 99_999_999 })
      assert.equal(missing.status, 404)
      assert.deepEqual(missing.body, { statusCode: 404, error: 'Not Found', message: 'block not found!' })
    },
  )

  await t.test("bad bodies: 400 in Hyperion's shape, never a 5xx", async () => {
    const bad: [string, unknown][] = [
      ['/v1/history/get_actions', { account_name: X, pos: -2 }],
      ['/v1/history/get_actions', { account_name: X, pos: 2 ** 40 }],
      ['/v1/history/get_actions', { account_name: X, offset: 'many' }],
      ['/v1/history/get_actions', { account_name: 'NotAName' }],
      ['/v1/history/get_actions', { account_name: X, filter: 'eosio.token:transfer' }],
      ['/v1/history/get_actions', {}],
      ['/v1/history/get_actions', [X]],
      ['/v1/history/get_transaction', { id: 'zz' }],
      ['/v1/history/get_transaction', { id: seed.trx.twice.id, block_num_hint: -1 }],
      ['/v1/trace_api/get_block', {}],
      ['/v1/trace_api/get_block', { block_id: 'nope' }],
      ['/v1/trace_api/get_block', { block_num: 1e300 }],
    ]
    for (const [path, body] of bad) {
      const answer = await post(path, body)
      assert.equal(answer.status, 400, `${path} ${JSON.stringify(body)}: ${answer.text.slice(0, 300)}`)
      const error = answer.body as { statusCode: number; error: string; message: string }
      assert.equal(error.statusCode, 400)
      assert.equal(error.error, 'Bad Request')
      assert.equal(typeof error.message, 'string')
    }
  })
}

test('/v1/history and /v1/trace_api on SQLite: nodeos semantics and shapes, decoded by wharfkit and eosjs, equal to the dfuse facts', async (t) =>
  v1Against(t, 'sqlite'))

test(
  '/v1/history and /v1/trace_api on PostgreSQL: nodeos semantics and shapes, decoded by wharfkit and eosjs, equal to the dfuse facts',
  { skip: PG_SKIP_REASON },
  async (t) => v1Against(t, 'postgres'),
)
