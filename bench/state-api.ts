import { join } from 'node:path'
import {
  AbiCache,
  BinaryWriter,
  symbolCodeToBigInt,
  symbolToBigInt,
  toHex,
  type CompiledAbi,
} from '../src/antelope/index.ts'
import type { BlockBatch, RowChangeRecord, Store } from '../src/store/index.ts'
import { seededRandom } from '../test/_helpers/store.ts'
import {
  describeLoops,
  describeRuns,
  keptStoresBench,
  measureTurns,
  startApiServer,
  type ApiServer,
  type BenchRun,
  type Configuration,
  type KeptStore,
  type KeptStoresOptions,
  type Measured,
} from './children.ts'
import type { LoadRequest } from './load-process.ts'
import { fmt, mean, median, type Figures } from './timing.ts'

export interface StateApiBenchOptions extends KeptStoresOptions {
  /** Length of the runs of the chain's own scope (answers that take seconds), when longer than `seconds`. */
  readonly slowSeconds: number
}

/**
 * What the 1,000,000-action bench chain (bench/ship-feed-process.ts: blocks of 20 eosio.token transfers and 5 rawdb
 * puts) does not hold, appended to the kept store once, through the store port, as blocks after its head: it has no
 * scope of about 1,000 decodable rows (eosio.token has 4 `accounts` scopes of one row and one `stat` row; rawdb's one
 * scope grows by 5 rows a block to 200,000 and rawdb's ABI declares no table, so its rows answer only as hex) and no
 * table of 1,500 scopes. The fixture writes eosio.token `accounts` rows, decoded with the token ABI the chain set at
 * boot: a holder of 1,000 tokens, a holder of 10, and 1,500 holders of EOS, every row rewritten in each of
 * FIXTURE_BLOCKS blocks (20 versions a row, as in the store-reads bench).
 */
const FIXTURE_BLOCKS = 20
const TOKEN = 'eosio.token'
const ACCOUNTS = 'accounts'
const BIG_SCOPE = 'bigholder'
const BIG_ROWS = 1000
const TEN_SCOPE = 'tenholder'
const TEN_ROWS = 10
const HOLDERS = 1500
/** The configurations `--smoke` keeps. */
const SMOKE = /-(head-false-1|ten|health)$/

/** `i` as `width` letters a–z, most significant first. */
const letters = (i: number, width: number, base: number) => {
  let out = ''
  for (let n = i, k = 0; k < width; k++, n = Math.floor(n / 26)) out = String.fromCharCode(base + (n % 26)) + out
  return out
}
/**
 * 12-character holder names (`holderaaaaaa`, …), as long as most real account names: the POST body of 1,500 of them is
 * about 21 KB.
 */
const holderName = (i: number) => `holder${letters(i, 6, 97)}`
/** Token symbol codes TAAA, TAAB, … */
const tokenCode = (i: number) => `T${letters(i, 3, 65)}`

function balanceRow(scope: string, code: string, amount: bigint): RowChangeRecord {
  const value = new BinaryWriter(16)
    .int64(amount)
    .uint64(symbolToBigInt(`4,${code}`))
    .finish()
  return { code: TOKEN, scope, table: ACCOUNTS, primaryKey: symbolCodeToBigInt(code), payer: scope, value }
}

const fixtureBlockId = (num: number) => num.toString(16).padStart(8, '0') + 'f1c7'.repeat(14)

interface Fixture {
  /** Head of the store (the last fixture block). */
  readonly head: number
  /** The first fixture block: every fixture row exists from here on. */
  readonly first: number
  /** True when this run wrote it. */
  readonly written: boolean
}

