import { test } from 'node:test'
import assert from 'node:assert/strict'
import WebSocket from 'ws'
import { ABI, APIClient, Action, PrivateKey, SignedTransaction, Transaction } from '@wharfkit/antelope'
import type { DfuseClient, SearchTransactionRow } from '@dfuse/client'
import { DEV_PRIVATE_KEY } from '../../src/devchain/index.ts'
import { expectError, send } from '../_helpers/http.ts'
import { dfuseClient, issueToken, type Platform, startPlatform } from '../_helpers/platform.ts'
import { pollUntil } from '../_helpers/push.ts'

;(globalThis as { WebSocket?: unknown }).WebSocket = WebSocket

const devKey = PrivateKey.from(DEV_PRIVATE_KEY)

/** Signs a transfer with the development key, pushes it to the devchain and returns its id and block. */
async function transfer(
  chain: APIClient,
  from: string,
  to: string,
  quantity: string,
  memo: string,
): Promise<{ id: string; block: number }> {
  const info = await chain.v1.chain.get_info()
  const abi = ABI.from((await chain.v1.chain.get_abi('eosio.token')).abi!)
  const transaction = Transaction.from({
    ...info.getTransactionHeader(120),
    actions: [
      Action.from(
        {
          account: 'eosio.token',
          name: 'transfer',
          authorization: [{ actor: from, permission: 'active' }],
          data: { from, to, quantity, memo },
        },
        abi,
      ),
    ],
  })
  const signed = SignedTransaction.from({
    ...transaction,
    signatures: [devKey.signDigest(transaction.signingDigest(info.chain_id))],
  })
  const pushed = await chain.v1.chain.push_transaction(signed)
  return { id: String(pushed.transaction_id), block: Number(pushed.processed.block_num) }
}

async function health(p: Platform): Promise<{ head: number; lib: number }> {
  const body = (await (await fetch(`${p.api}/healthz`)).json()) as {
    head_block_num: number | null
    last_irreversible_block_num: number | null
  }
  return { head: body.head_block_num ?? 0, lib: body.last_irreversible_block_num ?? 0 }
}

/** Waits until the API's store holds `blockNum` (`irreversible`: as LIB). */
async function indexed(p: Platform, blockNum: number, irreversible = false): Promise<void> {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    const h = await health(p)
    if ((irreversible ? h.lib : h.head) >= blockNum) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`block ${blockNum} not indexed within 30 s`)
}

/** The receivers of a lifecycle's actions in execution order (the nested traces flattened, by global sequence). */
function receiversInOrder(lifecycle: SearchTransactionRow['lifecycle']): string[] {
  type Trace = { receipt: { receiver: string; global_sequence: string | number }; inline_traces?: Trace[] }
  const flat: Trace[] = []
  const walk = (traces: Trace[]) => traces.forEach((tr) => (flat.push(tr), walk(tr.inline_traces ?? [])))
  walk(
    ((lifecycle.execution_trace as unknown as { action_traces: Trace[] } | undefined)?.action_traces ?? []) as Trace[],
  )
  return flat
    .sort((a, b) => Number(BigInt(a.receipt.global_sequence) - BigInt(b.receipt.global_sequence)))
    .map((tr) => tr.receipt.receiver)
}

/** Every row of a search through @dfuse/client, page by page with cursors. */
async function everyPage(
  client: DfuseClient,
  q: string,
  options: Parameters<DfuseClient['searchTransactions']>[1],
): Promise<{ rows: SearchTransactionRow[]; pages: number }> {
  const rows: SearchTransactionRow[] = []
  let cursor: string | undefined
  for (let pages = 1; pages < 200; pages++) {
    const page = await client.searchTransactions(q, { ...options, cursor })
    rows.push(...(page.transactions ?? []))
    if (!page.cursor) return { rows, pages }
    cursor = page.cursor
  }
  throw new Error('paging did not end')
}

