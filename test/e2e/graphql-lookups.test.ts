import { test } from 'node:test'
import assert from 'node:assert/strict'
import WebSocket from 'ws'
import { APIClient } from '@wharfkit/antelope'
import type { DfuseClient } from '@dfuse/client'
import { dfuseClient, issueToken, startPlatform } from '../_helpers/platform.ts'
import { pollUntil, pushActions } from '../_helpers/push.ts'

;(globalThis as { WebSocket?: unknown }).WebSocket = WebSocket

type Json = Record<string, unknown>
type Edge = { cursor: string; node: Json & { trxID: string; seq: string; blockNum: string; receiver: string } }
type Connection = { edges: Edge[]; pageInfo: { startCursor: string; endCursor: string } & Record<string, boolean> }
type RestTrace = { receipt: { receiver: string; global_sequence: string }; act: Json; inline_traces?: RestTrace[] }

const HISTORY = `query ($account: String!, $contract: String, $limit: Int64, $cursor: String) {
  history: getAccountHistoryActions(account: $account, contract: $contract, limit: $limit, cursor: $cursor) {
    edges { cursor node { blockNum blockID blockTime trxID seq executionIndex receipt { receiver globalSequence }
      receiver account name authorization { actor permission } data json hexData console contextFree isNotify } }
    pageInfo { startCursor endCursor hasNextPage hasPreviousPage } } }`
const BLOCK = `query ($num: Uint32, $id: String, $first: Uint32, $after: String) {
  block(num: $num, id: $id) { id num dposLIBNum irreversible executedTransactionCount
    header { id num timestamp producer previous transactionMRoot actionMRoot confirmed scheduleVersion }
    transactionTraces(first: $first, after: $after) { edges { cursor node { id status matchingActions { seq }
      executedActions { receiver json } } } pageInfo { startCursor endCursor hasNextPage hasPreviousPage } } } }`
const BY_TIME = `query ($time: Time!, $comparator: COMPARATOR) {
  found: blockIDByTime(time: $time, comparator: $comparator) { time num id } }`

async function gql<T>(client: DfuseClient, document: string, variables: Json = {}): Promise<T> {
  const response = await client.graphql<T>(document, { variables })
  assert.deepEqual(response.errors ?? [], [], `no errors for ${document.slice(0, 80)} ${JSON.stringify(variables)}`)
  return response.data
}

/** The code of the first error of a query through the client, which must fail. */
async function errorCode(client: DfuseClient, document: string, variables: Json): Promise<string> {
  const response = await client.graphql(document, { variables })
  assert.ok(response.errors?.length, `an error for ${JSON.stringify(variables)}: ${JSON.stringify(response)}`)
  return String(response.errors![0].extensions?.code)
}