/** The fixture's blocks on top of the store's head, unless they are there already (one atomic `applyBlocks`). */
async function ensureFixture(store: Store): Promise<Fixture> {
  const position = await store.position()
  if (!position)
    throw new Error(
      'the store is empty: build it with `npm run bench -- --only ingest --ingest-actions 1000000 --keep-sqlite PATH --keep-postgres`',
    )
  const head = position.head.blockNum
  const present = (await store.tableRows({ code: TOKEN, table: ACCOUNTS, scope: BIG_SCOPE, blockNum: head })).length
  if (present === BIG_ROWS) {
    const first = head - FIXTURE_BLOCKS + 1
    const [atFirst, below] = await Promise.all([
      store.tableRows({ code: TOKEN, table: ACCOUNTS, scope: BIG_SCOPE, blockNum: first }),
      store.tableRows({ code: TOKEN, table: ACCOUNTS, scope: BIG_SCOPE, blockNum: first - 1 }),
    ])
    if (atFirst.length !== BIG_ROWS || below.length !== 0)
      throw new Error(`the store's state fixture is not the top ${FIXTURE_BLOCKS} blocks (blocks were added after it?)`)
    return { head, first, written: false }
  }
  if (present !== 0)
    throw new Error(`${TOKEN} ${ACCOUNTS} ${BIG_SCOPE} holds ${present} rows, neither 0 nor the fixture's ${BIG_ROWS}`)
  const headBlock = await store.blockByNum(head)
  if (!headBlock) throw new Error(`the store has no block ${head}, its head`)
  const batches: BlockBatch[] = []
  let previous = headBlock.id
  for (let b = 1; b <= FIXTURE_BLOCKS; b++) {
    const num = head + b
    const rows: RowChangeRecord[] = []
    for (let i = 0; i < BIG_ROWS; i++) rows.push(balanceRow(BIG_SCOPE, tokenCode(i), BigInt(10_000 * (i + 1) + b)))
    for (let i = 0; i < TEN_ROWS; i++) rows.push(balanceRow(TEN_SCOPE, tokenCode(i), BigInt(10_000 * (i + 1) + b)))
    for (let i = 0; i < HOLDERS; i++) rows.push(balanceRow(holderName(i), 'EOS', BigInt(10_000 * (i + 1) + b)))
    const id = fixtureBlockId(num)
    batches.push({
      block: {
        num,
        id,
        previous,
        timestampMs: headBlock.timestampMs + 500 * b,
        producer: 'eosio',
        transactionCount: 0,
        actionCount: 0,
      },
      transactions: [],
      actions: [],
      rows,
      abis: [],
      permissions: [],
      links: [],
    })
    previous = id
  }
  await store.applyBlocks(batches, head + FIXTURE_BLOCKS)
  return { head: head + FIXTURE_BLOCKS, first: head + 1, written: true }
}

/**
 * The chain's own largest scope, rawdb `bench` `rows` (5 new keys a block, one version each, so 200,000 rows at head),
 * at the heights where it held 950–1,050 rows: the same answer size as the fixture's, on a scope whose current keys
 * outnumber its rows at those heights 200 to 1. Rows by height are counted from the head rows' blocks (one version a
 * key, never erased, as the builder writes them); the pre-check of every request confirms each count against the API's
 * answer.
 */
async function chainScopeHeights(
  store: Store,
  head: number,
  random: () => number,
): Promise<{ heights: number[]; rowsAt: Map<number, number>; headRows: number } | undefined> {
  const rows = await store.tableRows({ code: 'rawdb', table: 'rows', scope: 'bench', blockNum: head })
  if (rows.length < 2000) return undefined
  const blocks = rows.map((r) => r.blockNum).sort((a, b) => a - b)
  const rowsAt = new Map<number, number>()
  for (let i = 0; i < blocks.length; i++) rowsAt.set(blocks[i], i + 1)
  const candidates = [...rowsAt].filter(([, n]) => n >= 950 && n <= 1050).map(([h]) => h)
  if (candidates.length === 0) return undefined
  const heights = Array.from({ length: 8 }, () => candidates[Math.floor(random() * candidates.length)])
  return { heights, rowsAt, headRows: rows.length }
}

/** One request of a load, with what its answer must be. */
interface Request extends LoadRequest {
  /** Rows the answer must hold (summed over tables for the multi-table reads). */
  readonly rows: number
  /** Tables the answer must hold (multi-table reads). */
  readonly tables?: number
  /** Rows as `json` (true) or `hex` (false); undefined for /healthz. */
  readonly json?: boolean
  /** Length of the answer checked before the runs: every answer under load must have it (the store does not change). */
  expectLength?: number
}

/**
 * Fetches each request once and checks its answer: 200, the row (and table) count, json or hex rows, no row that failed
 * to decode.
 */