test('search end to end: @dfuse/client searchTransactions forward and backward with cursors, raw HTTP for parameters, errors and forks', async (t) => {
  const p = await startPlatform(t, ['--lib-depth', '30'])
  const chain = new APIClient({ url: p.chainApi })
  const token = await issueToken(p, p.apiKey)
  const client = dfuseClient(t, p)
  const get = (query: string, headers: Record<string, string> = { authorization: `Bearer ${token}` }) =>
    send(`${p.api}/v0/search/transactions?${query}`, { headers })

  // Seven transfers alice → bob (in their own blocks mostly), two bob → carol.
  const pushed: { id: string; block: number }[] = []
  for (let i = 0; i < 7; i++) pushed.push(await transfer(chain, 'alice', 'bob', `0.000${i + 1} EOS`, `e2e ${i}`))
  const toCarol = [
    await transfer(chain, 'bob', 'carol', '0.0100 EOS', 'c1'),
    await transfer(chain, 'bob', 'carol', '0.0200 EOS', 'c2'),
  ]
  const last = Math.max(...pushed.map((x) => x.block), ...toCarol.map((x) => x.block))
  await indexed(p, last, true)
  const ascending = [...pushed].sort((a, b) => a.block - b.block)

  await t.test(
    'forward with cursors: every transfer once, by block, with its lifecycle and the index of each matching action',
    async () => {
      const { rows, pages } = await everyPage(client, 'data.from:alice data.to:bob', { limit: 2 })
      assert.equal(pages, 4)
      assert.deepEqual(
        rows.map((r) => r.lifecycle.id),
        ascending.map((x) => x.id),
      )
      for (const row of rows) {
        assert.equal(row.lifecycle.transaction_status, 'executed')
        assert.equal(row.lifecycle.execution_irreversible, true)
        // The transfer, alice's and bob's notifications.
        assert.deepEqual(row.action_idx.map((i) => receiversInOrder(row.lifecycle)[i]).sort(), [
          'alice',
          'bob',
          'eosio.token',
        ])
      }
      const bobOnly = await client.searchTransactions('receiver:bob data.from:alice', { limit: 1 })
      assert.deepEqual(
        bobOnly.transactions!.map((r) => r.action_idx.map((i) => receiversInOrder(r.lifecycle)[i])),
        [['bob']],
      )
    },
  )

  await t.test('backward with cursors: the same transfers, newest first; a cursor flips direction', async () => {
    const { rows } = await everyPage(client, 'data.from:alice data.to:bob', { limit: 3, sort: 'desc' })
    assert.deepEqual(
      rows.map((r) => r.lifecycle.id),
      [...ascending].reverse().map((x) => x.id),
    )
    const first = await client.searchTransactions('data.from:alice data.to:bob', { limit: 3 })
    const before = await client.searchTransactions('data.from:alice data.to:bob', {
      limit: 10,
      sort: 'desc',
      cursor: first.cursor,
    })
    assert.deepEqual(
      before.transactions!.map((r) => r.lifecycle.id),
      ascending
        .slice(0, 2)
        .reverse()
        .map((x) => x.id),
    )
    assert.equal(before.cursor, '')
  })

  await t.test(
    'start_block and block_count through the client; no match is transactions null and cursor ""',
    async () => {
      const from = ascending[2].block
      // The range is [start, start + block_count] and block_count is at least 1 (transactions 2 and 4 may share a
      // block).
      const blockCount = Math.max(1, ascending[4].block - from)
      // Only irreversible blocks are searched by default: a start block above LIB is refused (a loaded machine lags).
      await pollUntil(
        () => health(p),
        (h) => h.lib >= from + blockCount,
        60_000,
      )
      const page = await client.searchTransactions('data.from:alice', { startBlock: from, blockCount, limit: 100 })
      assert.deepEqual(
        page.transactions!.map((r) => r.lifecycle.id),
        ascending.filter((x) => x.block >= from && x.block <= from + blockCount).map((x) => x.id),
      )
      const none = await get('q=receiver:nobody')
      assert.equal(none.status, 200)
      assert.deepEqual(none.body, { cursor: '', transactions: null })
      assert.deepEqual(
        (await client.searchTransactions('data.from:bob data.to:carol', { limit: 100 })).transactions!.map(
          (r) => r.lifecycle.id,
        ),
        toCarol.map((x) => x.id),
      )
    },
  )

  await t.test('raw HTTP: every bad parameter answers the standard error object with its code', async () => {
    expectError(await get('q=receiver:bob', {}), 401, 'auth_invalid_token_error')
    expectError(await get(''), 400, 'request_validation_error', { errors: { q: ['The q field is required.'] } })
    // A bad query is dfuse's request_validation_error, naming q, with where and why.
    for (const query of ['q=nosuch:x', 'q=status:soft_fail', 'q=(receiver:bob']) {
      const body = expectError(await get(query), 400, 'request_validation_error')
      assert.ok('q' in (body.details?.errors as object), `${query}: ${JSON.stringify(body.details)}`)
      assert.equal(typeof body.details?.position, 'number', `${query}: ${JSON.stringify(body.details)}`)
      assert.equal(typeof body.details?.reason, 'string', `${query}: ${JSON.stringify(body.details)}`)
      assert.match(body.message, /^invalid query: /)
    }
    for (const [query, param] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=1e1', 'limit'],
      ['block_count=0', 'block_count'],
      ['block_count=-1', 'block_count'],
      ['start_block=abc', 'start_block'],
      ['start_block=99999999', 'start_block'],
      ['sort=up', 'sort'],
      ['with_reversible=1', 'with_reversible'],
      ['with_reversible=TRUE', 'with_reversible'],
    ]) {
      const body = expectError(await get(`q=receiver:bob&${query}`), 400, 'request_validation_error')
      assert.ok(param in (body.details?.errors as object), `${query}: ${JSON.stringify(body.details)}`)
    }
    const cursor = (await client.searchTransactions('data.from:alice', { limit: 1 })).cursor
    const tampered = cursor.slice(0, 10) + (cursor[10] === 'A' ? 'B' : 'A') + cursor.slice(11)
    for (const bad of ['garbage', tampered]) {
      const body = expectError(await get(`q=receiver:bob&cursor=${bad}`), 400, 'request_validation_error')
      assert.ok('cursor' in (body.details?.errors as object), `${bad}: ${JSON.stringify(body.details)}`)
    }
    // Accepted: sort in any case, format (ignored), an empty cursor, a negative start_block.
    for (const query of ['sort=DESC', 'format=json', 'cursor=', 'start_block=-5', 'with_reversible=false'])
      assert.equal((await get(`q=data.from:alice&${query}`)).status, 200, query)
  })

  await t.test(
    'with_reversible: fresh transfers are found above LIB only when asked; a forked-out cursor warns and the search continues on the new chain',
    async () => {
      const fresh = [
        await transfer(chain, 'carol', 'alice', '0.0003 EOS', 'fresh 1'),
        await transfer(chain, 'carol', 'alice', '0.0004 EOS', 'fresh 2'),
      ]
      await indexed(p, fresh[1].block)
      const first = await client.searchTransactions('data.from:carol', { withReversible: true, limit: 1 })
      assert.equal(first.transactions![0].lifecycle.id, fresh[0].id)
      assert.equal(first.transactions![0].lifecycle.execution_irreversible, false)
      assert.notEqual(first.cursor, '', 'the second transfer follows')
      const without = await client.searchTransactions('data.from:carol', { limit: 10 })
      if (fresh[0].block > (await health(p)).lib)
        assert.deepEqual(without.transactions ?? [], [], 'nothing above LIB by default')
      // Fork out both blocks: their transactions land again in new blocks. The depth counts from the chain's head (the
      // store's may lag it under load: a depth from it would leave fresh[0]'s block in place).
      const head = (await chain.v1.chain.get_info()).head_block_num.toNumber()
      const forked = await send(`${p.chainApi}/v1/devchain/fork`, {
        method: 'POST',
        body: JSON.stringify({ depth: head - fresh[0].block + 1 }),
      })
      assert.equal(forked.status, 200, forked.text)
      const deadline = Date.now() + 30_000
      let page = await client.searchTransactions('data.from:carol', {
        withReversible: true,
        limit: 10,
        cursor: first.cursor,
      })
      while (!page.forked_head_warning && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        page = await client.searchTransactions('data.from:carol', {
          withReversible: true,
          limit: 10,
          cursor: first.cursor,
        })
      }
      assert.equal(page.forked_head_warning, true, JSON.stringify(page).slice(0, 300))
      // From the fork point on, the new chain: both transfers, in their new blocks.
      await indexed(p, (await health(p)).head)
      page = await client.searchTransactions('data.from:carol', {
        withReversible: true,
        limit: 10,
        cursor: first.cursor,
      })
      assert.equal(page.forked_head_warning, true)
      assert.deepEqual(
        page.transactions!.map((r) => r.lifecycle.id),
        fresh.map((x) => x.id),
      )
      const blocks = page.transactions!.map(
        (r) => (r.lifecycle.execution_trace as unknown as { block_num: number }).block_num,
      )
      assert.ok(
        blocks.every((b) => b >= fresh[0].block),
        `new blocks ${blocks}`,
      )
    },
  )
})
