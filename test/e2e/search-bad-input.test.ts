import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { isStandardError, issueToken, startPlatform } from '../_helpers/platform.ts'
import { assertNoLeak, expectError, send, type Answer, type ErrorBody } from '../_helpers/http.ts'
import { mulberry32 } from '../_helpers/random.ts'

/**
 * Random and mutated queries and parameters at `GET /v0/search/transactions` of a real `antler dev`
 * with a demo workload running: every answer is a 200 search answer or the standard error object
 * with a 4xx status and one of the search's codes, within the request timeout (no hang), with no
 * stack or path, and the server keeps serving without logging an unexpected error. The seed is
 * printed; ANTLER_FUZZ_SEED=<n> replays a run.
 */

const REQUESTS = Number(process.env.ANTLER_FUZZ_REQUESTS ?? 3000)
const EXPECTED_CODES = new Set(['request_validation_error', 'bad_request_error'])

const FIELDS = [
  'receiver',
  'account',
  'action',
  'auth',
  'scheduled',
  'notif',
  'input',
  'data.from',
  'data.to',
  'data.quantity',
  'data.a.b.c',
  'ram.consumed',
  'ram.released',
  'db.table',
  'db.key',
  'creator',
  'parent.receiver',
  'parent.account',
  'parent.action',
  'trx_id',
  'status',
  'nosuch',
  'data',
  'data.',
  '.x',
  'Receiver',
]
const VALUES = [
  'eosio',
  'eosio.token',
  'alice',
  'bob',
  'transfer',
  'true',
  'false',
  'executed',
  'soft_fail',
  '"1.0000 EOS"',
  "'a b'",
  '"',
  "'",
  '',
  'accounts/alice',
  'a'.repeat(300),
  '0'.repeat(64),
  '😀',
  '\u0000',
  '%',
  'a:b',
  '-x',
]
const JUNK = [
  '(',
  ')',
  '-',
  ' OR ',
  ' AND ',
  ' || ',
  ' && ',
  ':',
  '"',
  "'",
  ' ',
  '\t',
  '\n',
  '!',
  '=',
  '<',
  '>',
  '\\',
  '😀',
  '\uffff',
  '\u0000',
  '%',
  '&',
  '#',
  '+',
]

class Fuzz {
  constructor(private readonly rand: () => number) {}

  int(n: number): number {
    return Math.floor(this.rand() * n)
  }

  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]
  }

  /** A query from the grammar (terms, negation, AND/OR, nested parentheses), usually valid. */
  query(depth = 0): string {
    const n = 1 + this.int(3)
    const parts: string[] = []
    for (let i = 0; i < n; i++) {
      const neg = this.int(5) === 0 ? '-' : ''
      if (depth < 4 && this.int(4) === 0) parts.push(`${neg}(${this.query(depth + 1)})`)
      else parts.push(`${neg}${this.pick(FIELDS)}:${this.pick(VALUES)}`)
      if (i < n - 1) parts.push(this.pick([' ', ' ', ' OR ', ' AND ', ' || ', ' && ']))
    }
    return parts.join('')
  }

  /** A query mutated at a few characters: inserted, deleted or replaced by junk. */
  mutate(query: string): string {
    const chars = [...query]
    for (let k = 0, n = 1 + this.int(4); k < n; k++) {
      const at = this.int(chars.length + 1)
      const op = this.int(3)
      if (op === 0) chars.splice(at, 0, this.pick(JUNK))
      else if (op === 1) chars.splice(at, 1)
      else chars[at] = this.pick(JUNK)
    }
    return chars.join('')
  }

  q(): string {
    switch (this.int(8)) {
      case 0:
        return this.mutate(this.query())
      case 1:
        return Array.from({ length: this.int(40) }, () => this.pick(JUNK)).join('')
      case 2:
        return this.pick([
          '(',
          ')',
          '()',
          '-',
          '--a:b',
          'a:',
          ':b',
          'OR',
          'receiver:bob OR',
          '(receiver:bob',
          'receiver:bob)',
          'status:executed',
          '-status:executed',
          '(status:executed OR receiver:bob)',
          `${'('.repeat(40)}receiver:bob${')'.repeat(40)}`,
          Array.from({ length: 70 }, () => 'receiver:bob').join(' '),
          'receiver:'.repeat(300),
        ])
      case 3:
        return Buffer.from(Array.from({ length: this.int(64) }, () => this.int(256))).toString()
      default:
        return this.query()
    }
  }

  /** Mostly a value the parameter takes (`valid`), else anything number-like. */
  number(valid: readonly string[]): string {
    if (this.int(6) !== 0) return this.pick(valid)
    return this.pick([
      '0',
      '1',
      '-1',
      '5',
      '25',
      '100',
      '101',
      '-4294967295',
      '4294967295',
      '4294967296',
      '2147483647',
      '99999999999999',
      '1e3',
      '0x10',
      '1.5',
      ' 1',
      '',
      '-',
      '+1',
      '007',
      'abc',
      'NaN',
      'Infinity',
      '-0',
    ])
  }

  cursor(valid: string): string {
    switch (this.int(5)) {
      case 0:
        return valid
      case 1: {
        const at = this.int(valid.length)
        return valid.slice(0, at) + this.pick(['A', '_', '-', 'z', '=', '%2B']) + valid.slice(at + 1)
      }
      case 2:
        return valid.slice(0, this.int(valid.length))
      case 3:
        return randomBytes(this.int(90)).toString(this.pick(['base64url', 'base64', 'hex'] as const))
      default:
        return this.pick(['', ' ', 'null', 'undefined', '0', valid + valid])
    }
  }
}

