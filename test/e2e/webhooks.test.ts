import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { APIClient } from '@wharfkit/antelope'
import { spawnAntler, type RunningCli } from '../_helpers/cli.ts'
import { graphqlQuery, type GraphqlResponse } from '../_helpers/graphql.ts'
import { antlerKeys, devArgs, issueToken, startPlatform } from '../_helpers/platform.ts'
import { tempDir } from '../_helpers/devchain.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import { pollUntil, pushActions, waitIndexed } from '../_helpers/push.ts'
import { mulberry32 } from '../_helpers/random.ts'
import {
  blindCopy,
  matchKey,
  matchSeqs,
  startWebhookReceiver,
  type WebhookMatch,
} from '../_helpers/webhook-receiver.ts'

/*
 * Webhooks end to end against `antler dev`, with a receiver on loopback that verifies every delivery with the
 * `standardwebhooks` library and applies the acknowledged messages blindly: under random forks a reversible
 * subscription ends with exactly the final chain's matches (undos newest first, before the new branch), an
 * irreversible one too with no undo at all, one whose endpoint fails for a while then recovers gets everything in
 * order; and `kill -9` of antler in the middle of a delivery loses nothing and repeats at most that message.
 */

const SEED = Number(process.env.ANTLER_SEED ?? Date.now() % 1_000_000)
const QUERY = 'receiver:eosio.token action:transfer'
const USERS = ['alice', 'bob', 'carol']
const PAGE = `query ($query: String!, $cursor: String) {
  searchTransactionsForward(query: $query, lowBlockNum: 1, limit: 1000, cursor: $cursor, irreversibleOnly: false) {
    cursor results { block { num id } trace { id matchingActions { seq } } }
  }
}`

/** The final chain's matches (reversible blocks included), by paged GraphQL queries. */
async function canonicalMatches(api: string, token: string): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  let cursor: string | null = null
  for (let page = 0; page < 100; page++) {
    type Page = { searchTransactionsForward: { cursor: string | null; results: WebhookMatch[] } }
    const response: GraphqlResponse<Page> = await graphqlQuery(api, token, PAGE, { query: QUERY, cursor })
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    for (const m of response.data!.searchTransactionsForward.results) out.set(matchKey(m), matchSeqs(m))
    cursor = response.data!.searchTransactionsForward.cursor
    if (!cursor) return out
  }
  throw new Error('the paged query did not end within 100 pages')
}

