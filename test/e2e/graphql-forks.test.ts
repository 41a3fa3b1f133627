import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { APIClient } from '@wharfkit/antelope'
import { onCleanup } from '../_helpers/cleanup.ts'
import { graphqlQuery, LegacyGraphqlClient, modernGraphqlClient, type GraphqlResponse } from '../_helpers/graphql.ts'
import { issueToken, startPlatform, type Platform } from '../_helpers/platform.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import { pollUntil, pushActions, waitIndexed } from '../_helpers/push.ts'
import { mulberry32 } from '../_helpers/random.ts'

const SEED = Number(process.env.ANTLER_SEED ?? Date.now() % 1_000_000)
const QUERY = 'receiver:eosio.token action:transfer'
const USERS = ['alice', 'bob', 'carol']

const FIELDS = `undo cursor isIrreversible irreversibleBlockNum block { num id }
  trace { id matchingActions { seq receiver account name json } }`
const SUBSCRIPTION = `subscription ($query: String!, $cursor: String) {
  searchTransactionsForward(query: $query, lowBlockNum: 1, cursor: $cursor) { ${FIELDS} }
}`
const PAGE = `query ($query: String!, $cursor: String) {
  searchTransactionsForward(query: $query, lowBlockNum: 1, limit: 1000, cursor: $cursor, irreversibleOnly: false) {
    cursor results { block { num id } trace { id matchingActions { seq } } }
  }
}`

interface Match {
  readonly undo?: boolean
  readonly cursor?: string
  readonly isIrreversible?: boolean
  readonly irreversibleBlockNum?: number
  readonly block: { num: number; id: string }
  readonly trace: {
    id: string
    matchingActions: { seq: string; receiver?: string; account?: string; name?: string; json?: unknown }[]
  } | null
}

/** A match across forks: the transaction in one block (seqs are reused after a fork, block ids are not). */
const keyOf = (m: Match) => `${m.trace!.id}@${m.block.id}`
const seqsOf = (m: Match) => m.trace!.matchingActions.map((a) => a.seq).join(',')

/**
 * A client's copy of the matches, built by applying every message blindly: an apply adds its match (which must be
 * absent), an undo removes it (it must be held, with the same matching actions). Whatever else looks wrong is
 * recorded too: an undo of an irreversible block, a result without trace, an action the query does not match.
 */
class BlindCopy {
  readonly held = new Map<string, string>()
  readonly problems: string[] = []
  messages = 0
  undos = 0
  /** The cursor of the last message applied (apply or undo): where a resume continues. */
  cursor: string | undefined
  lastUndo = false
  private lib = 0

  constructor(readonly name: string) {}

  summary(): string {
    return `${this.name}: ${this.messages} messages (${this.undos} undos)`
  }

  problem(what: string): void {
    this.problems.push(`${this.name}: ${what}`)
  }

  apply(m: Match | null | undefined): void {
    this.messages++
    if (!m?.trace) return this.problem(`message ${this.messages} has no trace: ${JSON.stringify(m)}`)
    this.cursor = m.cursor
    this.lastUndo = m.undo === true
    const key = keyOf(m)
    const seqs = seqsOf(m)
    for (const a of m.trace.matchingActions)
      if (a.receiver !== 'eosio.token' || a.account !== 'eosio.token' || a.name !== 'transfer')
        this.problem(`${key}: matching action ${JSON.stringify(a)} does not match ${QUERY}`)
    if (m.undo) {
      this.undos++
      // An irreversible block is never undone: not one this undo calls irreversible, nor one below a LIB announced.
      if (m.isIrreversible)
        this.problem(
          `undo of ${key} (block ${m.block.num}) says isIrreversible (irreversibleBlockNum ${m.irreversibleBlockNum})`,
        )
      else if (m.block.num <= this.lib)
        this.problem(`undo of ${key} (block ${m.block.num}) at or below the LIB announced before (${this.lib})`)
      const held = this.held.get(key)
      if (held === undefined) this.problem(`undo of ${key} (block ${m.block.num}), which the client does not hold`)
      else if (held !== seqs) this.problem(`undo of ${key} with actions ${seqs}, applied with ${held}`)
      this.held.delete(key)
    } else {
      if (this.held.has(key)) this.problem(`duplicate apply of ${key} (block ${m.block.num})`)
      this.held.set(key, seqs)
    }
    this.lib = Math.max(this.lib, m.irreversibleBlockNum ?? 0)
  }
}