async function verify(server: ApiServer, requests: readonly Request[]): Promise<void> {
  const seen = new Map<string, number>()
  for (const request of requests) {
    const id = `${request.method} ${request.path} ${request.body ?? ''}`
    const known = seen.get(id)
    if (known !== undefined) {
      request.expectLength = known
      continue
    }
    const { method, body, headers } = request
    const response = await fetch(server.api + request.path, {
      method,
      body,
      headers,
      signal: AbortSignal.timeout(60_000),
    })
    const text = await response.text()
    const what = `${server.label} ${request.method} ${request.path.slice(0, 160)}`
    if (response.status !== 200) throw new Error(`${what}: HTTP ${response.status} ${text.slice(0, 300)}`)
    if (request.json !== undefined) {
      const answer = JSON.parse(text) as {
        rows?: Record<string, unknown>[]
        tables?: { rows: Record<string, unknown>[] }[]
      }
      const rows = answer.tables ? answer.tables.flatMap((t) => t.rows) : (answer.rows ?? [])
      if (request.tables !== undefined && answer.tables?.length !== request.tables)
        throw new Error(`${what}: ${answer.tables?.length} tables, expected ${request.tables}`)
      if (rows.length !== request.rows) throw new Error(`${what}: ${rows.length} rows, expected ${request.rows}`)
      const field = request.json ? 'json' : 'hex'
      const wrong = rows.find((r) => r[field] === undefined || r.error !== undefined)
      if (wrong)
        throw new Error(`${what}: a row without ${field} or with an error: ${JSON.stringify(wrong).slice(0, 300)}`)
    }
    request.expectLength = text.length
    seen.set(id, text.length)
  }
}

/** A store opened in this process for the in-process limit. */
interface Local {
  readonly store: Store
  readonly abi: CompiledAbi
  readonly rowType: string
}

/**
 * The limit of one request: the same store read in one snapshot, rows decoded with the ABI (json) or as hex, in this
 * process; returns the rows.
 */
type LocalRead = () => Promise<number>

function localTableRead(
  local: Local,
  args: { code: string; scope: string; table: string; blockNum: number; json: boolean },
): LocalRead {
  return () =>
    local.store.snapshot(async (reader) => {
      const rows = await reader.tableRows({
        code: args.code,
        table: args.table,
        scope: args.scope,
        blockNum: args.blockNum,
      })
      const out = rows.map((r) => (args.json ? local.abi.decode(local.rowType, r.value) : toHex(r.value)))
      return out.length
    })
}

const meanRows = (requests: readonly Request[]) => requests.reduce((sum, r) => sum + r.rows, 0) / requests.length

/**
 * The API reads of `issue 15` against `antler api` on a kept bench store (SQLite, PostgreSQL or both at once), auth
 * off, each server in a process of its own, loaded by autocannon in another: (1) `/v0/state/table` for a 1,000-row
 * scope at head and at a seeded list of past heights, json true and false, at 1 connection (the latency of a request)
 * and 4, next to the same store read and decode in this process (the limit); the chain's own largest scope at heights
 * where it held about 1,000 rows; (2) `/v0/state/tables/scopes` for 1,500 scopes (POST form); (3) a 10-row scope and
 * `/healthz` at 32 connections. In each group every configuration is warmed up, then they take turns (`rounds` runs of
 * `seconds`, the order rotated each round, both adapters in the same rotation), and every answer is checked (status and
 * length, after a first full check of each distinct request: row count, json or hex).
 */
export function benchStateApi(options: StateApiBenchOptions): Promise<Figures> {
  return keptStoresBench('state-api', options, (run, adapters, readOnly) => measure(options, run, adapters, readOnly))
}

