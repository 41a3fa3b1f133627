import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { APIClient } from '@wharfkit/antelope'
import { mulberry32 } from '../_helpers/random.ts'
import { issueToken, startPlatform, type Platform } from '../_helpers/platform.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import { pushActions, waitIndexed } from '../_helpers/push.ts'

/*
 * Hyperion's get_actions is fork-correct (issue 35, "Done when"): transfers among a few accounts while forks are
 * injected into the devchain, then, once quiet, GET /v2/history/get_actions?account=X paged through in both orders
 * equals a brute-force list of the final chain's actions for X, read block by block from the devchain's
 * /v1/chain/get_block, a transfer's notifications (to `from` and `to`) folded into its one action; get_transaction of
 * every transfer pushed answers its final block, or not executed when a fork dropped it. The seed is
 * printed; ANTLER_TEST_SEED replays a run.
 */

const SEED = Number(process.env.ANTLER_TEST_SEED ?? Date.now() % 1_000_000)
const USERS = ['alice', 'bob', 'carol'] as const
/** The devchain boots in block 2 (accounts, token, issues): the comparison starts after it. */
const BOOT_BLOCK = 2

/** One action, as both sides are reduced to: its transaction, block, memo, receivers (sorted) and authorizers. */
interface Listed {
  trx_id: string
  block_num: number
  memo: string
  receivers: string[]
  actors: string[]
}

interface ChainBlock {
  block_num: number
  transactions: {
    trx:
      | string
      | {
          id: string
          transaction: {
            actions: {
              account: string
              name: string
              authorization: { actor: string }[]
              data: { from: string; to: string; memo: string }
            }[]
          }
        }
  }[]
}

/**
 * The final chain's actions for every user, in chain order, from every block after boot up to `head`: the workload
 * pushes only eosio.token transfers (anything else fails the test), each notifying `from` and `to`.
 */
async function bruteForce(chainApi: string, head: number): Promise<Map<string, Listed[]>> {
  const byUser = new Map<string, Listed[]>(USERS.map((u) => [u, []]))
  for (let num = BOOT_BLOCK + 1; num <= head; num++) {
    const response = await fetch(`${chainApi}/v1/chain/get_block`, {
      method: 'POST',
      body: JSON.stringify({ block_num_or_id: num }),
    })
    const block = (await response.json()) as ChainBlock
    for (const { trx } of block.transactions) {
      assert.ok(typeof trx !== 'string', `block ${num}: a deferred transaction ${String(trx)}`)
      for (const act of trx.transaction.actions) {
        assert.equal(`${act.account}::${act.name}`, 'eosio.token::transfer', `block ${num}: only transfers`)
        const listed: Listed = {
          trx_id: trx.id,
          block_num: num,
          memo: act.data.memo,
          receivers: [...new Set(['eosio.token', act.data.from, act.data.to])].sort(),
          actors: act.authorization.map((a) => a.actor),
        }
        for (const user of USERS)
          if (listed.receivers.includes(user) || listed.actors.includes(user)) byUser.get(user)!.push(listed)
      }
    }
  }
  return byUser
}

interface HyperionAction {
  trx_id: string
  block_num: number
  global_sequence: number
  act: { authorization: { actor: string }[]; data: { memo?: string } }
  receipts: { receiver: string }[]
}

/**
 * GET /v2/history/get_actions for `account`, paged by `limit` with `skip`, in `sort` order (asc from block 1): every
 * page's actions, and the first page's total.value.
 */
async function pagedActions(
  api: string,
  account: string,
  sort: 'asc' | 'desc',
  limit: number,
): Promise<{ actions: HyperionAction[]; total: number }> {
  const all: HyperionAction[] = []
  let total = -1
  for (let skip = 0; ; skip += limit) {
    const after = sort === 'asc' ? '&after=1' : ''
    const url = `${api}/v2/history/get_actions?account=${account}&sort=${sort}${after}&limit=${limit}&skip=${skip}`
    const response = await fetch(url)
    const body = (await response.json()) as { actions?: HyperionAction[]; total?: { value: number } }
    assert.equal(response.status, 200, `${url}: ${JSON.stringify(body)}`)
    all.push(...body.actions!)
    if (skip === 0) total = body.total?.value ?? -1
    if (body.actions!.length < limit) break
    assert.ok(skip < 10_000, 'paging ends')
  }
  return { actions: all, total }
}