async function createWebhook(api: string, token: string, body: Record<string, unknown>) {
  const response = await fetch(`${api}/v1/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const created = (await response.json()) as { id: string; secret: string }
  assert.equal(response.status, 201, JSON.stringify(created))
  return created
}

async function transfer(chain: APIClient, random: () => number, memo: string): Promise<void> {
  const from = USERS[Math.floor(random() * 3)]
  const to = USERS.filter((u) => u !== from)[Math.floor(random() * 2)]
  const data = { from, to, quantity: '0.0001 EOS', memo }
  await pushActions(chain, [{ account: 'eosio.token', name: 'transfer', actor: from, data }])
}

async function health(api: string): Promise<{ head: number; lib: number }> {
  const body = (await (await fetch(`${api}/healthz`)).json()) as {
    head_block_num: number | null
    last_irreversible_block_num: number | null
  }
  return { head: body.head_block_num ?? 0, lib: body.last_irreversible_block_num ?? 0 }
}

/** Waits until the store's LIB passes `blockNum` (every block up to it final). */
async function waitIrreversible(api: string, blockNum: number): Promise<void> {
  await pollUntil(
    () => health(api),
    (h) => h.lib >= blockNum,
    60_000,
  )
}

for (const adapter of ['sqlite', 'postgres'] as const)
  test(
    `webhooks on ${adapter} under random forks (seed ${SEED}): blind receivers end with the final chain's matches`,
    { skip: adapter === 'postgres' && PG_SKIP_REASON },
    async (t) => {
      const store = adapter === 'postgres' ? ['--store', await withPostgresDatabase(t)] : []
      await forksScenario(t, [...store, '--webhook-retries', '150ms'])
    },
  )

async function forksScenario(t: TestContext, args: string[]): Promise<void> {
  t.diagnostic(`seed ${SEED} (rerun with ANTLER_SEED=${SEED})`)
  const random = mulberry32(SEED)
  const p = await startPlatform(t, args)
  const token = await issueToken(p, p.apiKey)
  // /flaky answers 500 to everything during its first 2 s, then 200.
  let flakyFrom = 0
  const receiver = await startWebhookReceiver(t, {
    '/flaky': () => {
      flakyFrom ||= Date.now()
      return { status: Date.now() - flakyFrom < 2_000 ? 500 : 200 }
    },
  })
  const subscriptions = {
    reversible: await createWebhook(p.api, token, { url: receiver.url('/rev'), query: QUERY, start_block: 1 }),
    irreversible: await createWebhook(p.api, token, {
      url: receiver.url('/irr'),
      query: QUERY,
      start_block: 1,
      finality: 'irreversible',
    }),
    flaky: await createWebhook(p.api, token, { url: receiver.url('/flaky'), query: QUERY, start_block: 1 }),
  }

  const chain = new APIClient({ url: p.chainApi })
  let forks = 0
  for (let i = 0; i < 30; i++) {
    await transfer(chain, random, `w${i}`)
    if (random() < 0.4) {
      await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 300)))
      const response = await fetch(`${p.chainApi}/v1/devchain/fork`, {
        method: 'POST',
        body: JSON.stringify({ depth: 1 + Math.floor(random() * 5), drop: [] }),
        signal: AbortSignal.timeout(10_000),
      })
      if (response.status === 200) forks++
    }
  }
  const { head } = await health(p.api)
  await waitIndexed(p.api, head + 3, 60_000)
  await waitIrreversible(p.api, head + 3)
  const want = await canonicalMatches(p.api, token)
  assert.ok(want.size >= 25, `the chain holds ${want.size} transfers`)
  t.diagnostic(`forks: ${forks}; matches: ${want.size}`)
  assert.ok(forks >= 3, `the workload forked (${forks})`)

  for (const [name, path] of [
    ['reversible', '/rev'],
    ['irreversible', '/irr'],
    ['flaky', '/flaky'],
  ] as const) {
    const settled = await pollUntil(
      async () => blindCopy(receiver.acknowledged(path)),
      (copy) => JSON.stringify([...copy.held].sort()) === JSON.stringify([...want].sort()),
      30_000,
    ).catch(() => blindCopy(receiver.acknowledged(path)))
    t.diagnostic(`${name}: ${settled.messages} messages, ${settled.undos} undos, ${settled.duplicates} duplicates`)
    assert.deepEqual(settled.problems, [], name)
    assert.deepEqual(new Map([...settled.held].sort()), new Map([...want].sort()), name)
    assert.equal(settled.duplicates, 0, `${name}: a message acknowledged twice`)
    assert.deepEqual(receiver.unverified(path, subscriptions[name].secret), [], `${name}: signatures`)
    if (name === 'irreversible') assert.equal(settled.undos, 0, 'an irreversible subscription never undoes')
  }
  const flakyFailures = receiver.deliveries.filter((d) => d.path === '/flaky' && d.status === 500)
  assert.ok(flakyFailures.length >= 2, `the flaky endpoint failed ${flakyFailures.length} times`)
  // Each failed message was tried again under the same id before anything after it.
  const flaky = receiver.deliveries.filter((d) => d.path === '/flaky').map((d) => String(d.headers['webhook-id']))
  for (let i = 1; i < flaky.length; i++)
    if (flaky[i] !== flaky[i - 1])
      assert.ok(!flaky.slice(i + 1).includes(flaky[i - 1]), `message ${flaky[i - 1]} sent again after a later one`)
}

test('kill -9 of antler dev mid-delivery: after the restart nothing is lost, at most that message repeats', async (t) => {
  const dataDir = tempDir(t, 'antler-webhook-kill-')
  const args = [...devArgs(dataDir), '--webhook-retries', '150ms']
  let cli: RunningCli = await spawnAntler(t, args)
  const token = await issueToken({ api: cli.ready.api }, cli.ready.apiKey)
  // Slow acknowledgements: a delivery is in flight most of the time.
  const receiver = await startWebhookReceiver(t, { '/slow': () => ({ status: 200, delayMs: 150 }) })
  const created = await createWebhook(cli.ready.api, token, {
    url: receiver.url('/slow'),
    query: QUERY,
    start_block: 1,
  })
  const random = mulberry32(SEED)
  let chain = new APIClient({ url: cli.ready.chainApi })
  for (let i = 0; i < 15; i++) await transfer(chain, random, `k${i}`)
  await pollUntil(async () => receiver.inFlight() > 0 && receiver.acknowledged('/slow').length >= 3, Boolean, 20_000)
  cli.child.kill('SIGKILL')
  await new Promise((resolve) => cli.child.once('exit', resolve))
  const beforeRestart = receiver.deliveries.length

  cli = await spawnAntler(t, args)
  chain = new APIClient({ url: cli.ready.chainApi })
  for (let i = 0; i < 5; i++) await transfer(chain, random, `after${i}`)
  const { head } = await health(cli.ready.api)
  await waitIndexed(cli.ready.api, head + 2, 60_000)
  const want = await canonicalMatches(cli.ready.api, await issueToken({ api: cli.ready.api }, cli.ready.apiKey))
  // The receiver applies what it received (acknowledged or cut off by the kill), each id once.
  const received = () => receiver.deliveries.filter((d) => d.path === '/slow')
  const copy = await pollUntil(
    async () => blindCopy(received()),
    (c) => JSON.stringify([...c.held].sort()) === JSON.stringify([...want].sort()),
    30_000,
  ).catch(() => blindCopy(received()))
  t.diagnostic(`${beforeRestart} deliveries before the kill; ${copy.messages} messages, ${copy.duplicates} repeated`)
  assert.deepEqual(copy.problems, [])
  assert.deepEqual(new Map([...copy.held].sort()), new Map([...want].sort()))
  assert.ok(copy.duplicates <= 1, `${copy.duplicates} messages delivered twice`)
  assert.deepEqual(receiver.unverified('/slow', created.secret), [])
})

