import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { issueToken, startPlatform } from '../_helpers/platform.ts'
import { assertNoLeak, send, type Answer } from '../_helpers/http.ts'
import { pollUntil } from '../_helpers/push.ts'
import { mulberry32 } from '../_helpers/random.ts'

/**
 * Random and mutated requests at `POST`/`GET /graphql` of a real `antler dev` with the demo workload: garbage bodies,
 * content types, huge and deeply nested queries, variables of the wrong type or out of range, bad cursors, search
 * queries and times. Every answer is HTTP 200 with a JSON `{data, errors}` whose errors have the documented shape,
 * no stack or path, and the server keeps serving. ANTLER_FUZZ_SEED=<n> replays a run.
 */

const REQUESTS = Number(process.env.ANTLER_FUZZ_REQUESTS ?? 1000)
const CODES = new Set(['Unauthenticated', 'InvalidArgument', 'NotFound', 'ResourceExhausted', 'Internal'])
const ERROR_KEYS = new Set(['message', 'locations', 'path', 'extensions'])
const EXTENSION_KEYS = new Set(['code', 'terminal', 'error_code', 'details', 'trace_id'])

/** Why an answer is not a GraphQL answer of the documented shape, or undefined when it is. */
function shapeProblem(answer: Answer): string | undefined {
  if (answer.status !== 200) return `HTTP ${answer.status}`
  const body = answer.body as { data?: unknown; errors?: unknown } | undefined
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'not a JSON object'
  if (Object.keys(body).some((k) => k !== 'data' && k !== 'errors')) return `keys ${Object.keys(body)}`
  if (!('data' in body) && !('errors' in body)) return 'neither data nor errors'
  if (body.errors === undefined) return body.data === null ? 'data null without errors' : undefined
  if (!Array.isArray(body.errors) || body.errors.length === 0) return 'errors is not a non-empty array'
  for (const e of body.errors as Record<string, unknown>[]) {
    if (Object.keys(e).some((k) => !ERROR_KEYS.has(k))) return `error keys ${Object.keys(e)}`
    if (typeof e.message !== 'string' || e.message === '') return 'error message'
    if (e.locations !== undefined && !Array.isArray(e.locations)) return 'locations'
    if (e.path !== undefined && !Array.isArray(e.path)) return 'path'
    const x = e.extensions as Record<string, unknown> | undefined
    if (!x || Object.keys(x).some((k) => !EXTENSION_KEYS.has(k))) return `extensions ${JSON.stringify(x)}`
    if (!CODES.has(x.code as string)) return `code ${String(x.code)}`
    if (typeof x.terminal !== 'boolean' || !/^[0-9a-f]{32}$/.test(String(x.trace_id))) return 'terminal / trace_id'
    if (x.error_code !== undefined && !/^[a-z0-9_]+$/.test(String(x.error_code))) return 'error_code'
    if (x.details !== undefined && (typeof x.details !== 'object' || x.details === null)) return 'details'
  }
  return undefined
}

const codesOf = (answer: Answer) =>
  ((answer.body as { errors?: { extensions?: { code?: string } }[] })?.errors ?? []).map((e) => e.extensions?.code)

class Fuzz {
  constructor(
    private readonly rand: () => number,
    private readonly cursor: string,
  ) {}
  int = (n: number) => Math.floor(this.rand() * n)
  pick = <T>(xs: readonly T[]): T => xs[this.int(xs.length)]
  chance = (p: number) => this.rand() < p

  mutate(text: string): string {
    const chars = [...text]
    for (let k = 0, n = 1 + this.int(3); k < n; k++) {
      const at = this.int(chars.length + 1)
      const junk = this.pick(['{', '}', '(', ')', '"', ':', '$', '!', '@', '#', '\\', '\u0000', '😀', ' ', '...'])
      if (this.chance(0.4)) chars.splice(at, 0, junk)
      else if (this.chance(0.5)) chars.splice(at, 1)
      else chars[at] = junk
    }
    return chars.join('')
  }

  badCursor(): string {
    const c = this.cursor
    const at = this.int(c.length)
    return this.pick([
      c,
      c.slice(0, at) + (c[at] === 'A' ? 'B' : 'A') + c.slice(at + 1),
      c.slice(0, at),
      c + c,
      randomBytes(this.int(80)).toString('base64url'),
      'garbage',
      '',
      '😀',
    ])
  }

  searchQuery(): string {
    return this.pick([
      'receiver:eosio.token',
      'action:transfer data.from:alice',
      'receiver:(',
      '(receiver:bob',
      'nosuch:x',
      'receiver:',
      '-',
      'data.to:bob OR',
      `${'('.repeat(50)}receiver:bob${')'.repeat(50)}`,
      'receiver:x '.repeat(200),
      '\u0000',
      '',
    ])
  }