/** A request's query string: some parameters, repeated or unknown ones, mostly encoded properly, sometimes raw. */
function fuzzQueryString(fuzz: Fuzz, validCursor: string): string {
  const parts: [string, string][] = []
  if (fuzz.int(10) !== 0) parts.push(['q', fuzz.q()])
  const optional: [string, () => string][] = [
    ['start_block', () => fuzz.number(['0', '1', '-1', '-20', '-4294967295'])],
    ['block_count', () => fuzz.number(['1', '10', '2147483647', '4294967295'])],
    ['limit', () => fuzz.number(['1', '2', '25', '100'])],
    [
      'sort',
      () => fuzz.pick(['asc', 'desc', 'ASC', 'Desc', 'asc', 'desc', 'asc', 'desc', 'asc', 'desc', '', 'up', 'asc ']),
    ],
    [
      'with_reversible',
      () => fuzz.pick(['true', 'false', 'true', 'false', 'true', 'false', 'true', 'false', '1', '0', 'TRUE', '']),
    ],
    ['cursor', () => fuzz.cursor(validCursor)],
    ['format', () => fuzz.pick(['json', 'x', ''])],
    [fuzz.pick(['token2', 'x', '__proto__', 'constructor', 'q[]', 'limit[0]']), () => fuzz.pick(['1', 'a', ''])],
  ]
  for (const [name, value] of optional) if (fuzz.int(3) === 0) parts.push([name, value()])
  if (fuzz.int(8) === 0 && parts.length > 0) parts.push([...fuzz.pick(parts)])
  const wellFormed = (text: string) => Buffer.from(text).toString()
  const raw = fuzz.int(5) === 0
  return parts
    .map(([k, v]) =>
      raw
        ? wellFormed(`${k}=${v}`)
            .replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c))
            .replace(/#/g, '%23')
        : `${encodeURIComponent(wellFormed(k))}=${encodeURIComponent(wellFormed(v))}`,
    )
    .join('&')
}