test('a match forked out while its endpoint fails is never delivered, nor its undo; its new block is', async (t) => {
  const p = await startPlatform(t, ['--webhook-retries', '100ms'])
  const token = await issueToken(p, p.apiKey)
  let open = false
  const receiver = await startWebhookReceiver(t, { '/held': () => ({ status: open ? 200 : 503 }) })
  // Only the transfer below matches (its amount), wherever a fork moves it.
  const created = await createWebhook(p.api, token, {
    url: receiver.url('/held'),
    query: 'receiver:eosio.token data.quantity:"0.0042 EOS"',
    start_block: 1,
  })
  const chain = new APIClient({ url: p.chainApi })
  const pushed = await pushActions(chain, [
    {
      account: 'eosio.token',
      name: 'transfer',
      actor: 'alice',
      data: { from: 'alice', to: 'bob', quantity: '0.0042 EOS', memo: 'forked' },
    },
  ])
  await pollUntil(
    async () => receiver.deliveries.length,
    (n) => n >= 2,
    20_000,
  )
  const firstId = String(receiver.deliveries[0].headers['webhook-id'])
  // Deep enough to replace the transfer's block, whatever the chain produced meanwhile.
  const head = (await chain.v1.chain.get_info()).head_block_num.toNumber()
  const response = await fetch(`${p.chainApi}/v1/devchain/fork`, {
    method: 'POST',
    body: JSON.stringify({ depth: head - pushed.blockNum + 4, drop: [] }),
    signal: AbortSignal.timeout(10_000),
  })
  assert.equal(response.status, 200, await response.text())
  await waitIndexed(p.api, head + 3, 20_000)
  open = true
  const copy = await pollUntil(
    async () => blindCopy(receiver.acknowledged('/held')),
    (c) => c.held.size === 1,
    20_000,
  )
  const bodies = receiver.acknowledged('/held').map((d) => JSON.parse(d.body) as { data: WebhookMatch })
  assert.deepEqual(copy.problems, [])
  assert.equal(copy.undos, 0, 'no undo of a match never delivered')
  assert.deepEqual(
    bodies.map((b) => b.data.trace.id),
    [pushed.id],
    'the transfer, once, in its new block',
  )
  const forkedOut = (JSON.parse(receiver.deliveries[0].body) as { data: WebhookMatch }).data.block.id
  assert.notEqual(bodies[0].data.block.id, forkedOut, 'delivered in the block of the new branch')
  assert.ok(!receiver.acknowledged('/held').some((d) => d.headers['webhook-id'] === firstId), 'the forked-out apply')

  // A resend: the delivered message again, same id and body; the forked-out one cannot be.
  const resend = async (messageId: string) =>
    fetch(`${p.api}/v1/webhooks/${created.id}/messages/${messageId}/resend`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    })
  const deliveredId = String(receiver.acknowledged('/held')[0].headers['webhook-id'])
  const again = await resend(deliveredId)
  const answer = (await again.json()) as { message_id: string; ok: boolean }
  assert.equal(again.status, 200, JSON.stringify(answer))
  assert.deepEqual([answer.message_id, answer.ok], [deliveredId, true])
  const copies = receiver.acknowledged('/held').filter((d) => d.headers['webhook-id'] === deliveredId)
  assert.equal(copies.length, 2)
  // The same content, but for what is irreversible by the time of the resend (LIB may have moved meanwhile).
  const content = (body: string) => {
    const { data, ...rest } = JSON.parse(body) as { data: Record<string, unknown> }
    const { irreversibleBlockNum: _lib, isIrreversible: _final, ...match } = data
    return { ...rest, data: match }
  }
  assert.deepEqual(content(copies[1].body), content(copies[0].body))
  const gone = await resend(firstId)
  assert.equal(gone.status, 404)
  assert.equal(((await gone.json()) as { code: string }).code, 'webhook_message_not_found_error')
})

