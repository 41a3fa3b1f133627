import { test } from 'node:test'
import assert from 'node:assert/strict'
import WebSocket from 'ws'
import { createClient, type Client } from 'graphql-ws'
import { APIClient } from '@wharfkit/antelope'
import { onCleanup, within } from '../_helpers/cleanup.ts'
import { issueToken, startPlatform, type Platform } from '../_helpers/platform.ts'
import { pollUntil, pushActions } from '../_helpers/push.ts'

type Result = {
  undo: boolean
  cursor: string
  isIrreversible: boolean
  irreversibleBlockNum: number
  block: { num: number }
  trace: { id: string; matchingActions: { json: { memo: string } }[] } | null
}
const FORWARD = `subscription ($q: String!, $low: Int64, $high: Int64, $irr: Boolean, $cursor: String) {
  searchTransactionsForward(query: $q, lowBlockNum: $low, highBlockNum: $high, irreversibleOnly: $irr,
    cursor: $cursor) {
    undo cursor isIrreversible irreversibleBlockNum block { num } trace { id matchingActions { json } } } }`

const transfer = (to: string, memo: string) => ({
  account: 'eosio.token',
  name: 'transfer',
  actor: 'alice',
  data: { from: 'alice', to, quantity: '0.0001 EOS', memo },
})

/** A `graphql-ws` client (graphql-transport-ws subprotocol) with the token in connection_init; disposed after. */
function modernClient(t: Parameters<typeof onCleanup>[0], p: Platform, token: string): Client {
  const client = createClient({
    url: `${p.api.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: token },
    retryAttempts: 0,
    lazy: true,
  })
  onCleanup(t, () => client.dispose())
  return client
}

/** Runs a subscription until its end (complete or error) or `stop()`, with the LIB when it ended. */
function run(client: Client, variables: Record<string, unknown>, lib: () => Promise<number>) {
  const results: Result[] = []
  let stop = () => {}
  const done = new Promise<{ error?: unknown; libAtEnd: number }>((resolve) => {
    stop = client.subscribe<{ searchTransactionsForward: Result }>(
      { query: FORWARD, variables },
      {
        next: (value) => {
          assert.deepEqual(value.errors ?? [], [])
          results.push(value.data!.searchTransactionsForward)
        },
        error: (error) =>
          void lib().then(
            (libAtEnd) => resolve({ error, libAtEnd }),
            () => resolve({ error, libAtEnd: -1 }),
          ),
        complete: () =>
          void lib().then(
            (libAtEnd) => resolve({ libAtEnd }),
            () => resolve({ libAtEnd: -1 }),
          ),
      },
    )
  })
  return { results, done, stop: () => stop() }
}

/** Blocks between head and LIB on the platform of this file (100 ms blocks). */
const LIB_DEPTH = 30

test('GraphQL subscriptions via graphql-ws (graphql-transport-ws): live, highBlockNum, irreversible', async (t) => {
  // LIB 30 blocks (3 s) behind head: a block stays reversible long enough to look at it before it is final.
  const p = await startPlatform(t, ['--lib-depth', String(LIB_DEPTH)])
  const chain = new APIClient({ url: p.chainApi })
  const token = await issueToken(p, p.apiKey)
  const client = modernClient(t, p, token)
  const health = async () =>
    (await (await fetch(`${p.api}/healthz`)).json()) as { head_block_num: number; last_irreversible_block_num: number }
  const lib = async () => (await health()).last_irreversible_block_num

  const before = await pushActions(chain, [transfer('bob', 'modern history')])
  const beforeCarol = await pushActions(chain, [transfer('carol', 'irr 0')])
  await pollUntil(lib, (n) => n >= beforeCarol.blockNum, 30_000)

  await t.test(
    'history then live, each with a cursor; complete once highBlockNum is irreversible, nothing above it',
    async () => {
      const high = (await chain.v1.chain.get_info()).head_block_num.toNumber() + 40
      const { results, done } = run(client, { q: 'receiver:eosio.token data.to:bob', low: before.blockNum, high }, lib)
      await pollUntil(
        async () => results.length,
        (n) => n >= 1,
        20_000,
      )
      const live = [
        await pushActions(chain, [transfer('bob', 'modern live 1')]),
        await pushActions(chain, [transfer('bob', 'modern live 2')]),
      ]
      assert.ok(live[1].blockNum < high, `the live transfers land below ${high} (in ${live[1].blockNum})`)
      // Pushed after: in a block above the range, never sent.
      await pollUntil(
        () => chain.v1.chain.get_info(),
        (info) => info.head_block_num.toNumber() > high,
        30_000,
      )
      const outside = await pushActions(chain, [transfer('bob', 'modern above high')])
      const end = await within(done, 30_000, 'the completion')
      assert.equal(end.error, undefined, `completed without an error: ${JSON.stringify(end.error)}`)
      assert.ok(end.libAtEnd >= high, `completed once ${high} was irreversible (LIB ${end.libAtEnd})`)
      assert.ok(outside.blockNum > high)
      assert.deepEqual(
        results.map((r) => r.trace?.matchingActions[0].json.memo),
        ['modern history', 'modern live 1', 'modern live 2'],
      )
      assert.deepEqual(
        results.map((r) => r.trace?.id),
        [before.id, ...live.map((x) => x.id)],
      )
      assert.ok(results.every((r) => !r.undo && /^[\w-]+$/.test(r.cursor) && r.block.num <= high))
      assert.equal(results[0].isIrreversible, true)
    },
  )

  await t.test('irreversibleOnly: history and live results all irreversible, each sent once its block is', async () => {
    const head = (await health()).head_block_num
    const { results, stop } = run(
      client,
      { q: 'receiver:eosio.token data.to:carol', low: before.blockNum, irr: true },
      lib,
    )
    const live = [
      await pushActions(chain, [transfer('carol', 'irr 1')]),
      await pushActions(chain, [transfer('carol', 'irr 2')]),
    ]
    assert.ok(live[0].blockNum > head, 'live transfers')
    // Nothing of a block comes before it is irreversible: while LIB is below the first live transfer's block, only
    // the history result has arrived. LIB lags head by LIB_DEPTH blocks (3 s), so the first look is always before
    // LIB reaches that block (asserted, not assumed); a server sending live results at once fails it.
    const deadline = Date.now() + 30_000
    for (let look = 0; ; look++) {
      const seen = results.length
      const now = await lib()
      if (look === 0) assert.ok(now < live[0].blockNum, `LIB ${now} still below block ${live[0].blockNum}`)
      else if (now >= live[0].blockNum) break
      assert.ok(seen <= 1, `a live result before LIB ${now} reached block ${live[0].blockNum}`)
      assert.ok(Date.now() < deadline, `LIB reached block ${live[0].blockNum} within 30 s`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    await pollUntil(
      async () => results.length,
      (n) => n >= 3,
      30_000,
    )
    stop()
    assert.deepEqual(
      results.map((r) => r.trace?.id),
      [beforeCarol, ...live].map((x) => x.id),
    )
    for (const result of results) {
      assert.equal(result.isIrreversible, true)
      assert.ok(result.irreversibleBlockNum >= result.block.num, JSON.stringify(result))
    }
  })
})
