import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { APIClient, PublicKey } from '@wharfkit/antelope'
import { HyperionAPIClient } from '@wharfkit/hyperion'
import { JsonRpc as ProtonRpc } from '@proton/hyperion'
import { JsonRpc as EosjsRpc } from 'eosjs'
import { issueToken, startPlatform, type Platform } from '../_helpers/platform.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import {
  flattenTraces,
  foldTraces,
  involves,
  seedHyperion,
  type DfuseActionTrace,
  type FoldedAction,
  type HyperionSeed,
} from '../_helpers/hyperion.ts'

/*
 * Hyperion's clients, unchanged, against `antler dev` (issue 35, "Done when"): @wharfkit/hyperion and @proton/hyperion
 * call every Hyperion route they know, @wharfkit/antelope's typed v1.history and eosjs's history_* theirs, on a seeded
 * account (test/_helpers/hyperion.ts). Each answer is decoded by the client, then checked against the same facts read
 * through Antler's dfuse routes (/v0/search/transactions, /v0/transactions/:id, /v0/state/*) or /v1/chain.
 */

/** What the dfuse routes and /v1/chain say about the seed: the facts every client's answer is checked against. */
interface Facts {
  /** Hyperion's view of the account's actions (receiver or authorizer, notifications folded), by global sequence. */
  readonly actions: FoldedAction[]
  /** The block time (Hyperion's format, no Z) of each seeded transaction's block. */
  readonly blockTime: Map<string, string>
  /** The block id of each seeded transaction's block. */
  readonly blockId: Map<string, string>
  /** Each seeded transaction's receipt CPU and NET. */
  readonly usage: Map<string, { cpu_usage_us: number; net_usage_words: number }>
  readonly keyAccounts: string[]
  readonly links: { contract: string; action: string; permission_name: string }[]
  /** `/v1/chain/get_currency_balance` of the account. */
  readonly balances: string[]
  /** The EOS balance row of each scope, from `/v0/state/table`. */
  readonly balanceOf: (scope: string) => Promise<string | undefined>
  readonly tokenAbi: { actions: { name: string }[]; tables: { name: string }[] }
  /** The block of eosio.token's (only) setabi. */
  readonly tokenAbiBlock: number
  readonly head: number
  /** Every trace the account received or authorized (nodeos's per-account history), by global sequence. */
  readonly traces: DfuseActionTrace[]
  readonly lifecycles: Map<string, Lifecycle>
}

type Lifecycle = {
  execution_trace: {
    block_num: number
    block_time: string
    producer_block_id: string
    receipt: { cpu_usage_us: number; net_usage_words: number }
    action_traces: DfuseActionTrace[]
  }
}

