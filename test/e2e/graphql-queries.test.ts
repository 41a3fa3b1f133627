import { test } from 'node:test'
import assert from 'node:assert/strict'
import WebSocket from 'ws'
import { APIClient } from '@wharfkit/antelope'
import type { DfuseClient } from '@dfuse/client'
import { dfuseClient, issueToken, startPlatform } from '../_helpers/platform.ts'
import { pollUntil, pushActions } from '../_helpers/push.ts'

;(globalThis as { WebSocket?: unknown }).WebSocket = WebSocket

type Json = Record<string, unknown>
type Action = Json & { seq: string; executionIndex: number; receiver: string; json: Json; dbOps: DbOp[] }
type DbOp = Record<'operation' | 'oldPayer' | 'newPayer' | 'oldData' | 'newData', string> &
  Record<'key' | 'newJSON', Json>
type Trace = Json & { id: string; matchingActions: Action[]; executedActions: Action[]; receipt: Json }
type Result = { undo: boolean; cursor: string; isIrreversible: boolean; block: Json & { num: number }; trace: Trace }
type Page = { cursor: string | null; results: Result[] | null }

const QUERY = 'receiver:eosio.token action:transfer data.from:alice'
const ACTION = `seq executionIndex receipt { receiver digest globalSequence codeSequence abiSequence }
  receiver account name authorization { actor permission } data json hexData
  ramOps { operation } dtrxOps { operation } tableOps { operation }
  dbOps(code: "eosio.token", table: "accounts") { operation oldPayer newPayer key { code table scope key }
    oldData newData oldJSON { object error } newJSON { object error } }
  console contextFree elapsed exceptJSON isNotify isMatchingQuery
  createdActions(sort: CREATION) { seq receiver } creatorAction { seq } closestUnnotifiedAncestorAction { seq }`
const RESULT = `cursor isIrreversible irreversibleBlockNum
  block { id num timestamp producer confirmed previous transactionMRoot actionMRoot scheduleVersion
    newProducers { version producers { producerName blockSigningKey } } }
  trace { id block { num } status receipt { status cpuUsageMicroSeconds netUsageWords } elapsed netUsage scheduled
    executedActions { seq receiver executionIndex isNotify isMatchingQuery } matchingActions { ${ACTION} }
    topLevelActions { seq name } exceptJSON }`
const search = (direction: 'Forward' | 'Backward') => `query ($q: String!, $cursor: String, $limit: Int64,
  $low: Int64, $high: Int64, $irr: Boolean) {
  page: searchTransactions${direction}(query: $q, cursor: $cursor, limit: $limit, lowBlockNum: $low,
    highBlockNum: $high, irreversibleOnly: $irr) {
      cursor results { ${direction === 'Forward' ? 'undo' : ''} ${RESULT} } } }`

/** One query through @dfuse/client (HTTP POST /graphql); fails the test on any GraphQL error. */
async function gql<T>(client: DfuseClient, document: string, variables: Json = {}): Promise<T> {
  const response = await client.graphql<T>(document, { variables })
  assert.deepEqual(response.errors ?? [], [], `no errors for ${document.slice(0, 80)}`)
  return response.data
}

/** Every page of a search, with its size. */
async function everyPage(client: DfuseClient, direction: 'Forward' | 'Backward', variables: Json) {
  const results: Result[] = []
  const cursors: (string | null)[] = []
  let cursor = variables.cursor as string | undefined
  for (let pages = 0; pages < 50; pages++) {
    const { page } = await gql<{ page: Page }>(client, search(direction), { ...variables, q: QUERY, cursor })
    results.push(...(page.results ?? []))
    cursors.push(page.cursor)
    if (!page.cursor) return { results, cursors }
    cursor = page.cursor
  }
  throw new Error('paging did not end')
}

type RestTrace = {
  receipt: { receiver: string; global_sequence: string; act_digest: string }
  act: { name: string; data: Json }
  inline_traces?: RestTrace[]
}