async function measure(
  options: StateApiBenchOptions,
  run: BenchRun,
  adapters: KeptStore[],
  readOnly: (store: KeptStore) => Promise<Store>,
) {
  const { dir, children, figures } = run
  const groups: { title: string; configurations: Configuration<Request>[] }[] = [
    { title: '1,000 rows, 1 connection', configurations: [] },
    { title: '1,000 rows, 4 connections', configurations: [] },
    { title: '1,500 scopes, 1 connection', configurations: [] },
    { title: '32 connections', configurations: [] },
  ]
  const bars: { label: string; keys: string[] }[] = []

  for (const adapter of adapters) {
    const writer = await adapter.open(false)
    let fixture: Fixture
    let chainScope: Awaited<ReturnType<typeof chainScopeHeights>>
    try {
      fixture = await ensureFixture(writer)
      chainScope = await chainScopeHeights(writer, fixture.head, seededRandom(15))
    } finally {
      await writer.close()
    }
    figures[`${adapter.label}: store head, state fixture`] =
      `${fixture.head}; fixture blocks ${fixture.first}–${fixture.head} (${fixture.written ? 'written by this run' : 'already there'})`

    const store = await readOnly(adapter)
    const abis = new AbiCache()
    const stored = await store.abi({ account: TOKEN, blockNum: fixture.head })
    const compiled = stored && abis.fromBinary(stored.abi)
    if (!compiled?.ok) throw new Error(`${adapter.label}: no ${TOKEN} ABI at ${fixture.head}`)
    const rowType = compiled.value.abi.tables.find((t) => t.name.toString() === ACCOUNTS)!.type
    const local: Local = { store, abi: compiled.value, rowType }

    const server = await startApiServer(children, adapter.label, adapter.storeArgs, join(dir, `${adapter.label}.log`))
    const random = seededRandom(15)
    const pastHeights = Array.from(
      { length: 16 },
      () => fixture.first + Math.floor(random() * (fixture.head - fixture.first)),
    )
    figures[`${adapter.label}: past heights (seeded)`] = pastHeights.join(' ')

    const table = (
      scope: string,
      blockNum: number | undefined,
      json: boolean,
      rows: number,
      account = TOKEN,
      tbl = ACCOUNTS,
    ): Request => ({
      method: 'GET',
      path: `/v0/state/table?account=${account}&scope=${scope}&table=${tbl}&json=${json}${tbl === ACCOUNTS ? '&key_type=symbol_code' : ''}${blockNum === undefined ? '' : `&block_num=${blockNum}`}`,
      rows,
      json,
    })
    const big = (at: 'head' | 'past', json: boolean) => ({
      requests:
        at === 'head'
          ? [table(BIG_SCOPE, undefined, json, BIG_ROWS)]
          : pastHeights.map((h) => table(BIG_SCOPE, h, json, BIG_ROWS)),
      local: (at === 'head' ? [fixture.head] : pastHeights).map((blockNum) =>
        localTableRead(local, { code: TOKEN, table: ACCOUNTS, scope: BIG_SCOPE, blockNum, json }),
      ),
    })
    const keys: string[] = []
    for (const connections of [1, 4]) {
      for (const at of ['head', 'past'] as const) {
        for (const json of [false, true]) {
          const key = `${adapter.label}-${at}-${json}-${connections}`
          if (connections === 1) keys.push(key)
          const { requests, local: reads } = big(at, json)
          groups[connections === 1 ? 0 : 1].configurations.push({
            key,
            name: `${adapter.label}: /v0/state/table, 1,000 rows ${at === 'head' ? 'at head' : 'at 16 seeded past heights'}, json=${json}, ${connections} connection${connections > 1 ? 's' : ''}`,
            server,
            requests,
            connections,
            ...(connections === 1 ? { local: reads } : {}),
          })
        }
      }
    }
    bars.push({ label: adapter.label, keys })
    if (chainScope) {
      const requests = chainScope.heights.map((h) =>
        table('bench', h, false, chainScope.rowsAt.get(h)!, 'rawdb', 'rows'),
      )
      groups[0].configurations.push({
        key: `${adapter.label}-chain`,
        name:
          `${adapter.label}: /v0/state/table, the chain's rawdb bench rows at 8 seeded heights where it held ` +
          `${fmt(Math.min(...requests.map((r) => r.rows)))}–${fmt(Math.max(...requests.map((r) => r.rows)))} rows ` +
          `(${fmt(chainScope.headRows)} at head), json=false, 1 connection`,
        server,
        requests,
        connections: 1,
        seconds: Math.max(options.seconds, options.slowSeconds),
        local: chainScope.heights.map((blockNum) =>
          localTableRead(local, { code: 'rawdb', table: 'rows', scope: 'bench', blockNum, json: false }),
        ),
      })
    }
    const scopesBody = (blockNum: number | undefined) =>
      new URLSearchParams({
        account: TOKEN,
        table: ACCOUNTS,
        json: 'true',
        key_type: 'symbol_code',
        scopes: Array.from({ length: HOLDERS }, (_, i) => holderName(i)).join('|'),
        ...(blockNum === undefined ? {} : { block_num: String(blockNum) }),
      }).toString()
    const scopes = (blockNum: number | undefined): Request => ({
      method: 'POST',
      path: '/v0/state/tables/scopes',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: scopesBody(blockNum),
      rows: HOLDERS,
      tables: HOLDERS,
      json: true,
    })
    groups[2].configurations.push(
      {
        key: `${adapter.label}-scopes-head`,
        name: `${adapter.label}: POST /v0/state/tables/scopes, 1,500 scopes of one row at head, json=true, 1 connection`,
        server,
        requests: [scopes(undefined)],
        connections: 1,
      },
      {
        key: `${adapter.label}-scopes-past`,
        name: `${adapter.label}: POST /v0/state/tables/scopes, 1,500 scopes of one row at 16 seeded past heights, json=true, 1 connection`,
        server,
        requests: pastHeights.map(scopes),
        connections: 1,
      },
    )
    groups[3].configurations.push(
      {
        key: `${adapter.label}-ten`,
        name: `${adapter.label}: /v0/state/table, 10 rows at head, json=true, 32 connections`,
        server,
        requests: [table(TEN_SCOPE, undefined, true, TEN_ROWS)],
        connections: 32,
      },
      {
        key: `${adapter.label}-health`,
        name: `${adapter.label}: /healthz, 32 connections`,
        server,
        requests: [{ path: '/healthz', rows: 0 }],
        connections: 32,
      },
    )
    for (const group of groups) {
      if (options.smoke) group.configurations = group.configurations.filter((c) => SMOKE.test(c.key))
      for (const c of group.configurations) if (c.server === server) await verify(server, c.requests)
    }
  }
  figures['every distinct request checked before the runs'] =
    '200, row count (and 1,500 tables), json or hex in every row, no decoding error; under load every answer must be 200 with that length'

  const measured = new Map<string, Measured>()
  for (const group of groups) {
    const configurations = group.configurations
    if (configurations.length === 0) continue
    console.error(`  state-api bench: ${group.title}: ${configurations.length} configurations, warming up`)
    for (const [key, m] of await measureTurns(run, configurations, options)) measured.set(key, m)
    for (const c of configurations) {
      const m = measured.get(c.key)!
      const rows = meanRows(c.requests)
      const reqs = mean(m.http.map((r) => r.perSecond))
      figures[c.name] = describeRuns(m.http, rows > 0 ? ` = ${fmt(reqs * rows)} rows/s` : '')
      if (m.local.length > 0) {
        const limit = mean(m.local.map((r) => r.perSecond))
        const decode = c.requests[0].json ? 'ABI decode' : 'hex'
        figures[`${c.name} · in-process limit (snapshot + tableRows + ${decode}, no HTTP, one at a time)`] =
          describeLoops(m.local, 'rows/s')
        figures[`${c.name} · HTTP / in-process, rows/s`] =
          `${((reqs * rows) / limit).toFixed(2)} (round by round: ` +
          `${m.http.map((r, i) => ((r.perSecond * rows) / m.local[i].perSecond).toFixed(2)).join(', ')})`
      }
    }
  }
  for (const { label, keys } of bars) {
    const worst = Math.max(
      ...keys.filter((k) => measured.has(k)).map((k) => median(measured.get(k)!.http.map((r) => r.p99))),
    )
    figures[
      `${label}: issue 15 bar, p99 < 20 ms for 1,000 rows at head and past heights, json true and false (1 connection, median p99 of the runs)`
    ] = `${worst < 20 ? 'HOLDS' : 'DOES NOT HOLD'} (worst ${worst} ms)`
  }
  const ratio = (a: string, b: string) => {
    const [ma, mb] = [measured.get(a), measured.get(b)]
    return ma && mb ? (mean(ma.http.map((r) => r.perSecond)) / mean(mb.http.map((r) => r.perSecond))).toFixed(2) : 'n/a'
  }
  for (const adapter of adapters)
    figures[`${adapter.label}: 10-row scope / /healthz, req/s at 32 connections`] = ratio(
      `${adapter.label}-ten`,
      `${adapter.label}-health`,
    )
}
