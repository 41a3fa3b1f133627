import { join } from 'node:path'
import type { Store } from '../src/store/index.ts'
import { seededRandom } from '../test/_helpers/store.ts'
import {
  describeRuns,
  keptStoresBench,
  measureTurns,
  startApiServer,
  type ApiServer,
  type BenchRun,
  type Configuration,
  type KeptStore,
  type KeptStoresOptions,
} from './children.ts'
import type { LoadRequest } from './load-process.ts'
import { mean, median, type Figures } from './timing.ts'

/** Issue 35's bars: account get_actions p99 through HTTP (ms); Hyperion's throughput over the dfuse route's. */
const BAR_P99_MS = 25
const BAR_RATIO = 0.5
/** The bench chain's users (src/devchain/builder.ts: eosio.token transfers alice→bob→carol→alice). */
const USERS = ['alice', 'bob', 'carol'] as const
/**
 * Hyperion's public routes are limited per IP (1,000 calls a minute by default): lifted, the figures measure cost, not
 * refusals. `antler api` takes it after its store arguments.
 */
const LIFTED_PUBLIC_LIMIT = [
  '--rate-limits',
  JSON.stringify({ publicCallsPerIp: { limit: 100_000_000, windowMs: 60_000 } }),
]

/** One request and what its answer must show: the transaction ids it lists, in order (checked before the runs). */
interface Request extends LoadRequest {
  readonly idsOf: (answer: unknown) => string[]
}

/** A question asked both ways: Hyperion's route and the dfuse route, on one seeded variant. */
interface Variant {
  readonly hyperion: Request
  readonly dfuse: Request
}

interface Question {
  readonly key: string
  readonly describe: string
  /** `count` variants, from a seeded random and the store (LIB: the highest block both routes answer alike). */
  variants(random: () => number, store: Store, lib: number, count: number): Promise<Variant[]>
}

interface HyperionAction {
  readonly trx_id: string
  readonly block_num: number
  readonly act: { account: string; name: string; authorization: { actor: string }[]; data: Record<string, unknown> }
  readonly receipts: { receiver: string }[]
}

/**
 * The trx_id of each action of a get_actions answer, after checking that each is `account`'s (a receiver of one of its
 * receipts or an authorizer), at or below `before`, and passes `also`.
 */
const actionsOf =
  (account: string, before: number, also: (a: HyperionAction) => boolean = () => true) =>
  (answer: unknown): string[] => {
    const actions = (answer as { actions?: HyperionAction[] }).actions ?? []
    for (const a of actions) {
      const mine =
        a.receipts.some((r) => r.receiver === account) || a.act.authorization.some((x) => x.actor === account)
      if (!mine || a.block_num > before || !also(a))
        throw new Error(`an action that does not answer the question: ${JSON.stringify(a).slice(0, 300)}`)
    }
    return actions.map((a) => a.trx_id)
  }

/** The transaction ids of a dfuse search page. */
const searchIds = (answer: unknown) =>
  ((answer as { transactions: { lifecycle: { id: string } }[] | null }).transactions ?? []).map((t) => t.lifecycle.id)

/**
 * The questions of issue 35's bench, each as Hyperion asks it and as the dfuse search route answers it: an account's
 * latest 100 actions below a seeded block (`before` ↔ `start_block`, descending), the same without Hyperion's `total`
 * (`track=false`: dfuse counts nothing), with a `filter`, with a `transfer.to` free filter, and one transaction by
 * id. On the bench chain each transaction holds one action, so a page of 100 actions and a page of 100 transactions
 * list the same transactions.
 */