test('GraphQL lookups via @dfuse/client, against REST: account history, block, block ids by time', async (t) => {
  const p = await startPlatform(t, ['--lib-depth', '4'])
  const chain = new APIClient({ url: p.chainApi })
  const client = dfuseClient(t, p)
  const token = await issueToken(p, p.apiKey)
  const rest = async (path: string) => {
    const response = await fetch(`${p.api}${path}`, { headers: { authorization: `Bearer ${token}` } })
    assert.equal(response.status, 200, path)
    return (await response.json()) as Json
  }
  const transfer = (from: string, to: string, memo: string) => ({
    account: 'eosio.token',
    name: 'transfer',
    actor: from,
    data: { from, to, quantity: '0.0001 EOS', memo },
  })
  // bob receives three transfers and sends two: five notifications of eosio.token, newest last.
  const pushed: { id: string; blockNum: number; data: ReturnType<typeof transfer>['data'] }[] = []
  for (const [from, to] of [
    ['alice', 'bob'],
    ['bob', 'carol'],
    ['alice', 'bob'],
    ['carol', 'bob'],
    ['bob', 'alice'],
  ]) {
    const memo = `history ${pushed.length}`
    const sent = await pushActions(chain, [transfer(from, to, memo)])
    pushed.push({ ...sent, data: transfer(from, to, memo).data })
    await pollUntil(
      () => chain.v1.chain.get_info(),
      (info) => info.head_block_num.toNumber() > sent.blockNum,
    )
  }
  await pollUntil(
    () => rest('/healthz'),
    (h) => Number(h.last_irreversible_block_num) >= pushed.at(-1)!.blockNum,
    30_000,
  )

  await t.test(
    'getAccountHistoryActions: newest first with notifications, each as its REST action trace; paging once each',
    async () => {
      const { history } = await gql<{ history: Connection }>(client, HISTORY, { account: 'bob', limit: 100 })
      const mine = history.edges.slice(0, pushed.length)
      assert.deepEqual(
        mine.map((e) => e.node.trxID),
        pushed.map((x) => x.id).reverse(),
      )
      assert.deepEqual(history.pageInfo.hasPreviousPage, false)
      for (const [i, edge] of mine.entries()) {
        const sent = pushed[pushed.length - 1 - i]
        const lifecycle = await rest(`/v0/transactions/${sent.id}`)
        const execution = lifecycle.execution_trace as Json & { action_traces: RestTrace[] }
        const flat: RestTrace[] = []
        const walk = (traces: RestTrace[]) => traces.forEach((x) => (flat.push(x), walk(x.inline_traces ?? [])))
        walk(execution.action_traces)
        flat.sort((a, b) => Number(BigInt(a.receipt.global_sequence) - BigInt(b.receipt.global_sequence)))
        const index = flat.findIndex((x) => x.receipt.receiver === 'bob')
        const n = edge.node
        assert.deepEqual(
          [n.seq, n.executionIndex, n.blockNum, n.blockID, n.receiver, n.account, n.name, n.isNotify],
          [
            flat[index].receipt.global_sequence,
            index,
            String(sent.blockNum),
            execution.producer_block_id,
            'bob',
            'eosio.token',
            'transfer',
            true,
          ],
        )
        assert.deepEqual(n.receipt, { receiver: 'bob', globalSequence: n.seq })
        assert.deepEqual([n.json, n.data], [sent.data, sent.data])
        assert.equal(n.hexData, (flat[index].act as Json).hex_data)
        assert.equal(Date.parse(String(n.blockTime)), Date.parse(`${String(execution.block_time)}Z`))
        assert.deepEqual(n.authorization, [{ actor: sent.data.from, permission: 'active' }])
      }
      // By two, with cursors: the same edges, each once.
      const paged: Edge[] = []
      let cursor: string | undefined
      for (let pages = 0; ; pages++) {
        assert.ok(pages < 100, 'paging ends')
        const { history: page } = await gql<{ history: Connection }>(client, HISTORY, {
          account: 'bob',
          limit: 2,
          cursor,
        })
        paged.push(...page.edges)
        assert.equal(page.pageInfo.hasPreviousPage, cursor !== undefined)
        assert.equal(page.pageInfo.startCursor, page.edges[0]?.cursor ?? '')
        if (!page.pageInfo.hasNextPage) break
        cursor = page.pageInfo.endCursor
      }
      assert.deepEqual(
        paged.map((e) => e.node.seq),
        history.edges.map((e) => e.node.seq),
      )
      // contract narrows to eosio.token's actions: every edge above is one; eosio's newaccount of bob is not.
      const { history: token } = await gql<{ history: Connection }>(client, HISTORY, {
        account: 'bob',
        contract: 'eosio.token',
      })
      assert.ok(token.edges.every((e) => e.node.account === 'eosio.token'))
      assert.deepEqual(
        token.edges.slice(0, pushed.length).map((e) => e.node.seq),
        mine.map((e) => e.node.seq),
      )
      for (const bad of [
        { account: 'BOB' },
        { account: '' },
        { account: 'bob', limit: 0 },
        { account: 'bob', limit: 1001 },
      ])
        assert.equal(await errorCode(client, HISTORY, bad), 'InvalidArgument', JSON.stringify(bad))
      assert.equal(await errorCode(client, HISTORY, { account: 'bob', cursor: 'garbage' }), 'InvalidArgument')
    },
  )

  await t.test('block(num | id): the REST lifecycle block, its transaction traces paged', async () => {
    const sent = pushed[2]
    const lifecycle = await rest(`/v0/transactions/${sent.id}`)
    const execution = lifecycle.execution_trace as Json
    const header = lifecycle.execution_block_header as Json
    type Block = Json & { header: Json; transactionTraces: { edges: { cursor: string; node: Json }[]; pageInfo: Json } }
    const { block } = await gql<{ block: Block }>(client, BLOCK, { num: sent.blockNum })
    const edges = block.transactionTraces.edges
    assert.deepEqual(
      [block.id, block.num, block.irreversible, block.executedTransactionCount],
      [execution.producer_block_id, sent.blockNum, true, edges.length],
    )
    assert.ok((block.dposLIBNum as number) >= sent.blockNum)
    assert.deepEqual(
      [block.header.id, block.header.num, block.header.producer, block.header.previous, block.header.actionMRoot],
      [block.id, block.num, header.producer, header.previous, header.action_mroot],
    )
    // The transfer, after the block's onblock.
    assert.deepEqual(
      edges.map((e) => (e.node.executedActions as Json[])[0].receiver),
      ['eosio', 'eosio.token'],
    )
    assert.equal(edges[1].node.id, sent.id)
    assert.deepEqual((edges[1].node.executedActions as Json[])[0].json, sent.data)
    const { block: byId } = await gql<{ block: Block }>(client, BLOCK, { id: block.id })
    // dposLIBNum is the store's LIB when answered: it moves between the two queries.
    assert.deepEqual({ ...byId, dposLIBNum: 0 }, { ...block, dposLIBNum: 0 })
    const { block: upper } = await gql<{ block: Block }>(client, BLOCK, { id: String(block.id).toUpperCase() })
    assert.equal(upper.num, block.num)
    // Paging one edge at a time: each once, in order.
    const paged: string[] = []
    let after: string | undefined
    for (let pages = 0; pages < 10; pages++) {
      const { block: page } = await gql<{ block: Block }>(client, BLOCK, { num: sent.blockNum, first: 1, after })
      paged.push(...page.transactionTraces.edges.map((e) => String(e.node.id)))
      assert.equal(page.transactionTraces.pageInfo.hasPreviousPage, after !== undefined)
      if (!page.transactionTraces.pageInfo.hasNextPage) break
      after = String(page.transactionTraces.pageInfo.endCursor)
    }
    assert.deepEqual(
      paged,
      edges.map((e) => e.node.id),
    )
    const { block: none } = await gql<{ block: Block }>(client, BLOCK, { num: sent.blockNum, first: 0 })
    assert.deepEqual(none.transactionTraces.edges, [])
    assert.equal((await gql<{ block: null }>(client, BLOCK, { num: 99_999_999 })).block, null)
    for (const bad of [{}, { num: 3, id: block.id }, { id: 'zz' }, { num: sent.blockNum, after: 'garbage' }])
      assert.equal(await errorCode(client, BLOCK, bad), 'InvalidArgument', JSON.stringify(bad))
  })

  await t.test('blockIDByTime: each comparator as REST /v0/block_id/by_time; RFC3339 or Unix seconds', async () => {
    const { block } = await gql<{ block: { header: { timestamp: string } } }>(client, BLOCK, {
      num: pushed[1].blockNum,
    })
    const time = block.header.timestamp
    for (const comparator of ['GTE', 'GT', 'LTE', 'LT', 'EQ']) {
      const { found } = await gql<{ found: { time: string; num: number; id: string } }>(client, BY_TIME, {
        time,
        comparator,
      })
      const query = `time=${encodeURIComponent(time)}&comparator=${comparator.toLowerCase()}`
      const expected = (await rest(`/v0/block_id/by_time?${query}`)).block as Json
      assert.deepEqual([found.num, found.id], [expected.num, expected.id], comparator)
      assert.equal(Date.parse(found.time), Date.parse(String(expected.time)))
      const shift = { GTE: 0, GT: 1, LTE: 0, LT: -1, EQ: 0 }[comparator]!
      assert.equal(found.num, pushed[1].blockNum + shift, comparator)
    }
    const { found } = await gql<{ found: { num: number } }>(client, BY_TIME, { time: Date.parse(time) / 1000 })
    assert.equal(found.num, pushed[1].blockNum)
    // The default comparator is LTE.
    assert.equal((await gql<{ found: { num: number } }>(client, BY_TIME, { time })).found.num, pushed[1].blockNum)
    assert.equal(await errorCode(client, BY_TIME, { time: '2999-01-01T00:00:00Z', comparator: 'GT' }), 'NotFound')
    for (const bad of ['yesterday', '2020-13-45T00:00:00Z', '', '1e3'])
      assert.equal(await errorCode(client, BY_TIME, { time: bad }), 'InvalidArgument', bad)
  })

  await t.test('blockIDAtAccountCreation: the block of the newaccount REST finds; unknown names', async () => {
    const query = `{ alice: blockIDAtAccountCreation(account: "alice") { time num id }
      token: blockIDAtAccountCreation(account: "eosio.token") { num id } }`
    const found = await gql<{ alice: Json; token: Json }>(client, query)
    const search = async (name: string) =>
      (
        (await rest(`/v0/search/transactions?q=${encodeURIComponent(`action:newaccount data.name:${name}`)}`))
          .transactions as { lifecycle: { execution_trace: Json } }[]
      )[0].lifecycle.execution_trace
    for (const [name, value] of [
      ['alice', found.alice],
      ['eosio.token', found.token],
    ] as const) {
      const trace = await search(name)
      assert.deepEqual([value.num, value.id], [trace.block_num, trace.producer_block_id], name)
    }
    assert.equal(Date.parse(String(found.alice.time)), Date.parse(`${String((await search('alice')).block_time)}Z`))
    const byName = (account: string) =>
      errorCode(client, 'query ($a: String!) { blockIDAtAccountCreation(account: $a) { num } }', { a: account })
    assert.equal(await byName('nobody'), 'NotFound')
    for (const bad of ['ALICE', '', 'toolongaccountname']) assert.equal(await byName(bad), 'InvalidArgument', bad)
  })
})