/** The first subscriber: the modern protocol, one subscription from block 1, never interrupted. */
function subscribeModern(t: TestContext, p: Platform, token: string, copy: BlindCopy): () => void {
  const client = modernGraphqlClient(t, p.api, token)
  return client.subscribe<{ searchTransactionsForward: Match }>(
    { query: SUBSCRIPTION, variables: { query: QUERY } },
    {
      next: (value) => {
        if (value.errors) copy.problem(`errors: ${JSON.stringify(value.errors)}`)
        else copy.apply(value.data?.searchTransactionsForward)
      },
      error: (error) => copy.problem(`subscription error: ${error instanceof Error ? error.message : String(error)}`),
      complete: () => copy.problem('the subscription completed'),
    },
  )
}

/**
 * The second subscriber: the legacy protocol, dropping its connection every few messages (abruptly or politely,
 * at random) and resuming, after a random pause, with the cursor of the last message it applied.
 */
class ResumingSubscriber {
  reconnects = 0
  /** Resumes with an undo's cursor, resumes whose first message was an undo, and resumes after a pause of seconds. */
  readonly resumes = { fromUndo: 0, intoUndo: 0, afterLongPause: 0 }
  private client: LegacyGraphqlClient | undefined
  private budget: number
  private stopped = false
  private pending: Promise<void> = Promise.resolve()

  constructor(
    private readonly t: TestContext,
    private readonly p: Platform,
    private readonly token: string,
    readonly copy: BlindCopy,
    private readonly random: () => number,
  ) {
    this.budget = this.nextBudget()
  }

  private nextBudget(): number {
    return 1 + Math.floor(this.random() * 6)
  }

  async start(): Promise<void> {
    const client = await LegacyGraphqlClient.connect(this.p.api, this.token, this.t)
    if (this.stopped) return client.terminate()
    this.client = client
    if (this.copy.lastUndo) this.resumes.fromUndo++
    let first = this.copy.cursor !== undefined
    client.onClose = (byClient) => {
      if (!byClient) this.copy.problem('the server closed the connection')
    }
    client.start(
      '1',
      SUBSCRIPTION,
      { query: QUERY, cursor: this.copy.cursor ?? null },
      {
        next: (payload: GraphqlResponse) => {
          if (this.client !== client) return
          if (payload.errors) return this.copy.problem(`errors: ${JSON.stringify(payload.errors)}`)
          const match = (payload.data as { searchTransactionsForward?: Match } | null)?.searchTransactionsForward
          if (first && match?.undo) this.resumes.intoUndo++
          first = false
          this.copy.apply(match)
          if (--this.budget === 0) this.drop()
        },
        error: (payload) => this.copy.problem(`error frame: ${JSON.stringify(payload)}`),
        complete: () => this.copy.problem('the subscription completed'),
      },
    )
  }

  /** Drops the connection now (messages already on the wire are never applied) and reconnects later. */
  private drop(): void {
    const client = this.client!
    this.client = undefined
    if (this.random() < 0.5) client.terminate()
    else {
      client.stop('1')
      client.close()
    }
    this.budget = this.nextBudget()
    // Mostly short pauses (forks happen meanwhile), now and then long enough for the cursor's block to pass LIB.
    const long = this.random() < 0.15
    const pause = long ? 3_000 + Math.floor(this.random() * 1_500) : Math.floor(this.random() * 400)
    if (long) this.resumes.afterLongPause++
    this.pending = this.pending
      .then(() => new Promise((resolve) => setTimeout(resolve, pause)))
      .then(() => {
        if (this.stopped) return
        this.reconnects++
        return this.start()
      })
      .catch((error: Error) => this.copy.problem(`reconnect failed: ${error.message}`))
  }

  summary(): string {
    return `${this.copy.summary()}, ${this.reconnects} reconnects ${JSON.stringify(this.resumes)}`
  }