test("a replay during a retry wait starts at once; a revoked key's subscription stops delivering", async (t) => {
  // An hour between tries: only a restart of the worker can deliver again within the test.
  const p = await startPlatform(t, ['--webhook-retries', '1h'])
  const key = JSON.parse(antlerKeys(p, ['create', '--type', 'server', '--name', 'hooks', '--json'])) as {
    id: string
    key: string
  }
  const token = await issueToken(p, key.key)
  const receiver = await startWebhookReceiver(t, { '/once': (_d, index) => ({ status: index === 0 ? 500 : 200 }) })
  const created = await createWebhook(p.api, token, { url: receiver.url('/once'), query: QUERY, start_block: 1 })
  await pollUntil(
    async () => receiver.deliveries.length,
    (n) => n >= 1,
    20_000,
  )
  const replay = await fetch(`${p.api}/v1/webhooks/${created.id}/replay`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ from_block: 1 }),
  })
  assert.equal(replay.status, 200, await replay.text())
  await pollUntil(
    async () => receiver.acknowledged('/once').length,
    (n) => n >= 1,
    10_000,
  )
  assert.equal(receiver.deliveries[1].headers['webhook-id'], receiver.deliveries[0].headers['webhook-id'])

  antlerKeys(p, ['revoke', key.id])
  const before = receiver.deliveries.filter((d) => d.path === '/once').length
  // A witness created after the revocation, of a key still valid, with the same query: the dispatcher scan that
  // starts it runs after the revocation, and once it has received a later match than the revoked subscription
  // would have, that subscription had its chance to deliver it.
  const witness = await createWebhook(p.api, await issueToken(p, p.apiKey), {
    url: receiver.url('/witness'),
    query: QUERY,
  })
  assert.ok(witness.id)
  const chain = new APIClient({ url: p.chainApi })
  const random = mulberry32(SEED)
  await transfer(chain, random, 'after revoke')
  await transfer(chain, random, 'after revoke, later')
  const memos = () => receiver.acknowledged('/witness').map((d) => (JSON.parse(d.body) as { data: unknown }).data)
  await pollUntil(
    async () => JSON.stringify(memos()),
    (text) => text.includes('after revoke, later'),
    20_000,
  )
  assert.equal(
    receiver.deliveries.filter((d) => d.path === '/once').length,
    before,
    'nothing delivered for a revoked key',
  )
})

test('410 disables at once; failing past --webhook-disable-after disables; resuming re-enables with no gap', async (t) => {
  const p = await startPlatform(t, ['--webhook-retries', '100ms', '--webhook-disable-after', '1s'])
  const token = await issueToken(p, p.apiKey)
  let failing = true
  const receiver = await startWebhookReceiver(t, {
    '/gone': () => ({ status: 410 }),
    '/down': () => ({ status: failing ? 502 : 200 }),
  })
  const gone = await createWebhook(p.api, token, { url: receiver.url('/gone'), query: QUERY, start_block: 1 })
  const down = await createWebhook(p.api, token, { url: receiver.url('/down'), query: QUERY, start_block: 1 })
  const read = async (id: string) =>
    (await (await fetch(`${p.api}/v1/webhooks/${id}`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
      state: string
      disabled_reason: string | null
    }
  const disabled = await pollUntil(
    () => read(gone.id),
    (w) => w.state === 'disabled',
    10_000,
  )
  assert.match(disabled.disabled_reason ?? '', /410/)
  assert.equal(receiver.deliveries.filter((d) => d.path === '/gone').length, 1, 'no try after a 410')
  const down1 = await pollUntil(
    () => read(down.id),
    (w) => w.state === 'disabled',
    10_000,
  )
  assert.match(down1.disabled_reason ?? '', /failed continuously/)
  const tries = receiver.deliveries.filter((d) => d.path === '/down').length
  assert.ok(tries >= 3, `${tries} tries before disabling`)

  failing = false
  const resumed = await fetch(`${p.api}/v1/webhooks/${down.id}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ paused: false }),
  })
  assert.equal(resumed.status, 200, await resumed.text())
  const want = await canonicalMatches(p.api, token)
  const copy = await pollUntil(
    async () => blindCopy(receiver.acknowledged('/down')),
    (c) => c.held.size >= want.size,
    20_000,
  )
  assert.deepEqual(copy.problems, [])
  for (const [key, seqs] of want) assert.equal(copy.held.get(key), seqs, `${key} delivered after re-enabling`)
  assert.equal((await read(down.id)).state, 'active')
})