async function readFacts(p: Platform, seed: HyperionSeed): Promise<Facts> {
  const token = await issueToken(p, p.apiKey)
  const rest = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${p.api}${path}`, { headers: { authorization: `Bearer ${token}` } })
    assert.equal(response.status, 200, `${path}: ${await response.clone().text()}`)
    return (await response.json()) as T
  }
  const chain = async <T>(path: string, body: unknown): Promise<T> =>
    (await (await fetch(`${p.chainApi}${path}`, { method: 'POST', body: JSON.stringify(body) })).json()) as T

  const query = encodeURIComponent(`receiver:${seed.account} OR auth:${seed.account}`)
  const found = await rest<{ transactions: { lifecycle: Lifecycle }[] | null }>(
    `/v0/search/transactions?q=${query}&limit=100&with_reversible=true`,
  )
  const actions = (found.transactions ?? [])
    .flatMap((t) => foldTraces(t.lifecycle.execution_trace.action_traces))
    .filter((a) => involves(a, seed.account))
    .sort((a, b) => a.global_sequence - b.global_sequence)
  // The seed's own shape, as dfuse search sees it: fund, send, the two transfers, updateauth, linkauth.
  assert.deepEqual(
    actions.map((a) => `${a.account}::${a.name}`),
    [...Array(4).fill('eosio.token::transfer'), 'eosio::updateauth', 'eosio::linkauth'] as string[],
    'the seeded actions, through /v0/search/transactions',
  )
  const traces = (found.transactions ?? [])
    .flatMap((t) => flattenTraces(t.lifecycle.execution_trace.action_traces))
    .filter((trace) => trace.receiver === seed.account || trace.act.authorization.some((a) => a.actor === seed.account))
    .sort((a, b) => Number(a.receipt.global_sequence) - Number(b.receipt.global_sequence))
  const lifecycles = new Map<string, Lifecycle>()
  const blockTime = new Map<string, string>()
  const blockId = new Map<string, string>()
  const usage = new Map<string, { cpu_usage_us: number; net_usage_words: number }>()
  for (const pushed of Object.values(seed.trx)) {
    const lifecycle = await rest<Lifecycle>(`/v0/transactions/${pushed.id}`)
    lifecycles.set(pushed.id, lifecycle)
    blockTime.set(pushed.id, lifecycle.execution_trace.block_time)
    blockId.set(pushed.id, lifecycle.execution_trace.producer_block_id)
    usage.set(pushed.id, lifecycle.execution_trace.receipt)
  }
  const keyAccounts = (
    await rest<{ account_names: string[] }>(`/v0/state/key_accounts?public_key=${encodeURIComponent(seed.addedKey)}`)
  ).account_names
  const links = (
    await rest<{ linked_permissions: Facts['links'] }>(`/v0/state/permission_links?account=${seed.account}`)
  ).linked_permissions
  const balances = await chain<string[]>('/v1/chain/get_currency_balance', {
    code: 'eosio.token',
    account: seed.account,
  })
  const balanceOf = async (scope: string) =>
    (
      await rest<{ rows: { json: { balance: string } }[] }>(
        `/v0/state/table?account=eosio.token&table=accounts&scope=${scope}&json=true`,
      )
    ).rows.find((r) => r.json.balance.endsWith(' EOS'))?.json.balance
  const tokenAbi = (await chain<{ abi: Facts['tokenAbi'] }>('/v1/chain/get_abi', { account_name: 'eosio.token' })).abi
  const head = (await chain<{ head_block_num: number }>('/v1/chain/get_info', {})).head_block_num
  const setabis = await rest<{ transactions: { lifecycle: Lifecycle }[] | null }>(
    `/v0/search/transactions?q=${encodeURIComponent('receiver:eosio action:setabi')}&limit=100&with_reversible=true`,
  )
  const tokenSetabis = (setabis.transactions ?? [])
    .flatMap((t) => flattenTraces(t.lifecycle.execution_trace.action_traces))
    .filter(
      (trace) => trace.act.name === 'setabi' && (trace.act.data as { account?: string }).account === 'eosio.token',
    )
  assert.equal(tokenSetabis.length, 1, "eosio.token's setabi, through /v0/search/transactions")
  const tokenAbiBlock = tokenSetabis[0].block_num
  return {
    actions,
    blockTime,
    blockId,
    usage,
    keyAccounts,
    links,
    balances,
    balanceOf,
    tokenAbi,
    tokenAbiBlock,
    head,
    traces,
    lifecycles,
  }
}

/** A Hyperion action reduced to what the facts can tell: identity, place, contract/name, receivers, authorizers. */
interface Comparable {
  trx_id: string
  block_num: number
  global_sequence: number
  account: string
  name: string
  receivers: string[]
  actors: string[]
}

/** The JSON of a Hyperion action (raw, or a decoded wharfkit struct through JSON) as far as the tests read it. */
interface HyperionActionJson {
  '@timestamp'?: string
  timestamp: string
  block_num: number | string
  block_id?: string
  trx_id: string
  global_sequence: number | string
  producer?: string
  action_ordinal?: number | string
  creator_action_ordinal?: number | string
  cpu_usage_us?: number | string
  net_usage_words?: number | string
  signatures?: string[]
  act: {
    account: string
    name: string
    authorization: { actor: string; permission: string }[]
    data: Record<string, unknown> | string
  }
  receipts?: { receiver: string; global_sequence: number | string; recv_sequence: number | string }[]
}

const comparable = (a: HyperionActionJson): Comparable => ({
  trx_id: String(a.trx_id),
  block_num: Number(a.block_num),
  global_sequence: Number(a.global_sequence),
  account: String(a.act.account),
  name: String(a.act.name),
  receivers: (a.receipts ?? []).map((r) => String(r.receiver)).sort(),
  actors: a.act.authorization.map((x) => String(x.actor)),
})

const expected = (actions: readonly FoldedAction[]): Comparable[] =>
  actions.map((a) => ({
    trx_id: a.trx_id,
    block_num: a.block_num,
    global_sequence: a.global_sequence,
    account: a.account,
    name: a.name,
    receivers: [...a.receivers].sort(),
    actors: a.actors,
  }))

/** A decoded wharfkit struct as plain JSON (names, checksums, ints and timestamps as their JSON forms). */
const plain = <T>(value: unknown): T => JSON.parse(JSON.stringify(value)) as T

/**
 * The checks on full Hyperion action documents (raw JSON): block id, time in Hyperion's format, usage and signatures on
 * a transaction's first action only, transfer data with Hyperion's `amount`/`symbol` additions.
 */
function checkActionDocuments(actions: readonly HyperionActionJson[], seed: HyperionSeed, facts: Facts, who: string) {
  const firstOf = new Map<string, number>()
  for (const a of actions) firstOf.set(a.trx_id, Math.min(firstOf.get(a.trx_id) ?? Infinity, Number(a.global_sequence)))
  const signaturesOf = new Map(Object.values(seed.trx).map((p) => [p.id, [...p.signatures]]))
  for (const a of actions) {
    const at = `${who}: action ${a.global_sequence} of ${a.trx_id}`
    assert.equal(a.timestamp, facts.blockTime.get(a.trx_id), `${at}: timestamp`)
    if (a['@timestamp'] !== undefined) assert.equal(a['@timestamp'], a.timestamp, `${at}: @timestamp`)
    assert.equal(a.block_id, facts.blockId.get(a.trx_id), `${at}: block_id`)
    assert.match(String(a.producer), /^[a-z1-5.]{1,12}$/, `${at}: producer`)
    const first = Number(a.global_sequence) === firstOf.get(a.trx_id)
    const usage = facts.usage.get(a.trx_id)!
    if (first) {
      assert.equal(Number(a.cpu_usage_us), usage.cpu_usage_us, `${at}: cpu_usage_us on the first action`)
      assert.equal(Number(a.net_usage_words), usage.net_usage_words, `${at}: net_usage_words on the first action`)
      if (a.signatures !== undefined) assert.deepEqual(a.signatures, signaturesOf.get(a.trx_id), `${at}: signatures`)
    } else {
      assert.equal(a.cpu_usage_us, undefined, `${at}: cpu_usage_us only on a transaction's first action`)
      assert.equal(a.net_usage_words, undefined, `${at}: net_usage_words only on a transaction's first action`)
      assert.equal(a.signatures, undefined, `${at}: signatures only on a transaction's first action`)
    }
    if (a.act.name === 'transfer') {
      const data = a.act.data as { quantity: string; amount?: number; symbol?: string }
      const [amount, symbol] = data.quantity.split(' ')
      assert.equal(data.amount, Number(amount), `${at}: act.data.amount`)
      assert.equal(data.symbol, symbol, `${at}: act.data.symbol`)
    }
  }
}