const listedOf = (a: HyperionAction): Listed => ({
  trx_id: a.trx_id,
  block_num: a.block_num,
  memo: String(a.act.data.memo),
  receivers: a.receipts.map((r) => r.receiver).sort(),
  actors: a.act.authorization.map((x) => x.actor),
})

interface SimpleAction {
  block: number
  transaction_id: string
  contract: string
  action: string
  actors: string
  notified: string
  irreversible?: boolean
  data: { memo?: string }
}

/**
 * get_actions with simple=true&checkLib=true (asc, one page): the same actions in Hyperion's simple form, each
 * `irreversible` exactly when its block is at or below the answer's `lib`.
 */
async function checkSimple(api: string, account: string, want: readonly Listed[], head: number) {
  const url = `${api}/v2/history/get_actions?account=${account}&sort=asc&after=${BOOT_BLOCK + 1}&limit=1000&simple=true&checkLib=true`
  const response = await fetch(url)
  const body = (await response.json()) as { lib: number; simple_actions?: SimpleAction[] }
  assert.equal(response.status, 200, `${url}: ${JSON.stringify(body)}`)
  const simple = body.simple_actions!.filter((a) => a.block <= head)
  assert.deepEqual(
    simple.map((a) => ({
      trx_id: a.transaction_id,
      block_num: a.block,
      memo: String(a.data.memo),
      receivers: a.notified.split(',').sort(),
      actors: a.actors.split(',').map((actor) => actor.split('@')[0]),
    })),
    want,
    `${account}: simple=true lists the final chain's actions (seed ${SEED})`,
  )
  assert.ok(body.lib > 0, `checkLib fills lib: ${body.lib}`)
  for (const a of simple)
    assert.equal(a.irreversible, a.block <= body.lib, `${account}: block ${a.block} irreversible (lib ${body.lib})`)
}

async function transfersUnderForks(
  t: TestContext,
  p: Platform,
  random: () => number,
): Promise<{ forks: number; pushed: string[] }> {
  const chain = new APIClient({ url: p.chainApi })
  const pushed: string[] = []
  let forks = 0
  for (let i = 0; i < 40; i++) {
    const from = USERS[Math.floor(random() * USERS.length)]
    const to = USERS.filter((u) => u !== from)[Math.floor(random() * (USERS.length - 1))]
    const data = { from, to, quantity: '0.0001 EOS', memo: `fork-${SEED}-${i}` }
    pushed.push((await pushActions(chain, [{ account: 'eosio.token', name: 'transfer', actor: from, data }])).id)
    if (random() < 0.4) {
      await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 400)))
      // The devchain replaces its last blocks with a longer branch, re-including their transactions but the dropped.
      const drop = random() < 0.3 ? [pushed.at(-1)!] : []
      const response = await fetch(`${p.chainApi}/v1/devchain/fork`, {
        method: 'POST',
        body: JSON.stringify({ depth: 1 + Math.floor(random() * 6), drop }),
      })
      if (response.status === 200) forks++
    }
  }
  t.diagnostic(`${forks} forks injected among ${pushed.length} transfers`)
  return { forks, pushed }
}