  scalar(): unknown {
    return this.pick<unknown>([
      0,
      -1,
      1,
      2 ** 31,
      2 ** 32,
      -(2 ** 32),
      2 ** 53,
      1e308,
      -1e20,
      0.5,
      '99999999999999999999999',
      '-9223372036854775809',
      '18446744073709551616',
      '1e3',
      'x',
      '',
      null,
      true,
      [],
      [1],
      {},
      { a: 1 },
      'yesterday',
      '2020-02-30T00:00:00Z',
      '2019-01-01T00:00:00Z',
      this.badCursor(),
      this.searchQuery(),
    ])
  }

  /** A request document: a valid query with fuzzed arguments as variables, or something else entirely. */
  document(): { query: unknown; variables?: unknown; operationName?: unknown } {
    const variables = () =>
      this.chance(0.1)
        ? this.pick<unknown>(['x', 1, [], null, [{}]])
        : Object.fromEntries(
            ['q', 'cursor', 'limit', 'low', 'high', 'time', 'num', 'id', 'account'].map((k) => [
              k,
              this.chance(0.6) ? this.scalar() : undefined,
            ]),
          )
    const search = `query ($q: String!, $cursor: String, $limit: Int64, $low: Int64, $high: Int64) {
      searchTransactions${this.pick(['Forward', 'Backward'])}(query: $q, cursor: $cursor, limit: $limit,
        lowBlockNum: $low, highBlockNum: $high) { cursor results { cursor block { num } trace { id } } } }`
    const lookups = [
      'query ($time: Time!) { blockIDByTime(time: $time) { id num time } }',
      `query ($num: Uint32, $id: String) {
        block(num: $num, id: $id) { id transactionTraces(first: 2) { edges { cursor } } } }`,
      `query ($account: String!, $cursor: String, $limit: Int64) {
        getAccountHistoryActions(account: $account, cursor: $cursor, limit: $limit) { edges { cursor } } }`,
      'query ($account: String!) { blockIDAtAccountCreation(account: $account) { num } }',
    ]
    const aliases = (n: number) => Array.from({ length: n }, (_, i) => `a${i}: __typename`).join(' ')
    const nested = (depth: number) =>
      `{ searchTransactionsForward(query: "receiver:eosio", limit: 1) { results { trace { executedActions {
        ${'createdActions { '.repeat(depth)}seq${' }'.repeat(depth)} } } } } }`
    switch (this.int(12)) {
      case 0:
        return { query: this.mutate(search), variables: variables() }
      case 1:
        return { query: nested(1 + this.int(40)) }
      case 2:
        return { query: `{${'a{'.repeat(this.pick([100, 2000, 6000]))}${'}'.repeat(2)}` }
      case 3:
        return { query: `{ ${aliases(this.pick([10, 3000, 30_000]))} }` }
      case 4:
        return {
          query: this.pick<unknown>([123, null, [], {}, '', ' ', '{', '#', 'mutation { x }', 'subscription { x }']),
        }
      case 5:
        return { query: '{"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query"}]}' }
      case 6:
        return { query: this.pick(lookups), variables: variables(), operationName: this.chance(0.2) ? 'X' : undefined }
      default:
        return { query: search, variables: variables() }
    }
  }
}