/** The balance of an asset string as Hyperion's get_tokens gives it: amount (float), symbol, precision. */
const tokenOf = (asset: string) => {
  const [amount, symbol] = asset.split(' ')
  return { symbol, amount: Number(amount), precision: amount.split('.')[1]?.length ?? 0, contract: 'eosio.token' }
}

async function clientsAgainst(t: TestContext, store: 'sqlite' | 'postgres') {
  const extra = store === 'postgres' ? ['--store', await withPostgresDatabase(t)] : []
  const p = await startPlatform(t, extra)
  const seed = await seedHyperion(p.chainApi, p.api)
  const facts = await readFacts(p, seed)
  const all = expected(facts.actions)
  const desc = [...all].reverse()
  const X = seed.account
  const twice = seed.trx.twice.id
  const [twiceFirst, twiceSecond] = facts.actions.filter((a) => a.trx_id === twice)

  await t.test('@wharfkit/hyperion: every v2 method it implements decodes, and each answer is the facts', async (t) => {
    const hyperion = new HyperionAPIClient(new APIClient({ url: p.api }))
    const v2 = hyperion.v2

    await t.test('get_health decodes (HealthEntry, Features)', async () => {
      const health = await v2.get_health()
      assert.ok(health.health.length > 0, 'health lists services')
    })
    await t.test('get_actions: the seeded actions, desc, total', async () => {
      const actions = await v2.history.get_actions(X, { limit: 100 })
      assert.deepEqual(actions.actions.map(plain<HyperionActionJson>).map(comparable), desc, 'get_actions (desc)')
      assert.equal(Number(actions.total.value), all.length, 'get_actions total.value')
      assert.equal(actions.total.relation, 'eq')
    })
    await t.test('get_actions filter=eosio.token:transfer', async () => {
      const transfers = await v2.history.get_actions(X, { filter: 'eosio.token:transfer' })
      assert.deepEqual(
        transfers.actions.map(plain<HyperionActionJson>).map(comparable),
        desc.filter((a) => a.name === 'transfer'),
        'get_actions filter=eosio.token:transfer',
      )
    })
    await t.test('get_actions skip=1&limit=2', async () => {
      const page = await v2.history.get_actions(X, { skip: 1, limit: 2 })
      assert.deepEqual(page.actions.map(plain<HyperionActionJson>).map(comparable), desc.slice(1, 3), 'skip=1&limit=2')
    })
    await t.test('get_created_accounts(alice) lists the account', async () => {
      const created = await v2.history.get_created_accounts(seed.creator)
      const mine = created.accounts.find((a: { name: unknown }) => String(a.name) === X)
      assert.ok(mine, `get_created_accounts(${seed.creator}) lists ${X}: ${JSON.stringify(created.accounts)}`)
      assert.equal(String(mine.trx_id), seed.trx.create.id)
    })
    await t.test('get_creator: alice, its trx and block', async () => {
      const creator = await v2.history.get_creator(X)
      assert.equal(String(creator.creator), seed.creator)
      assert.equal(String(creator.trx_id), seed.trx.create.id)
      assert.equal(Number(creator.block_num), seed.trx.create.blockNum)
    })
    await t.test("get_deltas of the account's balance row", async () => {
      const deltas = await v2.history.get_deltas('eosio.token', X, 'accounts', X)
      assert.ok(deltas.deltas.length > 0, 'get_deltas lists the balance changes the account paid for')
      for (const d of deltas.deltas) {
        assert.deepEqual(
          [String(d.code), String(d.scope), String(d.table), String(d.payer)],
          ['eosio.token', X, 'accounts', X],
        )
      }
      const latest = [...deltas.deltas].sort((a, b) => Number(b.block_num) - Number(a.block_num))[0]
      assert.equal(Number(latest.block_num), seed.trx.twice.blockNum, 'the last balance change is the two transfers')
      assert.equal((latest.data as { balance: string }).balance, await facts.balanceOf(X), 'its balance is the row')
    })
    await t.test("get_table_state: the account's row", async () => {
      const state = await v2.history.get_table_state('eosio.token', 'accounts', facts.head)
      const row = (state.results as { scope: string; data: { balance: string } }[]).find((r) => r.scope === X)
      assert.equal(row?.data.balance, seed.balance, `get_table_state has ${X}'s row`)
    })
    await t.test('get_transaction: two identical transfers are two actions', async () => {
      const transaction = await v2.history.get_transaction(twice)
      assert.equal(transaction.executed, true)
      assert.equal(String(transaction.trx_id), twice)
      assert.equal(transaction.actions.length, 2, 'get_transaction: the two identical transfers are two actions')
      assert.deepEqual(
        transaction.actions.map(plain<HyperionActionJson>).map(comparable),
        all.filter((a) => a.trx_id === twice),
      )
    })
    await t.test('get_abi_snapshot fetch=true is the ABI', async () => {
      const abi = await v2.history.get_abi_snapshot('eosio.token', facts.head, true)
      assert.deepEqual(
        abi.abi.actions.map((a: { name: unknown }) => String(a.name)).sort(),
        facts.tokenAbi.actions.map((a) => a.name).sort(),
        'get_abi_snapshot fetch=true is the contract ABI',
      )
    })
    await t.test('get_key_accounts by the added key', async () => {
      const byKey = await v2.state.get_key_accounts(seed.addedKey)
      assert.deepEqual(byKey.account_names.map(String), facts.keyAccounts, 'get_key_accounts (added key)')
      assert.deepEqual(facts.keyAccounts, [X])
    })
    await t.test('get_tokens is /v1/chain/get_currency_balance', async () => {
      const tokens = await v2.state.get_tokens(X)
      assert.deepEqual(
        tokens.tokens.map((x: { symbol: string; amount: unknown; precision: unknown; contract: string }) => ({
          symbol: x.symbol,
          amount: Number(x.amount),
          precision: Number(x.precision),
          contract: x.contract,
        })),
        facts.balances.map(tokenOf),
        'get_tokens is /v1/chain/get_currency_balance',
      )
    })
    await t.test('get_links is /v0/state/permission_links', async () => {
      const links = await v2.state.get_links(X)
      assert.deepEqual(
        links.links.map((l: { code: string; action: string; permission: string }) => ({
          contract: l.code,
          action: l.action,
          permission_name: l.permission,
        })),
        facts.links,
        'get_links is /v0/state/permission_links',
      )
      assert.equal(Number(links.links[0].block_num), seed.trx.linkauth.blockNum)
    })
    await t.test('get_voters: none', async () => {
      const voters = await v2.state.get_voters()
      assert.deepEqual(voters.voters, [], 'no system contract: no voters')
    })
    await t.test('get_proposals: none', async () => {
      const proposals = await v2.state.get_proposals()
      assert.deepEqual(proposals.proposals, [], 'no msig: no proposals')
    })
    await t.test('get_account: account, actions, links, tokens', async () => {
      const account = await v2.state.get_account(X)
      assert.equal(String(account.account.account_name), X)
      assert.equal(Number(account.total_actions), all.length)
      assert.deepEqual(
        account.actions.map(plain<HyperionActionJson>).map(comparable),
        desc.slice(0, account.actions.length),
      )
      assert.deepEqual(
        account.links.map((l: { code: unknown; action: unknown; permission: unknown }) => ({
          contract: String(l.code),
          action: String(l.action),
          permission_name: String(l.permission),
        })),
        facts.links,
      )
      assert.deepEqual(
        account.tokens.map((x: { amount: unknown; symbol: string }) => `${x.amount} ${x.symbol}`),
        facts.balances.map((b) => `${Number(b.split(' ')[0])} ${b.split(' ')[1]}`),
      )
    })
  })

  await t.test('@proton/hyperion: every method decodes, and each answer is the facts', async (t) => {
    const rpc = new ProtonRpc(p.api)

    await t.test('alive (/v2/health)', async () => {
      const alive = (await rpc.alive()) as unknown as { health: unknown[]; last_indexed_block: number }
      assert.ok(Array.isArray(alive.health) && alive.health.length > 0, 'health lists services')
      assert.ok(alive.last_indexed_block >= seed.trx.linkauth.blockNum, 'health: last_indexed_block')
    })
    await t.test(
      'get_actions: documents, usage and signatures on the first action, transfer amount/symbol',
      async () => {
        const actions = (await rpc.get_actions(X, { limit: 100 })) as unknown as {
          actions: HyperionActionJson[]
          total: { value: number; relation: string }
        }
        assert.deepEqual(actions.actions.map(comparable), desc, 'get_actions')
        assert.deepEqual(actions.total, { value: all.length, relation: 'eq' })
        checkActionDocuments(actions.actions, seed, facts, 'get_actions')
        // The two identical transfers: two documents, each with its own receipts (eosio.token, the account, carol).
        const pair = actions.actions.filter((a) => a.trx_id === twice)
        assert.deepEqual(pair.map((a) => Number(a.global_sequence)).sort(), [
          twiceFirst.global_sequence,
          twiceSecond.global_sequence,
        ])
        for (const a of pair)
          assert.deepEqual(a.receipts?.map((r) => r.receiver).sort(), ['carol', 'eosio.token', X].sort())
      },
    )
    await t.test('get_actions paged with skip (limit 1 and 4), both orders: each action once', async () => {
      for (const limit of [1, 4])
        for (const sort of ['desc', 'asc'] as const) {
          const paged: Comparable[] = []
          for (let skip = 0; skip < 50; skip += limit) {
            const page = (await rpc.get_actions(X, {
              sort,
              ...(sort === 'asc' ? { after: '1' } : {}),
              skip,
              limit,
            })) as unknown as { actions: HyperionActionJson[] }
            paged.push(...page.actions.map(comparable))
            if (page.actions.length < limit) break
          }
          assert.deepEqual(paged, sort === 'asc' ? all : desc, `sort=${sort} limit=${limit}, paged with skip`)
        }
    })
    await t.test('get_actions sort=asc after=<block>', async () => {
      const asc = (await rpc.get_actions(X, {
        sort: 'asc',
        after: String(seed.trx.create.blockNum),
        limit: 100,
      })) as unknown as { actions: HyperionActionJson[] }
      assert.deepEqual(asc.actions.map(comparable), all, 'get_actions sort=asc after=<block>')
    })
    await t.test('get_actions transfer.to=carol', async () => {
      const toCarol = (await rpc.get_actions(X, { 'transfer.to': 'carol' } as Record<string, string>)) as unknown as {
        actions: HyperionActionJson[]
      }
      assert.deepEqual(
        toCarol.actions.map(comparable),
        desc.filter((a) => a.trx_id === twice),
        'get_actions transfer.to=carol: the two identical transfers',
      )
    })
    await t.test('get_actions filter=eosio:*', async () => {
      const eosio = (await rpc.get_actions(X, { filter: 'eosio:*' })) as unknown as { actions: HyperionActionJson[] }
      assert.deepEqual(
        eosio.actions.map((a) => a.act.name),
        ['linkauth', 'updateauth'],
        'get_actions filter=eosio:*',
      )
    })
    await t.test('get_transaction: the two identical transfers, folded', async () => {
      const transaction = (await rpc.get_transaction(twice)) as unknown as {
        executed: boolean
        trx_id: string
        actions: HyperionActionJson[]
      }
      assert.equal(transaction.executed, true)
      assert.equal(transaction.trx_id, twice)
      assert.deepEqual(
        transaction.actions.map(comparable),
        all.filter((a) => a.trx_id === twice),
        'get_transaction: the two identical transfers, notifications folded',
      )
      checkActionDocuments(transaction.actions, seed, facts, 'get_transaction')
    })
    await t.test('get_creator', async () => {
      const creator = (await rpc.get_creator(X)) as unknown as { creator: string; trx_id: string; block_num: number }
      assert.deepEqual(
        { creator: creator.creator, trx_id: creator.trx_id, block_num: creator.block_num },
        { creator: seed.creator, trx_id: seed.trx.create.id, block_num: seed.trx.create.blockNum },
      )
    })
    await t.test('get_created_accounts', async () => {
      const created = (await rpc.get_created_accounts(seed.creator)) as unknown as {
        accounts: { name: string; trx_id: string; timestamp: string }[]
      }
      assert.deepEqual(
        created.accounts.find((a) => a.name === X),
        { name: X, trx_id: seed.trx.create.id, timestamp: facts.blockTime.get(seed.trx.create.id) },
        'get_created_accounts',
      )
    })
    await t.test("get_deltas of the account's balance row", async () => {
      const deltas = (await rpc.get_deltas('eosio.token', X, 'accounts', X)) as unknown as {
        deltas: { block_num: number; present: number; payer: string; data: { balance: string } }[]
      }
      const blocks = new Set(deltas.deltas.map((d) => d.block_num))
      assert.ok(blocks.has(seed.trx.send.blockNum) && blocks.has(seed.trx.twice.blockNum), JSON.stringify(deltas))
      const newest = deltas.deltas.reduce((a, b) => (b.block_num > a.block_num ? b : a))
      assert.equal(newest.data.balance, seed.balance)
    })
    await t.test("get_table_state paged through next_key: every row is /v0/state/table's", async () => {
      // Every row get_table_state lists (paged through next_key) is /v0/state/table's row of its scope.
      const rows: { scope: string; present?: number; data: { balance: string } }[] = []
      let afterKey: string | undefined
      for (let pages = 0; pages < 20; pages++) {
        const state = (await rpc.get_table_state('eosio.token', 'accounts', facts.head, afterKey!)) as unknown as {
          results: typeof rows
          next_key: string | null
        }
        rows.push(...state.results)
        if (!state.next_key) break
        afterKey = state.next_key
      }
      assert.ok(
        rows.some((r) => r.scope === X),
        `get_table_state lists ${X}`,
      )
      for (const r of rows) assert.equal(r.data.balance, await facts.balanceOf(r.scope), `get_table_state ${r.scope}`)
    })
    await t.test('get_abi_snapshot', async () => {
      const snapshot = (await rpc.get_abi_snapshot('eosio.token', facts.head)) as unknown as {
        block_num: number
        present?: boolean
      }
      assert.deepEqual(
        { block_num: snapshot.block_num, present: snapshot.present },
        { block_num: facts.tokenAbiBlock, present: true },
        "the block of eosio.token's setabi, as /v0/search/transactions finds it",
      )
    })
    await t.test('get_key_accounts by each key, in either format', async () => {
      for (const key of [seed.addedKey, seed.ownerKey, PublicKey.from(seed.ownerKey).toLegacyString()]) {
        const byKey = (await rpc.get_key_accounts(key)) as unknown as { account_names: string[] }
        assert.deepEqual(byKey.account_names, [X], `get_key_accounts(${key})`)
      }
    })
    await t.test('get_tokens is /v1/chain/get_currency_balance', async () => {
      const tokens = (await rpc.get_tokens(X)) as unknown as { tokens: unknown[] }
      assert.deepEqual(tokens.tokens, facts.balances.map(tokenOf), 'get_tokens is /v1/chain/get_currency_balance')
    })
    await t.test('get_links is /v0/state/permission_links', async () => {
      const links = (await rpc.get_links(X)) as unknown as {
        links: {
          account: string
          permission: string
          code: string
          action: string
          block_num: number
          timestamp: string
        }[]
      }
      assert.deepEqual(
        links.links.map((l) => ({ contract: l.code, action: l.action, permission_name: l.permission })),
        facts.links,
      )
      assert.equal(links.links[0].account, X)
      assert.equal(links.links[0].timestamp, facts.blockTime.get(seed.trx.linkauth.id))
    })
    await t.test('get_voters: none', async () => {
      const voters = (await rpc.get_voters({})) as unknown as { voters: unknown[] }
      assert.deepEqual(voters.voters, [])
    })
    await t.test('get_proposals: none', async () => {
      const proposals = (await rpc.get_proposals({})) as unknown as { proposals: unknown[] }
      assert.deepEqual(proposals.proposals, [])
    })
  })

  await t.test("@wharfkit/antelope's typed v1.history decodes each answer, and each is the facts", async (t) => {
    const history = new APIClient({ url: p.api }).v1.history

    await t.test(
      "get_actions(account, 0, 99): every trace the account received or authorized, nodeos's order",
      async () => {
        const listed = await history.get_actions(X, 0, 99)
        assert.ok(Number(listed.head_block_num) >= seed.trx.linkauth.blockNum, 'head_block_num')
        assert.ok(Number(listed.last_irreversible_block) >= 1, 'last_irreversible_block')
        assert.deepEqual(
          listed.actions.map((a) => Number(a.global_action_seq)),
          facts.traces.map((trace) => Number(trace.receipt.global_sequence)),
          'global_action_seq: the traces of the account, as /v0/search/transactions has them',
        )
        const sequences = listed.actions.map((a) => Number(a.account_action_seq))
        assert.deepEqual(
          sequences.map((n) => n - sequences[0]),
          sequences.map((_, i) => i),
          'account_action_seq one by one',
        )
        for (const a of listed.actions) {
          const trace = a.action_trace as { trx_id: string }
          assert.equal(String(a.block_time).slice(0, 19), facts.blockTime.get(trace.trx_id)!.slice(0, 19), 'block_time')
        }
      },
    )

    await t.test("get_transaction: the real transaction; an unknown id is nodeos's tx_not_found", async () => {
      const transaction = await history.get_transaction(twice)
      assert.equal(String(transaction.id), twice)
      assert.equal(Number(transaction.block_num), seed.trx.twice.blockNum)
      assert.equal(String(transaction.block_time).slice(0, 19), facts.blockTime.get(twice)!.slice(0, 19))
      assert.equal(transaction.trx.trx.actions.length, 2, 'the real transaction: its two actions')
      await assert.rejects(history.get_transaction('00'.repeat(32)), (error: { error?: { name?: string } }) => {
        assert.equal(error.error?.name, 'tx_not_found', JSON.stringify(error))
        return true
      })
    })

    await t.test('get_key_accounts and get_controlled_accounts', async () => {
      const byKey = await history.get_key_accounts(seed.addedKey)
      assert.deepEqual(byKey.account_names.map(String), [X])
      const controlled = await history.get_controlled_accounts(seed.controller)
      assert.ok(
        controlled.controlled_accounts.map(String).includes(X),
        'get_controlled_accounts(alice) finds the account',
      )
    })
  })

  await t.test("eosjs's history_* answers, each the facts", async (t) => {
    const rpc = new EosjsRpc(p.api, { fetch })
    await t.test('history_get_actions', async () => {
      const listed = (await rpc.history_get_actions(X, 0, 99)) as unknown as {
        actions: { global_action_seq: number; action_trace: { trx_id: string } }[]
      }
      assert.deepEqual(
        listed.actions.map((a) => Number(a.global_action_seq)),
        facts.traces.map((trace) => Number(trace.receipt.global_sequence)),
      )
    })
    await t.test('history_get_transaction', async () => {
      const transaction = (await rpc.history_get_transaction(twice, seed.trx.twice.blockNum)) as {
        id: string
        block_num: number
      }
      assert.deepEqual(
        { id: transaction.id, block_num: transaction.block_num },
        { id: twice, block_num: seed.trx.twice.blockNum },
      )
    })
    await t.test('history_get_key_accounts and history_get_controlled_accounts', async () => {
      const byKey = (await rpc.history_get_key_accounts(seed.addedKey)) as { account_names: string[] }
      assert.deepEqual(byKey.account_names, [X])
      const controlled = (await rpc.history_get_controlled_accounts(seed.controller)) as {
        controlled_accounts: string[]
      }
      assert.ok(controlled.controlled_accounts.includes(X))
    })
  })

  await t.test(
    "/v1/trace_api/get_block (the explorer's block page): the block's transactions and actions",
    async () => {
      const response = await fetch(`${p.api}/v1/trace_api/get_block`, {
        method: 'POST',
        body: JSON.stringify({ block_num: seed.trx.twice.blockNum }),
      })
      assert.equal(response.status, 200)
      const block = (await response.json()) as {
        id: string
        number: number
        transactions: { id: string; actions: { receiver: string; account: string; action: string }[] }[]
      }
      assert.equal(block.number, seed.trx.twice.blockNum)
      assert.equal(block.id, facts.blockId.get(twice))
      const pair = block.transactions.find((x) => x.id === twice)
      assert.deepEqual(
        pair?.actions.map((a) => `${a.receiver}:${a.account}::${a.action}`).sort(),
        flattenTraces(facts.lifecycles.get(twice)!.execution_trace.action_traces)
          .map((a) => `${a.receiver}:${a.act.account}::${a.act.name}`)
          .sort(),
        'one entry per receipt, as the execution trace',
      )
    },
  )
}

test(
  'Hyperion clients, unchanged, against antler dev on SQLite: each answer decodes and is the facts',
  { timeout: 180_000 },
  async (t) => clientsAgainst(t, 'sqlite'),
)

test(
  'Hyperion clients, unchanged, against antler dev on PostgreSQL: each answer decodes and is the facts',
  { skip: PG_SKIP_REASON, timeout: 180_000 },
  async (t) => clientsAgainst(t, 'postgres'),
)