const QUESTIONS: readonly Question[] = [
  {
    key: 'account',
    describe: 'account get_actions (account=<user>&limit=100&before=<seeded block>)',
    variants: async (random, _store, lib, count) =>
      seededUsers(random, lib, count).map(({ user, before }) => ({
        hyperion: getActions({ account: user, before }, actionsOf(user, before)),
        dfuse: search(`(receiver:${user} OR auth:${user})`, before),
      })),
  },
  {
    // dfuse's search counts nothing: Hyperion's default `total` (counted up to 10,000) is a cost of its own.
    key: 'account-untracked',
    describe: 'account get_actions without its total (the same with track=false)',
    variants: async (random, _store, lib, count) =>
      seededUsers(random, lib, count).map(({ user, before }) => ({
        hyperion: getActions({ account: user, before, track: 'false' }, actionsOf(user, before)),
        dfuse: search(`(receiver:${user} OR auth:${user})`, before),
      })),
  },
  {
    key: 'filter',
    describe: 'get_actions with filter=eosio.token:transfer',
    variants: async (random, _store, lib, count) =>
      seededUsers(random, lib, count).map(({ user, before }) => ({
        hyperion: getActions(
          { account: user, before, filter: 'eosio.token:transfer' },
          actionsOf(user, before, (a) => a.act.account === 'eosio.token' && a.act.name === 'transfer'),
        ),
        dfuse: search(`(receiver:${user} OR auth:${user}) account:eosio.token action:transfer`, before),
      })),
  },
  {
    key: 'transfer-to',
    describe: 'get_actions with transfer.to=<the next user>',
    variants: async (random, _store, lib, count) =>
      seededUsers(random, lib, count).map(({ user, before, next }) => ({
        hyperion: getActions(
          { account: user, before, 'transfer.to': next },
          actionsOf(user, before, (a) => a.act.name === 'transfer' && a.act.data.to === next),
        ),
        dfuse: search(`(receiver:${user} OR auth:${user}) action:transfer data.to:${next}`, before),
      })),
  },
  {
    key: 'transaction',
    describe: 'get_transaction (id=<a seeded transaction of the store>)',
    variants: async (random, store, lib, count) => {
      const blocks = Array.from({ length: count }, () => 1 + Math.floor(random() * lib))
      const receivers = await store.actionReceiversOfBlocks(blocks)
      return blocks.map((num) => {
        const trxIds = [...new Set((receivers.get(num) ?? []).map((r) => r.trxId))]
        if (!trxIds.length) throw new Error(`block ${num} holds no transaction`)
        const id = trxIds[Math.floor(random() * trxIds.length)]
        const transaction = (answer: unknown) => {
          const { executed, actions } = answer as { executed?: boolean; actions?: { trx_id: string }[] }
          if (!executed || !actions?.length || actions.some((a) => a.trx_id !== id))
            throw new Error(`not the executed transaction ${id}`)
          return [id]
        }
        return {
          hyperion: { path: `/v2/history/get_transaction?id=${id}`, idsOf: transaction },
          dfuse: { path: `/v0/transactions/${id}`, idsOf: (answer) => [(answer as { id: string }).id] },
        }
      })
    },
  },
]

/** Seeded (user, block) pairs, blocks in the upper half of the chain up to LIB; `next` is whom `user` pays. */
function seededUsers(random: () => number, lib: number, count: number) {
  return Array.from({ length: count }, (_, i) => ({
    user: USERS[i % USERS.length],
    next: USERS[(i + 1) % USERS.length],
    before: Math.ceil(lib / 2) + Math.floor((random() * lib) / 2),
  }))
}

function getActions(params: Record<string, string | number>, idsOf: Request['idsOf']): Request {
  const query = new URLSearchParams({
    limit: '100',
    ...Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)])),
  })
  return { path: `/v2/history/get_actions?${query.toString()}`, idsOf }
}

function search(q: string, startBlock: number): Request {
  const query = new URLSearchParams({ q, limit: '100', sort: 'desc', start_block: String(startBlock) })
  return { path: `/v0/search/transactions?${query.toString()}`, idsOf: searchIds }
}

/**
 * Fetches each variant both ways once: both answers 200 and each answering the question (Hyperion's actions are the
 * account's, filtered as asked; the transaction is the one asked), else the bench stops: it must not time an error.
 * Both must list the same transactions in the same order, at least one: a difference is a failure of the bench, which
 * still times the routes. dfuse's answers do not change: their length is then checked on every answer under load
 * (Hyperion's carry `query_time_ms`: only their status is).
 */
async function verify(server: ApiServer, variants: readonly Variant[], failures: string[]): Promise<Variant[]> {
  const fetchIds = async (request: Request) => {
    const response = await fetch(server.api + request.path, { signal: AbortSignal.timeout(60_000) })
    const text = await response.text()
    const what = `${server.label} ${request.path}`
    if (response.status !== 200) throw new Error(`${what}: HTTP ${response.status} ${text.slice(0, 300)}`)
    try {
      return { ids: request.idsOf(JSON.parse(text)), length: text.length }
    } catch (error) {
      throw new Error(`${what}: ${(error as Error).message}`, { cause: error })
    }
  }
  const out: Variant[] = []
  const differences: string[] = []
  for (const v of variants) {
    const [hyperion, dfuse] = [await fetchIds(v.hyperion), await fetchIds(v.dfuse)]
    const row = hyperion.ids.findIndex((id, i) => id !== dfuse.ids[i])
    if (!hyperion.ids.length || row >= 0 || hyperion.ids.length !== dfuse.ids.length)
      differences.push(
        `${v.hyperion.path} (${hyperion.ids.length} transactions) and ${v.dfuse.path} (${dfuse.ids.length})` +
          (row >= 0 ? `, at row ${row + 1}: ${hyperion.ids[row]} against ${dfuse.ids[row]}` : ''),
      )
    out.push({ hyperion: v.hyperion, dfuse: { ...v.dfuse, expectLength: dfuse.length } })
  }
  if (differences.length)
    failures.push(
      `${server.label}: ${differences.length} of ${variants.length} variants list other transactions both ways, first ${differences[0]}`,
    )
  return out
}