  async stop(): Promise<void> {
    this.stopped = true
    await this.pending
    this.client?.terminate()
    this.client = undefined
  }
}

/**
 * ~40 transfers between the users, and forks of random depth (1–6) between them: the devchain replaces the last blocks
 * with a longer branch, re-including their transactions (or dropping the last pushed one now and then).
 */
async function transfersWithForks(p: Platform, random: () => number): Promise<{ pushed: string[]; forks: number }> {
  const chain = new APIClient({ url: p.chainApi })
  const pushed: string[] = []
  let forks = 0
  for (let i = 0; i < 40; i++) {
    const from = USERS[Math.floor(random() * 3)]
    const to = USERS.filter((u) => u !== from)[Math.floor(random() * 2)]
    const data = { from, to, quantity: '0.0001 EOS', memo: `g${i}` }
    pushed.push((await pushActions(chain, [{ account: 'eosio.token', name: 'transfer', actor: from, data }])).id)
    if (random() < 0.4) {
      await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 400)))
      const drop = random() < 0.3 ? [pushed.at(-1)!] : []
      const response = await fetch(`${p.chainApi}/v1/devchain/fork`, {
        method: 'POST',
        body: JSON.stringify({ depth: 1 + Math.floor(random() * 6), drop }),
        signal: AbortSignal.timeout(10_000),
      })
      if (response.status === 200) forks++
    }
  }
  // Quiet: no more changes; wait until the store is past the last fork.
  const head = (await chain.v1.chain.get_info()).head_block_num.toNumber()
  await waitIndexed(p.api, head + 5, 60_000)
  return { pushed, forks }
}

/** The final chain's matches, by paged GraphQL queries from block 1 (reversible blocks included). */
async function canonicalMatches(p: Platform, token: string): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  let cursor: string | null = null
  for (let page = 0; page < 100; page++) {
    const response: GraphqlResponse<{ searchTransactionsForward: { cursor: string | null; results: Match[] } }> =
      await graphqlQuery(p.api, token, PAGE, { query: QUERY, cursor })
    assert.equal(response.errors, undefined, `the paged query answered ${JSON.stringify(response.errors)}`)
    const { results, cursor: next } = response.data!.searchTransactionsForward
    for (const m of results) {
      assert.ok(!out.has(keyOf(m)), `the paged query returned ${keyOf(m)} twice`)
      out.set(keyOf(m), seqsOf(m))
    }
    if (!next) return out
    cursor = next
  }
  throw new Error('the paged query did not end within 100 pages')
}

/** The pushed transactions the final chain executed (/v0/transactions/:id). */
async function executedTransfers(p: Platform, token: string, pushed: string[]): Promise<string[]> {
  const executed: string[] = []
  for (const id of pushed) {
    const response = await fetch(`${p.api}/v0/transactions/${id}`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(10_000),
    })
    const lifecycle = (await response.json()) as { transaction_status?: string }
    if (lifecycle.transaction_status === 'executed') executed.push(id)
  }
  return executed.sort()
}

/** Why the paged query and the lifecycles disagree: each differing transfer, its lifecycle and the chain's block. */
async function explain(
  p: Platform,
  token: string,
  pushed: string[],
  canonical: Map<string, string>,
  executed: string[],
): Promise<string> {
  const chain = new APIClient({ url: p.chainApi })
  const found = new Map([...canonical.keys()].map((k) => [k.split('@')[0], k.split('@')[1]]))
  const lines: string[] = []
  for (const id of new Set([...found.keys(), ...executed])) {
    if (!pushed.includes(id) || found.has(id) === executed.includes(id)) continue
    const response = await fetch(`${p.api}/v0/transactions/${id}`, { headers: { authorization: `Bearer ${token}` } })
    const lifecycle = (await response.json()) as { transaction_status?: string; execution_block_header?: unknown }
    const blockId = found.get(id)
    let chainBlock = ''
    if (blockId) {
      const num = parseInt(blockId.slice(0, 8), 16)
      chainBlock = `; the chain's block ${num} is ${String((await chain.v1.chain.get_block(num)).id)}`
    }
    lines.push(
      `${id}: ${blockId ? `found by the query in block ${blockId}` : 'missing from the query'}, ` +
        `lifecycle ${lifecycle.transaction_status}${chainBlock}`,
    )
  }
  return lines.join('\n')
}