test('fuzz: POST and GET /graphql with garbage of every kind: 200 with documented errors', async (t: TestContext) => {
  const p = await startPlatform(t, ['--workload', 'demo', '--lib-depth', '5', '--block-time', '50'])
  const token = await issueToken(p, p.apiKey)
  const auth = { authorization: `Bearer ${token}` }
  const post = (body: string | Buffer, headers: Record<string, string> = {}) =>
    send(`${p.api}/graphql`, { method: 'POST', body, headers: { ...auth, ...headers }, timeoutMs: 20_000 })
  const get = (query: string, headers: Record<string, string> = auth) =>
    send(`${p.api}/graphql?${query}`, { headers, timeoutMs: 20_000 })
  const cursorPage = await pollUntil(
    () =>
      post(
        JSON.stringify({ query: '{ searchTransactionsBackward(query: "receiver:eosio.token", limit: 1) { cursor } }' }),
      ),
    (a) =>
      String(
        (a.body as { data?: { searchTransactionsBackward?: { cursor?: string } } }).data?.searchTransactionsBackward
          ?.cursor ?? '',
      ) !== '',
    30_000,
  )
  const validCursor = (cursorPage.body as { data: { searchTransactionsBackward: { cursor: string } } }).data
    .searchTransactionsBackward.cursor

  const seed = Number(process.env.ANTLER_FUZZ_SEED ?? randomBytes(4).readUInt32LE(0))
  t.diagnostic(`fuzz seed ${seed} (rerun with ANTLER_FUZZ_SEED=${seed})`)
  const fuzz = new Fuzz(mulberry32(seed), validCursor)
  const contentTypes = [
    'application/json',
    'text/plain',
    'text/plain;charset=UTF-8',
    'application/graphql',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'text/html',
    'application/json; charset=latin1',
    '',
    '; ;',
  ]
  const request = (): Promise<Answer> => {
    const kind = fuzz.int(10)
    if (kind === 0) return post(randomBytes(fuzz.int(300)), { 'content-type': fuzz.pick(contentTypes) })
    if (kind === 1) {
      const text = JSON.stringify(fuzz.document())
      return post(text.slice(0, fuzz.int(text.length)), { 'content-type': fuzz.pick(contentTypes) })
    }
    if (kind === 2) {
      const { query, variables, operationName } = fuzz.document()
      const params = [`query=${encodeURIComponent(String(query))}`]
      if (variables !== undefined)
        params.push(`variables=${encodeURIComponent(fuzz.chance(0.2) ? '{x' : JSON.stringify(variables))}`)
      if (operationName !== undefined) params.push(`operationName=${encodeURIComponent(String(operationName))}`)
      // A URL over the server's 64 KiB header limit is refused before /graphql (431): those go as a POST.
      const url = params.join('&')
      if (url.length > 60_000) return post(JSON.stringify({ query, variables }))
      return get(fuzz.chance(0.1) ? '' : url)
    }
    if (kind === 3)
      return post(
        JSON.stringify(fuzz.pick<unknown>([[], null, 1, 'x', {}, { variables: {} }, [{ query: '{ __typename }' }]])),
      )
    if (kind === 4)
      return post(
        JSON.stringify(fuzz.document()),
        fuzz.pick<Record<string, string>>([{}, { authorization: 'Bearer garbage' }]),
      )
    const headers = fuzz.chance(0.3) ? { 'content-type': fuzz.pick(contentTypes) } : {}
    return post(JSON.stringify(fuzz.document()), headers as Record<string, string>)
  }

  const failures: string[] = []
  const internal: string[] = []
  const seen = new Map<string, number>()
  let next = 0
  const worker = async () => {
    while (next < REQUESTS) {
      const i = next++
      let answer: Answer
      try {
        answer = await request()
      } catch (error) {
        failures.push(`#${i}: no answer (${(error as Error).message})`)
        continue
      }
      const problem = shapeProblem(answer)
      const codes = codesOf(answer)
      const outcome = codes.length ? codes[0]! : 'data'
      seen.set(outcome, (seen.get(outcome) ?? 0) + 1)
      if (problem) failures.push(`#${i}: ${problem}: ${answer.text.slice(0, 200)}`)
      if (codes.includes('Internal')) internal.push(`#${i}: ${answer.text.slice(0, 200)}`)
      try {
        assertNoLeak(answer.text)
      } catch (error) {
        failures.push(`#${i}: ${(error as Error).message.slice(0, 200)}`)
      }
    }
  }
  await Promise.all(Array.from({ length: 6 }, worker))
  t.diagnostic(`answers: ${[...seen].map(([k, n]) => `${k} ×${n}`).join(', ')}`)

  await t.test(
    'every answer: 200, JSON {data, errors} of the documented shape, no stack; the server serves on',
    async () => {
      assert.deepEqual(failures.slice(0, 15), [], `seed ${seed}: ${failures.length} bad answers`)
      assert.ok((seen.get('InvalidArgument') ?? 0) > REQUESTS / 10, 'the fuzz reached InvalidArgument often')
      // Above the 5,000-token limit most of the fuzz's big documents are refused: a few percent run (1.8 % for seed
      // 2651202332, so the bound is 1 %: it says valid queries were reached, not how many).
      assert.ok((seen.get('data') ?? 0) > REQUESTS / 100, 'the fuzz reached valid queries too')
      assert.ok(seen.has('Unauthenticated'))
      assert.equal((await send(`${p.api}/healthz`)).status, 200)
      assert.equal(p.cli.child.exitCode, null, 'the platform still runs')
    },
  )

  await t.test('no bad input is answered as Internal, nor logged as an unexpected error', {}, () => {
    // What the server logged for them, by cause.
    const causes = new Map<string, number>()
    for (const line of p.cli
      .stderr()
      .split('\n')
      .filter((l) => l.includes('unexpected error'))) {
      const cause = String((JSON.parse(line) as { err?: { message?: string } }).err?.message).slice(0, 60)
      causes.set(cause, (causes.get(cause) ?? 0) + 1)
    }
    const logged = [...causes].map(([cause, n]) => `${cause} ×${n}`).join('; ')
    assert.deepEqual(internal.slice(0, 5), [], `seed ${seed}: ${internal.length} Internal answers; logged: ${logged}`)
    assert.equal(causes.size, 0, logged)
  })
})