test('fuzz: thousands of random and mutated queries and parameters at /v0/search/transactions get a search answer or a standard 4xx error, never a crash, a hang or a stack', async (t: TestContext) => {
  const platform = await startPlatform(t, ['--workload', 'demo', '--lib-depth', '5', '--block-time', '50'])
  const { api } = platform
  const token = await issueToken(platform, platform.apiKey)
  const get = (query: string) =>
    send(`${api}/v0/search/transactions?${query}`, { headers: { authorization: `Bearer ${token}` }, timeoutMs: 15_000 })

  // Some irreversible history to search, and a valid cursor to mutate.
  let validCursor = ''
  const deadline = Date.now() + 30_000
  while (validCursor === '' && Date.now() < deadline) {
    const answer = await get('q=receiver:eosio&limit=1&with_reversible=true')
    assert.equal(answer.status, 200, answer.text)
    validCursor = (answer.body as { cursor: string }).cursor
    if (validCursor === '') await new Promise((resolve) => setTimeout(resolve, 200))
  }
  assert.notEqual(validCursor, '', 'a first page with a cursor')

  await t.test('known refusals', async () => {
    expectError(await get('q=receiver:bob&limit=1e3'), 400, 'request_validation_error')
    const badCursor = expectError(await get('q=receiver:bob&cursor=AAAA'), 400, 'request_validation_error')
    assert.ok('cursor' in (badCursor.details?.errors as object), JSON.stringify(badCursor.details))
    const badQuery = expectError(
      await get(`q=${encodeURIComponent('receiver:bob (')}`),
      400,
      'request_validation_error',
    )
    assert.ok('q' in (badQuery.details?.errors as object), JSON.stringify(badQuery.details))
    assert.equal(typeof badQuery.details?.position, 'number', JSON.stringify(badQuery.details))
    expectError(await get('q=receiver:bob&q=receiver:alice'), 400, 'request_validation_error')
  })

  const seed = Number(process.env.ANTLER_FUZZ_SEED ?? randomBytes(4).readUInt32LE(0))
  t.diagnostic(`fuzz seed ${seed} (rerun with ANTLER_FUZZ_SEED=${seed})`)
  console.log(`search-bad-input fuzz seed ${seed} (rerun with ANTLER_FUZZ_SEED=${seed})`)
  const fuzz = new Fuzz(mulberry32(seed))
  const requests = Array.from({ length: REQUESTS }, (_, i) => ({ i, query: fuzzQueryString(fuzz, validCursor) }))
  let next = 0
  const failures: string[] = []
  const seen = new Map<string, number>()
  let slowest = 0
  const worker = async () => {
    while (next < requests.length) {
      const { i, query } = requests[next++]
      const what = `#${i} ?${query.slice(0, 160)}`
      const started = Date.now()
      let answer: Answer
      try {
        answer = await get(query)
      } catch (error) {
        failures.push(`${what}: no answer (${(error as Error).message})`)
        continue
      }
      slowest = Math.max(slowest, Date.now() - started)
      const { code, details } = (answer.body ?? {}) as { code?: unknown; details?: { errors?: object } }
      // A validation error is counted by the parameter it names (q, cursor, limit…), to see the fuzz reach each.
      const param = code === 'request_validation_error' ? `:${Object.keys(details?.errors ?? {}).join(',')}` : ''
      const outcome = `${answer.status} ${typeof code === 'string' ? code : ''}${param}`
      seen.set(outcome, (seen.get(outcome) ?? 0) + 1)
      try {
        assertNoLeak(answer.text)
        if (answer.status === 200) {
          const body = answer.body as { cursor?: unknown; transactions?: unknown }
          assert.ok(
            !isStandardError(body) &&
              typeof body.cursor === 'string' &&
              (body.transactions === null || Array.isArray(body.transactions)),
            `a search answer: ${answer.text.slice(0, 200)}`,
          )
          continue
        }
        assert.ok(
          answer.status >= 400 && answer.status < 500,
          `a 4xx, not ${answer.status}: ${answer.text.slice(0, 300)}`,
        )
        const error = expectError(answer, answer.status, (answer.body as ErrorBody | undefined)?.code ?? '?')
        assert.ok(EXPECTED_CODES.has(error.code), `a search refusal, not ${error.code}: ${answer.text.slice(0, 300)}`)
      } catch (error) {
        failures.push(`${what}: ${(error as Error).message.split('\n')[0]}`)
      }
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker))
  t.diagnostic(`answers: ${[...seen].map(([outcome, n]) => `${outcome} ×${n}`).join(', ')}; slowest ${slowest} ms`)
  assert.deepEqual(failures.slice(0, 20), [], `seed ${seed}: ${failures.length} bad answers`)
  assert.ok((seen.get('200 ') ?? 0) > REQUESTS / 20, 'a good share of the requests are valid searches')
  const namedParams = [...seen.keys()].flatMap((k) => /request_validation_error:(.*)$/.exec(k)?.[1].split(',') ?? [])
  for (const param of ['q', 'cursor'])
    assert.ok(namedParams.includes(param), `the fuzz reached a request_validation_error naming ${param}`)
  assert.ok(namedParams.length > 2, 'the fuzz reached request_validation_error for other parameters too')

  const health = await send(`${api}/healthz`)
  assert.equal(health.status, 200, 'the server still serves')
  assert.equal(platform.cli.child.exitCode, null, 'the platform is still running')
  assert.doesNotMatch(platform.cli.stderr(), /unexpected error/, 'no unexpected_error in the log')
})