/**
 * Waits (45 s at most: the resuming copy may be seconds behind) until every copy holds the final chain's matches, then
 * asserts they do, without problems, and that those matches are the executed transfers.
 */
async function compare(p: Platform, token: string, pushed: string[], copies: BlindCopy[]): Promise<void> {
  const canonical = await canonicalMatches(p, token)
  const expected = JSON.stringify([...canonical].sort())
  const snapshot = (c: BlindCopy) => JSON.stringify([...c.held].sort())
  await pollUntil(
    async () => copies.every((c) => snapshot(c) === expected),
    (done) => done,
    45_000,
  ).catch(() => undefined)
  const executed = await executedTransfers(p, token, pushed)
  // The devchain's setup transfers (before the first push) match too: only the pushed ones are compared.
  const canonicalTrxs = [...canonical.keys()].map((k) => k.split('@')[0]).filter((id) => pushed.includes(id))
  canonicalTrxs.sort()
  if (JSON.stringify(canonicalTrxs) !== JSON.stringify(executed))
    assert.fail(
      `the paged query's transfers are not the executed ones: ${await explain(p, token, pushed, canonical, executed)}`,
    )
  // Each copy: no problem, and exactly the final chain's matches (trx@block → matching seqs), nothing missing or extra.
  for (const copy of copies) {
    const missing = [...canonical].filter(([key, seqs]) => copy.held.get(key) !== seqs).map(([key]) => key)
    const extra = [...copy.held].filter(([key, seqs]) => canonical.get(key) !== seqs).map(([key]) => key)
    const clean = { problems: [], missing: [], extra: [] }
    assert.deepEqual({ problems: copy.problems, missing, extra }, clean, `${copy.name} against the final chain`)
  }
}

test(`GraphQL subscriptions under random forks (seed ${SEED}): a blind subscriber (graphql-transport-ws) and one that drops and resumes by cursor (legacy graphql-ws) end with the final chain's transfers`, async (t) => {
  const p = await startPlatform(t, ['--lib-depth', '30'])
  const token = await issueToken(p, p.apiKey)
  const blind = new BlindCopy('blind subscriber')
  const unsubscribe = subscribeModern(t, p, token, blind)
  onCleanup(t, unsubscribe)
  const resuming = new ResumingSubscriber(t, p, token, new BlindCopy('resuming subscriber'), mulberry32(SEED ^ 0x5eed))
  onCleanup(t, () => resuming.stop())
  await resuming.start()

  const { pushed, forks } = await transfersWithForks(p, mulberry32(SEED))
  assert.ok(forks >= 5, `${forks} forks injected`)
  await compare(p, token, pushed, [blind, resuming.copy])
  await resuming.stop()
  t.diagnostic(`${forks} forks; ${blind.summary()}; ${resuming.summary()}`)
  assert.ok(blind.undos > 0, 'the forks withdrew at least one delivered transfer')
  assert.ok(resuming.reconnects >= 5, `${resuming.reconnects} reconnects`)
})

test(
  `GraphQL subscriptions under random forks on PostgreSQL (seed ${SEED}): a subscriber resuming by cursor ends with the final chain's transfers`,
  { skip: PG_SKIP_REASON },
  async (t) => {
    const store = await withPostgresDatabase(t)
    const p = await startPlatform(t, ['--lib-depth', '30', '--store', store])
    const token = await issueToken(p, p.apiKey)
    const resuming = new ResumingSubscriber(
      t,
      p,
      token,
      new BlindCopy('resuming subscriber'),
      mulberry32(SEED ^ 0x5eed),
    )
    onCleanup(t, () => resuming.stop())
    await resuming.start()

    const { pushed, forks } = await transfersWithForks(p, mulberry32(SEED + 1))
    assert.ok(forks >= 5, `${forks} forks injected`)
    await compare(p, token, pushed, [resuming.copy])
    await resuming.stop()
    t.diagnostic(`${forks} forks; ${resuming.summary()}`)
    assert.ok(resuming.reconnects >= 5, `${resuming.reconnects} reconnects`)
  },
)