async function forkedHistory(t: TestContext, store: 'sqlite' | 'postgres') {
  t.diagnostic(`seed ${SEED} (replay with ANTLER_TEST_SEED=${SEED})`)
  const random = mulberry32(SEED)
  const extra = store === 'postgres' ? ['--store', await withPostgresDatabase(t)] : []
  const p = await startPlatform(t, [...extra, '--lib-depth', '30'])
  const { forks, pushed } = await transfersUnderForks(t, p, random)
  assert.ok(forks >= 5, `${forks} forks injected (seed ${SEED})`)

  // Quiet: nothing more is pushed. A transfer pushed is in the block being built: let a few blocks pass before the
  // chain's head is read, then wait until the store is a few blocks past it.
  await new Promise((resolve) => setTimeout(resolve, 1_000))
  const head = (await new APIClient({ url: p.chainApi }).v1.chain.get_info()).head_block_num.toNumber()
  await waitIndexed(p.api, head + 3, 30_000)
  const expected = await bruteForce(p.chainApi, head)

  for (const user of USERS) {
    const want = expected.get(user)!
    assert.ok(want.length > 0, `${user} has transfers`)
    await checkSimple(p.api, user, want, head)
    for (const sort of ['desc', 'asc'] as const) {
      const limit = 2 + Math.floor(random() * 6)
      const { actions: got, total } = await pagedActions(p.api, user, sort, limit)
      const listed = got.filter((a) => a.block_num > BOOT_BLOCK && a.block_num <= head).map(listedOf)
      if (sort === 'desc') listed.reverse()
      assert.deepEqual(
        listed,
        want,
        `${user}: get_actions sort=${sort} limit=${limit} is the final chain's actions (seed ${SEED})`,
      )
      const sequences = got.map((a) => a.global_sequence)
      const twice = got.filter((a, i) => sequences.indexOf(a.global_sequence) !== i)
      assert.deepEqual(twice, [], `${user} ${sort}: no global_sequence twice (seed ${SEED})`)
      assert.equal(total, got.length, `${user} ${sort}: total.value counts the actions listed (seed ${SEED})`)
      const ordered = [...sequences].sort((a, b) => (sort === 'asc' ? a - b : b - a))
      assert.deepEqual(sequences, ordered, `${user} ${sort}: in global_sequence order (seed ${SEED})`)
    }
  }

  // get_transaction of every transfer pushed: in the final chain, executed in its final block; forked out and
  // dropped, not executed (Hyperion's issue 63 answers a transaction from a block that no longer holds it).
  const token = await issueToken(p, p.apiKey)
  const finalBlock = new Map([...expected.values()].flat().map((a) => [a.trx_id, a.block_num]))
  t.diagnostic(`${pushed.filter((id) => !finalBlock.has(id)).length} transfers dropped by the forks`)
  for (const id of pushed) {
    const response = await fetch(`${p.api}/v2/history/get_transaction?id=${id}`)
    const body = (await response.json()) as { executed: boolean; actions?: { block_num: number }[] }
    assert.equal(response.status, 200, JSON.stringify(body))
    const block = finalBlock.get(id)
    if (body.executed !== (block !== undefined)) {
      // What the dfuse route says of it, for whoever reads the failure.
      const lifecycle = await fetch(`${p.api}/v0/transactions/${id}`, { headers: { authorization: `Bearer ${token}` } })
      assert.fail(
        `get_transaction ${id} (seed ${SEED}): executed ${body.executed}, but the final chain (blocks to ${head}) ` +
          `${block === undefined ? 'does not hold it' : `holds it in block ${block}`}; answer ` +
          `${JSON.stringify(body).slice(0, 800)}; /v0/transactions: ${(await lifecycle.text()).slice(0, 400)}`,
      )
    }
    assert.deepEqual(
      [...new Set((body.actions ?? []).map((a) => a.block_num))],
      block === undefined ? [] : [block],
      `get_transaction ${id}: its final block (seed ${SEED})`,
    )
  }
}

test(
  `Hyperion get_actions under random forks equals the final chain's actions, SQLite (seed ${SEED})`,
  { timeout: 180_000 },
  async (t) => forkedHistory(t, 'sqlite'),
)

test(
  `Hyperion get_actions under random forks equals the final chain's actions, PostgreSQL (seed ${SEED})`,
  { skip: PG_SKIP_REASON, timeout: 180_000 },
  async (t) => forkedHistory(t, 'postgres'),
)