/**
 * Issue 35's bench: Hyperion's get_actions (an account's 100 latest actions below a block; with a `filter`; with a
 * `transfer.to` filter) and get_transaction on `antler api --no-auth` over a kept 1,000,000-action bench store (SQLite,
 * PostgreSQL or both, each server in its own process), each next to the dfuse search route asked the same question in
 * the same run (`(receiver:X OR auth:X) …`, limit 100, descending from the same block; `/v0/transactions/:id`), 1
 * connection (the latency of a request), `variants` seeded variants cycled (`--hyperion-variants`: irreversible
 * pages are kept by both routes, so a few variants measure kept answers, many the work of a page). Every variant is
 * first fetched both ways and checked (see verify()). Configurations are warmed up, then take turns (`rounds` runs of
 * `seconds`). Under `--smoke` every question is checked on 2 variants, and only the account question timed.
 */
export function benchHyperion(options: KeptStoresOptions & { readonly variants: number }): Promise<Figures> {
  return keptStoresBench('hyperion', options, (run, adapters, readOnly) => measure(options, run, adapters, readOnly))
}

async function measure(
  options: KeptStoresOptions & { readonly variants: number },
  run: BenchRun,
  adapters: KeptStore[],
  readOnly: (store: KeptStore) => Promise<Store>,
): Promise<void> {
  const { dir, children, figures } = run
  const pairs: { adapter: string; question: Question; hyperion: Configuration; dfuse: Configuration }[] = []
  for (const adapter of adapters) {
    const store = await readOnly(adapter)
    const position = await store.position()
    if (!position) throw new Error(`${adapter.label}: the store is empty`)
    const server = await startApiServer(
      children,
      adapter.label,
      [...adapter.storeArgs, ...LIFTED_PUBLIC_LIMIT],
      join(dir, `${adapter.label}.log`),
    )
    figures[`${adapter.label}: store LIB`] = position.lib
    const random = seededRandom(35)
    for (const question of QUESTIONS) {
      const variants = await verify(
        server,
        await question.variants(random, store, position.lib, options.smoke ? 2 : options.variants),
        run.failures,
      )
      if (options.smoke && question.key !== 'account') continue // checked, not timed
      const configuration = (side: 'hyperion' | 'dfuse'): Configuration => ({
        key: `${adapter.label}-${question.key}-${side}`,
        name: `${adapter.label}: ${question.describe} · ${side === 'hyperion' ? 'Hyperion' : 'dfuse'}`,
        server,
        requests: variants.map((v) => v[side]),
        connections: 1,
      })
      pairs.push({
        adapter: adapter.label,
        question,
        hyperion: configuration('hyperion'),
        dfuse: configuration('dfuse'),
      })
    }
  }
  figures['every variant checked before the runs'] =
    "both 200, Hyperion's actions the account's (filtered as asked) or the transaction asked; the same transactions in the same order both ways (else a failure); under load every answer 200 (dfuse's of that length)"

  const configurations = pairs.flatMap((p) => [p.hyperion, p.dfuse])
  console.error(`  hyperion bench: ${configurations.length} configurations, warming up`)
  const measured = await measureTurns(run, configurations, options)
  const p99 = (c: Configuration) => median(measured.get(c.key)!.http.map((r) => r.p99))
  const rate = (c: Configuration) => mean(measured.get(c.key)!.http.map((r) => r.perSecond))
  for (const { adapter, question, hyperion, dfuse } of pairs) {
    figures[`${hyperion.name} · HTTP`] = describeRuns(measured.get(hyperion.key)!.http)
    figures[`${dfuse.name} · HTTP`] = describeRuns(measured.get(dfuse.key)!.http)
    const ratio = rate(hyperion) / rate(dfuse)
    figures[`${adapter}: ${question.key}, Hyperion / dfuse throughput (bar ≥ ${BAR_RATIO})`] =
      `${ratio >= BAR_RATIO ? 'HOLDS' : 'DOES NOT HOLD'} (${ratio.toFixed(2)}; p99 ${p99(hyperion)} ms against ${p99(dfuse)} ms)`
    if (question.key === 'account')
      figures[
        `${adapter}: issue 35 bar, account get_actions p99 ≤ ${BAR_P99_MS} ms through HTTP (median p99 of the runs)`
      ] = `${p99(hyperion) <= BAR_P99_MS ? 'HOLDS' : 'DOES NOT HOLD'} (${p99(hyperion)} ms)`
  }
}