test('GraphQL search queries via @dfuse/client, against REST: both directions, paging, bounds, errors', async (t) => {
  const p = await startPlatform(t, ['--lib-depth', '4'])
  const chain = new APIClient({ url: p.chainApi })
  const client = dfuseClient(t, p)
  const token = await issueToken(p, p.apiKey)
  const rest = async (path: string) => {
    const response = await fetch(`${p.api}${path}`, { headers: { authorization: `Bearer ${token}` } })
    assert.equal(response.status, 200, path)
    return (await response.json()) as Json
  }

  const pushed: { id: string; blockNum: number; memo: string; quantity: string }[] = []
  for (let i = 0; i < 6; i++) {
    const memo = `gql ${i}`
    const quantity = `0.00${10 + i} EOS`
    const data = { from: 'alice', to: i % 2 ? 'bob' : 'carol', quantity, memo }
    const sent = await pushActions(chain, [{ account: 'eosio.token', name: 'transfer', actor: 'alice', data }])
    pushed.push({ ...sent, memo, quantity })
    // One transfer a block: rows are reported per block, and two transactions running eosio.token in one block leave
    // its row changes unattributed (no dbOps).
    await pollUntil(
      () => chain.v1.chain.get_info(),
      (info) => info.head_block_num.toNumber() > sent.blockNum,
    )
  }
  const lastBlock = Math.max(...pushed.map((x) => x.blockNum))
  await pollUntil(
    () => rest('/healthz'),
    (h) => Number(h.last_irreversible_block_num) >= lastBlock,
    30_000,
  )
  const ids = pushed.map((x) => x.id)
  const restSearch = async (sort: string) =>
    (
      (await rest(`/v0/search/transactions?q=${encodeURIComponent(QUERY)}&limit=100&sort=${sort}`)).transactions as {
        lifecycle: { id: string }
        action_idx: number[]
      }[]
    ).map((r) => ({ id: r.lifecycle.id, actionIdx: r.action_idx }))

  await t.test('forward: the REST search transactions in order, each value matching its REST lifecycle', async () => {
    const { page } = await gql<{ page: Page }>(client, search('Forward'), { q: QUERY })
    const results = page.results ?? []
    assert.equal(page.cursor, null, 'the forward cursor is null at the end')
    const fromRest = await restSearch('asc')
    assert.deepEqual(
      results.map((r) => r.trace.id),
      fromRest.map((r) => r.id),
    )
    assert.deepEqual(
      results.map((r) => r.trace.id),
      ids,
    )
    for (const [i, result] of results.entries()) {
      const lifecycle = await rest(`/v0/transactions/${result.trace.id}`)
      const execution = lifecycle.execution_trace as Json & { action_traces: RestTrace[]; receipt: Json }
      const header = lifecycle.execution_block_header as Json
      const flat: RestTrace[] = []
      const walk = (traces: RestTrace[]) => traces.forEach((x) => (flat.push(x), walk(x.inline_traces ?? [])))
      walk(execution.action_traces)
      flat.sort((a, b) => Number(BigInt(a.receipt.global_sequence) - BigInt(b.receipt.global_sequence)))

      assert.equal(result.undo, false)
      assert.equal(result.isIrreversible, true)
      assert.match(result.cursor, /^[\w-]+$/)
      assert.deepEqual(
        [result.block.num, result.block.id, result.block.producer, result.block.previous],
        [execution.block_num, execution.producer_block_id, header.producer, header.previous],
      )
      assert.deepEqual(
        [result.block.transactionMRoot, result.block.actionMRoot, result.block.confirmed],
        [header.transaction_mroot, header.action_mroot, header.confirmed],
      )
      assert.equal(Date.parse(String(result.block.timestamp)), Date.parse(`${String(execution.block_time)}Z`))
      assert.match(String(result.block.timestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/)
      assert.equal((result.trace.block as { num: number }).num, pushed[i].blockNum)
      assert.equal(result.trace.status, 'EXECUTED')
      assert.deepEqual(result.trace.receipt, {
        status: 'EXECUTED',
        cpuUsageMicroSeconds: (execution.receipt as Json).cpu_usage_us,
        netUsageWords: (execution.receipt as Json).net_usage_words,
      })
      // Int64 and Uint64 are quoted decimal strings.
      assert.equal(result.trace.netUsage, String(execution.net_usage))
      assert.equal(typeof result.trace.elapsed, 'string')
      assert.deepEqual(
        result.trace.executedActions.map((a) => [a.seq, a.receiver, a.executionIndex]),
        flat.map((x, index) => [x.receipt.global_sequence, x.receipt.receiver, index]),
      )
      assert.deepEqual(
        result.trace.executedActions.map((a) => a.isMatchingQuery),
        [true, false, false],
      )

      const [action] = result.trace.matchingActions
      assert.equal(result.trace.matchingActions.length, 1)
      const transfer = flat.find((x) => x.receipt.receiver === 'eosio.token')!
      const data = { from: 'alice', to: i % 2 ? 'bob' : 'carol', quantity: pushed[i].quantity, memo: pushed[i].memo }
      assert.deepEqual(action.json, data)
      assert.deepEqual(action.data, data)
      assert.deepEqual(transfer.act.data, data)
      assert.equal(action.seq, transfer.receipt.global_sequence)
      assert.deepEqual(action.receipt, {
        receiver: 'eosio.token',
        digest: transfer.receipt.act_digest,
        globalSequence: transfer.receipt.global_sequence,
        codeSequence: String((transfer.receipt as Json).code_sequence),
        abiSequence: String((transfer.receipt as Json).abi_sequence),
      })
      assert.deepEqual(
        [action.receiver, action.account, action.name, action.isNotify, action.isMatchingQuery, action.executionIndex],
        ['eosio.token', 'eosio.token', 'transfer', false, true, 0],
      )
      assert.deepEqual(action.authorization, [{ actor: 'alice', permission: 'active' }])
      assert.deepEqual([action.ramOps, action.dtrxOps, action.tableOps], [[], [], []])
      assert.deepEqual(
        (action.createdActions as { receiver: string }[]).map((a) => a.receiver),
        ['alice', data.to],
      )
      assert.equal(action.creatorAction, null)
      assert.deepEqual(
        (result.trace.topLevelActions as Json[]).map((a) => a.name),
        ['transfer'],
      )
      // dbOps: the balances the transfer changed, as the REST lifecycle's dbops of this action.
      const restOps = (lifecycle.dbops as (Json & { old: Json; new: Json })[]).filter((o) => o.action_idx === 0)
      assert.deepEqual(
        action.dbOps.map((o) => [o.operation, o.key.scope, o.key.key, o.oldPayer, o.newPayer, o.oldData, o.newData]),
        restOps.map((o) => [o.op, o.scope, o.key, o.old.payer, o.new.payer, o.old.hex, o.new.hex]),
      )
      assert.deepEqual(
        action.dbOps.map((o) => o.key.scope),
        ['alice', data.to],
      )
      for (const op of action.dbOps)
        assert.match(String(((op.newJSON as Json).object as Json).balance), /^\d+\.\d{4} EOS$/)
      // The REST search's action_idx are the matching actions' execution indexes.
      assert.deepEqual(
        result.trace.matchingActions.map((a) => a.executionIndex),
        (await restSearch('asc'))[i].actionIdx,
      )
    }
  })

  await t.test('backward: the same transactions newest first, cursor "" at the end', async () => {
    const { page } = await gql<{ page: Page }>(client, search('Backward'), { q: QUERY })
    assert.equal(page.cursor, '')
    assert.deepEqual(
      page.results!.map((r) => r.trace.id),
      [...ids].reverse(),
    )
    assert.deepEqual(
      page.results!.map((r) => r.trace.id),
      (await restSearch('desc')).map((r) => r.id),
    )
  })

  await t.test('paging with cursors returns each match exactly once, in both directions', async () => {
    for (const limit of [1, 2, 4]) {
      const forward = await everyPage(client, 'Forward', { limit })
      assert.deepEqual(
        forward.results.map((r) => r.trace.id),
        ids,
        `forward by ${limit}`,
      )
      assert.ok(forward.cursors.length <= Math.ceil(ids.length / limit) + 1, `${forward.cursors.length} pages`)
      assert.equal(forward.cursors.at(-1), null)
      const backward = await everyPage(client, 'Backward', { limit })
      assert.deepEqual(
        backward.results.map((r) => r.trace.id),
        [...ids].reverse(),
        `backward by ${limit}`,
      )
      assert.equal(backward.cursors.at(-1), '')
    }
    // A result's cursor resumes right after it: from the third result on, the last three.
    const { page } = await gql<{ page: Page }>(client, search('Forward'), { q: QUERY, limit: 3 })
    const rest3 = await everyPage(client, 'Forward', { cursor: page.results![2].cursor })
    assert.deepEqual(
      rest3.results.map((r) => r.trace.id),
      ids.slice(3),
    )
  })

  await t.test('lowBlockNum and highBlockNum bound the search, both included; irreversibleOnly', async () => {
    const [low, high] = [pushed[1].blockNum, pushed[4].blockNum]
    const inRange = pushed.filter((x) => x.blockNum >= low && x.blockNum <= high).map((x) => x.id)
    for (const direction of ['Forward', 'Backward'] as const) {
      const { results } = await everyPage(client, direction, { low, high, limit: 2 })
      assert.deepEqual(
        results.map((r) => r.trace.id),
        direction === 'Forward' ? inRange : [...inRange].reverse(),
      )
    }
    const { page } = await gql<{ page: Page }>(client, search('Forward'), { q: QUERY, irr: true })
    assert.deepEqual(
      page.results!.map((r) => r.trace.id),
      ids,
    )
    assert.ok(page.results!.every((r) => r.isIrreversible))
  })

  await t.test(
    'errors: limit 1001, an invalid search query, no token or a garbage one, each with its code',
    async () => {
      const refused = async (variables: Json, code: string) => {
        const response = await client.graphql(search('Forward'), { variables: { q: QUERY, ...variables } })
        assert.equal(response.errors?.[0]?.extensions?.code, code, JSON.stringify(response))
        assert.match(String(response.errors?.[0]?.extensions?.trace_id), /^[0-9a-f]{32}$/)
        return response.errors![0]
      }
      const tooMany = await refused({ limit: 1001 }, 'InvalidArgument')
      assert.deepEqual(Object.keys((tooMany.extensions!.details as { errors: Json }).errors), ['limit'])
      const max = await client.graphql(search('Forward'), { variables: { q: QUERY, limit: 1000 } })
      assert.deepEqual(max.errors ?? [], [], 'limit 1000 is the maximum')
      for (const q of ['receiver:(', 'nosuch:x', '(receiver:bob', 'receiver:']) await refused({ q }, 'InvalidArgument')
      for (const authorization of [undefined, 'Bearer garbage', `Bearer ${token.slice(0, -4)}AAAA`]) {
        const response = await fetch(`${p.api}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
          body: JSON.stringify({ query: search('Forward'), variables: { q: QUERY } }),
        })
        assert.equal(response.status, 200)
        const body = (await response.json()) as { data: unknown; errors: { extensions: Json }[] }
        assert.equal(body.data, null)
        assert.equal(body.errors[0].extensions.code, 'Unauthenticated', JSON.stringify(body))
      }
    },
  )
})
