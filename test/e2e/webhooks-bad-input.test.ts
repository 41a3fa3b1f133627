import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { onCleanup } from '../_helpers/cleanup.ts'
import { antlerKeys, isStandardError, issueToken, startPlatform, type Platform } from '../_helpers/platform.ts'
import { assertNoLeak, expectError, send, type Answer, type ErrorBody } from '../_helpers/http.ts'
import { mulberry32 } from '../_helpers/random.ts'

/*
 * Bad input at every `/v1/webhooks` route of a real `antler dev` (docs/ARCHITECTURE.md, "Quality bars"): no token or a
 * bad one; bodies and parameters of the wrong type, missing, extra, huge, not JSON; a bad search query, a bad cursor,
 * start_block with cursor, replay with both or neither, limit out of range, before not a date, an unknown id. Each
 * answer is the standard error object with its status and code, `X-Trace-Id` its trace id, no stack trace. Then the
 * isolation of API keys (another key's subscription is not found, on every route, and not listed), the per-key limit
 * (`--webhook-max-subscriptions 3`, concurrent creates included) and a seeded fuzz of mutated bodies on the write
 * routes (ANTLER_FUZZ_SEED=<n> replays a run; ANTLER_FUZZ_REQUESTS sets its size). The server keeps serving.
 */

const REQUESTS = Number(process.env.ANTLER_FUZZ_REQUESTS ?? 2000)
const LIMIT = 3
const JSON_TYPE = 'application/json'
const QUERY = 'receiver:eosio.token action:transfer'

/** A receiver on loopback answering 200 to everything (what `antler dev` may deliver to by default). */
async function startReceiver(t: TestContext): Promise<{ url: (path: string) => string; hits: () => number }> {
  let hits = 0
  const server = createServer((request, response) => {
    hits++
    request.resume().on('end', () => response.writeHead(200, { 'content-type': 'text/plain' }).end('ok'))
  })
  server.keepAliveTimeout = 1_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  onCleanup(t, () => new Promise<void>((resolve) => server.close(() => resolve())))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { url: (path) => `${base}${path}`, hits: () => hits }
}

/** One request to the API: a method, a path, a body as sent (text, with its content type) and a token. */
interface Call {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  readonly path: string
  readonly body?: string
  readonly contentType?: string
  readonly token?: string
  readonly headers?: Record<string, string>
}

function call(api: string, c: Call): Promise<Answer> {
  const headers: Record<string, string> = { ...c.headers }
  if (c.token !== undefined) headers.authorization = `Bearer ${c.token}`
  if (c.contentType !== undefined) headers['content-type'] = c.contentType
  return send(`${api}${c.path}`, { method: c.method, headers, body: c.body, timeoutMs: 25_000 })
}

const json = (value: unknown): Pick<Call, 'body' | 'contentType'> => ({
  body: JSON.stringify(value),
  contentType: JSON_TYPE,
})

/** Every route, for the subscription `id`, with a body it accepts where it reads one. */
const everyRoute = (id: string): Call[] => [
  { method: 'POST', path: '/v1/webhooks', ...json({ url: 'http://127.0.0.1:1/x', query: QUERY }) },
  { method: 'GET', path: '/v1/webhooks' },
  { method: 'GET', path: `/v1/webhooks/${id}` },
  { method: 'PATCH', path: `/v1/webhooks/${id}`, ...json({ paused: true }) },
  { method: 'DELETE', path: `/v1/webhooks/${id}` },
  { method: 'POST', path: `/v1/webhooks/${id}/rotate-secret` },
  { method: 'POST', path: `/v1/webhooks/${id}/replay`, ...json({ from_block: 1 }) },
  { method: 'POST', path: `/v1/webhooks/${id}/test` },
  { method: 'GET', path: `/v1/webhooks/${id}/attempts` },
  { method: 'POST', path: `/v1/webhooks/${id}/messages/msg_AAAAAAAAAAAAAAAAAAAAAAAA/resend` },
]

/** The routes that name a subscription. */
const idRoutes = (id: string): Call[] => everyRoute(id).filter((c) => c.path.startsWith(`/v1/webhooks/${id}`))

interface Created {
  readonly id: string
  readonly secret: string
  readonly url: string
  readonly updated_at: string
}

async function createWebhook(api: string, token: string, body: Record<string, unknown>): Promise<Created> {
  const answer = await call(api, { method: 'POST', path: '/v1/webhooks', token, ...json(body) })
  assert.equal(answer.status, 201, answer.text)
  return answer.body as Created
}

async function listIds(api: string, token: string): Promise<string[]> {
  const answer = await call(api, { method: 'GET', path: '/v1/webhooks', token })
  assert.equal(answer.status, 200, answer.text)
  return (answer.body as { webhooks: { id: string }[] }).webhooks.map((w) => w.id)
}

/** A second (third…) server key made with `antler keys create` while the platform runs, and a token of it. */
async function newKeyToken(p: Platform, name: string): Promise<string> {
  const created = JSON.parse(antlerKeys(p, ['create', '--type', 'server', '--name', name, '--json'])) as {
    key: string
  }
  return issueToken(p, created.key)
}

// ---------------------------------------------------------------------------------------------
// Known bad input: one request and the refusal it must get.

interface Case {
  readonly name: string
  readonly call: Call
  readonly status: number
  readonly code: string
  /** For request_validation_error: a field `details.errors` must name (any of them). */
  readonly fields?: readonly string[]
  readonly details?: Record<string, unknown>
}

const invalid = (...fields: string[]) => ({ status: 400, code: 'request_validation_error', fields })
const HUGE = 'x'.repeat(300_000)

function badCases(id: string, receiver: string, token: string): Case[] {
  const create = (body: unknown) => ({ method: 'POST' as const, path: '/v1/webhooks', token, ...json(body) })
  const patch = (body: unknown) => ({ method: 'PATCH' as const, path: `/v1/webhooks/${id}`, token, ...json(body) })
  const replay = (body: unknown) => ({
    method: 'POST' as const,
    path: `/v1/webhooks/${id}/replay`,
    token,
    ...json(body),
  })
  const attempts = (query: string) => ({ method: 'GET' as const, path: `/v1/webhooks/${id}/attempts?${query}`, token })
  const valid = { url: receiver, query: QUERY }
  const cases: Case[] = [
    // Wrong types, missing fields.
    { name: 'create: url missing', call: create({ query: QUERY }), ...invalid('url') },
    { name: 'create: query missing', call: create({ url: receiver }), ...invalid('query') },
    { name: 'create: empty object', call: create({}), ...invalid('url', 'query') },
    { name: 'create: an array', call: create([valid]), ...invalid('body') },
    { name: 'create: null', call: create(null), ...invalid('body') },
    { name: 'create: a string', call: create('x'), ...invalid('body') },
    { name: 'create: a number', call: create(7), ...invalid('body') },
    { name: 'create: url an object', call: create({ ...valid, url: { href: receiver } }), ...invalid('url') },
    { name: 'create: query an object', call: create({ ...valid, query: { q: QUERY } }), ...invalid('query') },
    { name: 'create: url empty', call: create({ ...valid, url: '' }), ...invalid('url') },
    { name: 'create: query empty', call: create({ ...valid, query: '' }), ...invalid('query') },
    { name: 'create: finality unknown', call: create({ ...valid, finality: 'final' }), ...invalid('finality') },
    { name: 'create: finality a number', call: create({ ...valid, finality: 1 }), ...invalid('finality') },
    { name: 'create: start_block 0', call: create({ ...valid, start_block: 0 }), ...invalid('start_block') },
    { name: 'create: start_block -1', call: create({ ...valid, start_block: -1 }), ...invalid('start_block') },
    { name: 'create: start_block 1.5', call: create({ ...valid, start_block: 1.5 }), ...invalid('start_block') },
    { name: 'create: start_block 2^32', call: create({ ...valid, start_block: 2 ** 32 }), ...invalid('start_block') },
    { name: 'create: start_block a word', call: create({ ...valid, start_block: 'ten' }), ...invalid('start_block') },
    { name: 'create: cursor empty', call: create({ ...valid, cursor: '' }), ...invalid('cursor') },
    // Huge strings: over the fields' limits, and a body over the 1 MiB limit.
    {
      name: 'create: url of 3,000',
      call: create({ ...valid, url: `${receiver}${'a'.repeat(3000)}` }),
      ...invalid('url'),
    },
    {
      name: 'create: query of 5,000',
      call: create({ ...valid, query: 'receiver:a '.repeat(500) }),
      ...invalid('query'),
    },
    { name: 'create: cursor of 300,000', call: create({ ...valid, cursor: HUGE }), ...invalid('cursor') },
    {
      name: 'create: a 2 MB body',
      call: create({ ...valid, query: 'x'.repeat(2_000_000) }),
      status: 413,
      code: 'request_too_large_error',
      details: { limit_bytes: 1_048_576 },
    },
    // Not JSON.
    { name: 'create: bad JSON', call: { ...create(valid), body: '{"url":' }, status: 400, code: 'invalid_json_error' },
    {
      name: 'create: JSON then junk',
      call: { ...create(valid), body: '{}x' },
      status: 400,
      code: 'invalid_json_error',
    },
    {
      name: 'create: XML',
      call: { ...create(valid), body: '<webhook url="x"/>', contentType: 'application/xml' },
      status: 400,
      code: 'invalid_json_error',
    },
    {
      name: 'create: bytes',
      call: { ...create(valid), body: '\u0000\u0001\u00ff', contentType: 'application/octet-stream' },
      status: 400,
      code: 'invalid_json_error',
    },
    {
      name: 'create: multipart',
      call: {
        ...create(valid),
        body: '--b\r\nContent-Disposition: form-data; name="url"\r\n\r\nhttp://x/\r\n--b--\r\n',
        contentType: 'multipart/form-data; boundary=b',
      },
      status: 400,
      code: 'invalid_json_error',
    },
    {
      name: 'create: gzip that is not',
      call: { ...create(valid), headers: { 'content-encoding': 'gzip' } },
      status: 400,
      code: 'bad_request_error',
    },
    {
      name: 'create: unknown content encoding',
      call: { ...create(valid), headers: { 'content-encoding': 'zip9' } },
      status: 415,
      code: 'unsupported_content_encoding_error',
    },
    { name: 'create: no body', call: { method: 'POST', path: '/v1/webhooks', token }, ...invalid('body') },
    // The search query, the cursor, start_block with cursor.
    {
      name: 'create: a bad search query',
      call: create({ ...valid, query: 'receiver:eosio (' }),
      ...invalid('query', 'q'),
    },
    {
      name: 'create: a bad search field',
      call: create({ ...valid, query: 'status:failed' }),
      ...invalid('query', 'q'),
    },
    { name: 'create: a bad cursor', call: create({ ...valid, cursor: 'AAAA' }), ...invalid('cursor') },
    {
      name: 'create: a cursor that is random bytes',
      call: create({ ...valid, cursor: randomBytes(60).toString('base64url') }),
      ...invalid('cursor'),
    },
    {
      name: 'create: start_block and cursor',
      call: create({ ...valid, start_block: 5, cursor: 'AAAA' }),
      ...invalid('cursor'),
    },
    // PATCH.
    { name: 'patch: empty object', call: patch({}), ...invalid('body') },
    { name: 'patch: paused a word', call: patch({ paused: 'yes' }), ...invalid('paused') },
    { name: 'patch: paused an object', call: patch({ paused: {} }), ...invalid('paused') },
    { name: 'patch: url a number list', call: patch({ url: [1, 2] }), ...invalid('url') },
    { name: 'patch: query empty', call: patch({ query: '' }), ...invalid('query') },
    { name: 'patch: a bad search query', call: patch({ query: 'a:(' }), ...invalid('query', 'q') },
    { name: 'patch: an array', call: patch([{ paused: true }]), ...invalid('body') },
    { name: 'patch: bad JSON', call: { ...patch({}), body: '{"paused":tru' }, status: 400, code: 'invalid_json_error' },
    {
      name: 'patch: a refused url',
      call: patch({ url: 'ftp://127.0.0.1/' }),
      status: 400,
      code: 'webhook_target_refused_error',
      details: { reason: 'scheme' },
    },
    // Replay.
    { name: 'replay: neither', call: replay({}), ...invalid('from_cursor') },
    { name: 'replay: both', call: replay({ from_cursor: 'AAAA', from_block: 3 }), ...invalid('from_cursor') },
    { name: 'replay: a bad cursor', call: replay({ from_cursor: 'AAAA' }), ...invalid('cursor', 'from_cursor') },
    { name: 'replay: from_block 0', call: replay({ from_block: 0 }), ...invalid('from_block') },
    { name: 'replay: from_block a word', call: replay({ from_block: 'x' }), ...invalid('from_block') },
    { name: 'replay: no body', call: { method: 'POST', path: `/v1/webhooks/${id}/replay`, token }, ...invalid('body') },
    // Attempts.
    { name: 'attempts: limit 0', call: attempts('limit=0'), ...invalid('limit') },
    { name: 'attempts: limit 501', call: attempts('limit=501'), ...invalid('limit') },
    { name: 'attempts: limit -1', call: attempts('limit=-1'), ...invalid('limit') },
    { name: 'attempts: limit 1.5', call: attempts('limit=1.5'), ...invalid('limit') },
    { name: 'attempts: limit a word', call: attempts('limit=ten'), ...invalid('limit') },
    { name: 'attempts: limit twice', call: attempts('limit=1&limit=2'), ...invalid('limit') },
    { name: 'attempts: before a word', call: attempts('before=yesterday'), ...invalid('before') },
    { name: 'attempts: before a number', call: attempts('before=1700000000000'), ...invalid('before') },
    { name: 'attempts: before a date only', call: attempts('before=2026-01-01'), ...invalid('before') },
    { name: 'attempts: before 30 February', call: attempts('before=2026-02-30T00:00:00Z'), ...invalid('before') },
    { name: 'attempts: before with no zone', call: attempts('before=2026-01-01T00:00:00'), ...invalid('before') },
    { name: 'attempts: before too long', call: attempts(`before=${'2'.repeat(60)}`), ...invalid('before') },
    // Resend: a message the subscription has no attempt of; an id over the limit.
    {
      name: 'resend: an unknown message',
      call: { method: 'POST', path: `/v1/webhooks/${id}/messages/msg_nope/resend`, token },
      status: 404,
      code: 'webhook_message_not_found_error',
      details: { id, message_id: 'msg_nope' },
    },
    {
      name: 'resend: a message id over 100 characters',
      call: { method: 'POST', path: `/v1/webhooks/${id}/messages/${'m'.repeat(101)}/resend`, token },
      ...invalid('message_id'),
    },
    // Unknown ids, ids over the limit, methods.
    {
      name: 'get: an id over 100 characters',
      call: { method: 'GET', path: `/v1/webhooks/${'a'.repeat(101)}`, token },
      ...invalid('id'),
    },
    {
      name: 'get: a bad % escape',
      call: { method: 'GET', path: '/v1/webhooks/%E0%A4%A', token },
      status: 400,
      code: 'bad_request_error',
    },
    {
      name: 'put: not a method of the route',
      call: { method: 'PUT' as 'POST', path: `/v1/webhooks/${id}`, token, ...json({ paused: true }) },
      status: 405,
      code: 'method_not_allowed_error',
    },
    {
      name: 'post: an unknown action',
      call: { method: 'POST', path: `/v1/webhooks/${id}/pause`, token },
      status: 404,
      code: 'not_found_error',
    },
  ]
  for (const unknown of ['wh_AAAAAAAAAAAAAAAA', 'wh_', '%00', '%F0%9F%98%80', encodeURIComponent(' or 1=1 --')])
    for (const c of idRoutes(unknown))
      cases.push({
        name: `${c.method} ${c.path}: an unknown id`,
        call: { ...c, token },
        status: 404,
        code: 'webhook_not_found_error',
        details: { id: decodeURIComponent(unknown) },
      })
  return cases
}

/** Runs the cases four at a time; one line per case answered wrongly. */
async function runCases(api: string, cases: readonly Case[]): Promise<string[]> {
  const failures: string[] = []
  let next = 0
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++]
      try {
        const answer = await call(api, c.call)
        const body = expectError(answer, c.status, c.code, c.details)
        if (c.fields !== undefined) {
          const named = Object.keys((body.details?.errors as Record<string, unknown> | undefined) ?? {})
          assert.ok(
            c.fields.some((field) => named.includes(field)),
            `details.errors names one of ${c.fields.join(', ')}: ${answer.text.slice(0, 300)}`,
          )
        }
      } catch (error) {
        failures.push(`${c.name}: ${(error as Error).message.split('\n')[0]}`)
      }
    }
  }
  await Promise.all(Array.from({ length: 4 }, worker))
  return failures
}

// ---------------------------------------------------------------------------------------------
// The fuzz: valid bodies of the write routes, mutated.

const JUNK = ['"', '{', '}', '[', ']', ',', ':', '\\', '\u0000', '😀', 'null', ' ', '\n', 'e', '-', '0']

class Fuzz {
  constructor(private readonly rand: () => number) {}

  int(n: number): number {
    return Math.floor(this.rand() * n)
  }

  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]
  }

  /** Any JSON value, of any type, sometimes huge. */
  value(strings: readonly string[]): unknown {
    switch (this.int(10)) {
      case 0:
        return this.pick([0, 1, -1, 1.5, 2 ** 32, 2 ** 53 + 1, -0, 1e308])
      case 1:
        return this.pick([true, false, null])
      case 2:
        return this.pick([[], [this.pick(strings)], {}, { x: 1 }])
      case 3:
        return this.pick(['', ' ', 'x'.repeat(this.pick([2049, 4097, 20_000])), '\u0000', '😀'.repeat(600)])
      default:
        return this.pick(strings)
    }
  }

  /** A body mutated at 1–3 places: a field deleted, set to any value, renamed, or a field added. */
  mutate(valid: Record<string, unknown>, strings: Record<string, readonly string[]>): unknown {
    const body: Record<string, unknown> = { ...valid }
    for (let k = 0, n = 1 + this.int(3); k < n; k++) {
      const fields = Object.keys(strings)
      const field = this.pick(fields)
      switch (this.int(6)) {
        case 0:
          delete body[field]
          break
        case 1:
          body[this.pick([field.toUpperCase(), `${field}_`, 'id', 'secret', 'owner', 'extra'])] = body[field]
          break
        case 2:
          return this.pick([[body], null, 'body', 42])
        default:
          body[field] = this.value(strings[field])
      }
    }
    return body
  }

  /** JSON text mutated at a few characters (mostly no longer JSON). */
  garble(text: string): string {
    const chars = [...text]
    for (let k = 0, n = 1 + this.int(3); k < n; k++) {
      const at = this.int(chars.length + 1)
      if (this.int(2) === 0) chars.splice(at, 0, this.pick(JUNK))
      else chars.splice(at, 1 + this.int(4))
    }
    return chars.join('')
  }
}

const FUZZ_CODES = new Set([
  'request_validation_error',
  'invalid_json_error',
  'webhook_target_refused_error',
  'webhook_limit_exceeded_error',
  'webhook_not_found_error',
  'request_too_large_error',
  'bad_request_error',
])

function fuzzCall(fuzz: Fuzz, id: string, receiver: string, token: string): Call {
  const urls = [
    receiver,
    `${receiver}?a=1#frag`,
    'http://127.0.0.1:1/',
    'http://[::1]:1/',
    'http://localhost:1/',
    'https://127.0.0.1/',
    'http://10.0.0.1/',
    'http://169.254.169.254/latest/meta-data',
    'http://[::ffff:169.254.169.254]/',
    'ftp://127.0.0.1/',
    'http://u:p@127.0.0.1/',
    'http://127.0.0.1:0/',
    'http://127.0.0.1:99999/',
    'http:/x',
    'not a url',
    'javascript:alert(1)',
    'gopher://127.0.0.1/x',
  ]
  const queries = [QUERY, 'receiver:eosio', 'account:eosio.token -action:issue', '(a:b', 'status:x', 'a:b OR', '-']
  const cursors = ['AAAA', randomBytes(48).toString('base64url'), '', 'null']
  const blocks = ['1', '0', '-5', '4294967296', '1e3', 'x'] as const
  let route: { method: Call['method']; path: string; valid: Record<string, unknown>; strings: Record<string, string[]> }
  const target = fuzz.int(8) === 0 ? fuzz.pick(['wh_nope', 'x'.repeat(101), '%20', id.slice(0, -1)]) : id
  switch (fuzz.int(3)) {
    case 0:
      route = {
        method: 'POST',
        path: '/v1/webhooks',
        valid: { url: receiver, query: QUERY, ...(fuzz.int(2) === 0 ? { finality: 'irreversible' } : {}) },
        strings: {
          url: urls,
          query: queries,
          finality: ['reversible', 'irreversible', 'final', 'REVERSIBLE'],
          start_block: [...blocks],
          cursor: cursors,
        },
      }
      break
    case 1:
      route = {
        method: 'PATCH',
        path: `/v1/webhooks/${target}`,
        valid: fuzz.pick([{ paused: true }, { paused: false }, { url: receiver }, { query: QUERY }]),
        strings: { paused: ['true', 'false', 'yes'], url: urls, query: queries },
      }
      break
    default:
      route = {
        method: 'POST',
        path: `/v1/webhooks/${target}/replay`,
        valid: fuzz.pick([{ from_block: 1 + fuzz.int(50) }, { from_block: 1 }]),
        strings: { from_block: [...blocks], from_cursor: cursors },
      }
  }
  let body = JSON.stringify(fuzz.int(6) === 0 ? route.valid : fuzz.mutate(route.valid, route.strings))
  if (fuzz.int(6) === 0) body = fuzz.garble(body)
  const contentType = fuzz.pick([JSON_TYPE, JSON_TYPE, JSON_TYPE, 'text/plain', 'application/json; charset=utf-8'])
  return { method: route.method, path: route.path, body, contentType, token }
}

// ---------------------------------------------------------------------------------------------

test('/v1/webhooks of a real antler dev: every route refuses bad tokens, bad bodies and parameters with the standard error object; keys are isolated; the per-key limit holds; a seeded fuzz of the write routes', async (t) => {
  const receiver = await startReceiver(t)
  const p = await startPlatform(t, ['--webhook-max-subscriptions', String(LIMIT)])
  const { api } = p
  const tokenA = await issueToken(p, p.apiKey)
  const a1 = await createWebhook(api, tokenA, { url: receiver.url('/a1'), query: QUERY })
  assert.match(a1.id, /^wh_/)

  await t.test('without a token, or with a bad one, every route answers 401 auth_invalid_token_error', async () => {
    const [header, payload] = tokenA.split('.')
    const badTokens: [string, Record<string, string>, string][] = [
      ['no token', {}, 'missing'],
      ['not a JWT', { authorization: 'Bearer x.y.z' }, 'malformed'],
      ['a forged signature', { authorization: `Bearer ${header}.${payload}.${'A'.repeat(86)}` }, 'bad_signature'],
    ]
    const failures: string[] = []
    for (const c of everyRoute(a1.id))
      for (const [what, headers, reason] of badTokens) {
        try {
          const answer = await call(api, { ...c, headers })
          const body = expectError(answer, 401, 'auth_invalid_token_error')
          assert.ok(typeof body.details?.reason === 'string', `details.reason in ${answer.text}`)
          if (reason !== 'bad_signature') assert.equal(body.details?.reason, reason, answer.text)
        } catch (error) {
          failures.push(`${c.method} ${c.path}, ${what}: ${(error as Error).message.split('\n')[0]}`)
        }
      }
    assert.deepEqual(failures, [])
    assert.deepEqual(await listIds(api, tokenA), [a1.id], 'nothing was created, changed or deleted')
  })

  await t.test('bad bodies, parameters and ids: the standard error object with the right status and code', async () => {
    const cases = badCases(a1.id, receiver.url('/bad'), tokenA)
    const failures = await runCases(api, cases)
    assert.deepEqual(failures, [], `${failures.length} of ${cases.length} cases answered wrongly`)
    assert.deepEqual(await listIds(api, tokenA), [a1.id], 'no bad request created a subscription')
    const a1Now = (await call(api, { method: 'GET', path: `/v1/webhooks/${a1.id}`, token: tokenA })).body as Created
    assert.equal(a1Now.updated_at, a1.updated_at, 'no bad request changed the subscription')
  })

  await t.test(
    'a field the route does not know is refused, not dropped (PATCH {"pause": true} is no pause)',
    async () => {
      const failures: string[] = []
      const extra: Case[] = [
        {
          name: 'create: an extra field',
          call: {
            method: 'POST',
            path: '/v1/webhooks',
            token: tokenA,
            ...json({ url: receiver.url('/x'), query: QUERY, x: 1 }),
          },
          ...invalid('x'),
        },
        {
          name: 'create: start_blok misspelt',
          call: {
            method: 'POST',
            path: '/v1/webhooks',
            token: tokenA,
            ...json({ url: receiver.url('/x'), query: QUERY, start_blok: 5 }),
          },
          ...invalid('start_blok'),
        },
        {
          name: 'patch: pause misspelt',
          call: { method: 'PATCH', path: `/v1/webhooks/${a1.id}`, token: tokenA, ...json({ pause: true }) },
          ...invalid('pause'),
        },
        {
          name: 'replay: an extra field',
          call: {
            method: 'POST',
            path: `/v1/webhooks/${a1.id}/replay`,
            token: tokenA,
            ...json({ from_block: 1, reset: true }),
          },
          ...invalid('reset'),
        },
      ]
      failures.push(...(await runCases(api, extra)))
      // Whatever they answered, the subscriptions stay as they were for the next checks.
      for (const id of await listIds(api, tokenA))
        if (id !== a1.id) await call(api, { method: 'DELETE', path: `/v1/webhooks/${id}`, token: tokenA })
      await call(api, { method: 'PATCH', path: `/v1/webhooks/${a1.id}`, token: tokenA, ...json({ paused: false }) })
      assert.deepEqual(failures, [])
    },
  )

  await t.test("isolation: key B gets webhook_not_found_error on every route for key A's subscription", async () => {
    const tokenB = await newKeyToken(p, 'webhooks-b')
    const b1 = await createWebhook(api, tokenB, { url: receiver.url('/b1'), query: QUERY })
    assert.deepEqual(await listIds(api, tokenB), [b1.id], "B's list holds only B's subscription")
    assert.deepEqual(await listIds(api, tokenA), [a1.id], "A's list holds only A's subscription")
    const before = (await call(api, { method: 'GET', path: `/v1/webhooks/${a1.id}`, token: tokenA })).body
    const failures: string[] = []
    for (const c of idRoutes(a1.id)) {
      try {
        expectError(await call(api, { ...c, token: tokenB }), 404, 'webhook_not_found_error', { id: a1.id })
      } catch (error) {
        failures.push(`B ${c.method} ${c.path}: ${(error as Error).message.split('\n')[0]}`)
      }
    }
    // The answer for another key's subscription is the answer for one that does not exist: nothing tells them apart.
    const foreign = await call(api, { method: 'GET', path: `/v1/webhooks/${a1.id}`, token: tokenB })
    const none = await call(api, { method: 'GET', path: `/v1/webhooks/wh_${'A'.repeat(16)}`, token: tokenB })
    const shape = (answer: Answer) => {
      const { code, message, details } = answer.body as ErrorBody
      return { status: answer.status, code, message: message.replace(/wh_\S+/, 'ID'), details: Object.keys(details!) }
    }
    assert.deepEqual(shape(foreign), shape(none))
    assert.deepEqual(failures, [])
    assert.ok(!(await listIds(api, tokenB)).includes(a1.id), "B never sees A's subscription")
    const after = await call(api, { method: 'GET', path: `/v1/webhooks/${a1.id}`, token: tokenA })
    assert.equal(after.status, 200, after.text)
    assert.deepEqual(after.body, before, "B's calls changed nothing of A's subscription")
    // A's own calls still work, on the same routes B was refused.
    const rotated = await call(api, { method: 'POST', path: `/v1/webhooks/${a1.id}/rotate-secret`, token: tokenA })
    assert.equal(rotated.status, 200, rotated.text)
    const tested = await call(api, { method: 'POST', path: `/v1/webhooks/${a1.id}/test`, token: tokenA })
    assert.equal(tested.status, 200, tested.text)
    assert.equal((tested.body as { ok: boolean }).ok, true, tested.text)
    const attempts = await call(api, { method: 'GET', path: `/v1/webhooks/${a1.id}/attempts`, token: tokenA })
    assert.equal(attempts.status, 200, attempts.text)
    assert.ok((attempts.body as { attempts: unknown[] }).attempts.length >= 1, attempts.text)
    // A test message is not resent (docs/ERRORS.md); B is told A's subscription does not exist, whatever the message.
    const testId = (tested.body as { message_id: string }).message_id
    const resend = `/v1/webhooks/${a1.id}/messages/${testId}/resend`
    expectError(
      await call(api, { method: 'POST', path: resend, token: tokenA }),
      404,
      'webhook_message_not_found_error',
      {
        id: a1.id,
        message_id: testId,
      },
    )
    expectError(await call(api, { method: 'POST', path: resend, token: tokenB }), 404, 'webhook_not_found_error', {
      id: a1.id,
    })
    // And B's own subscription is B's: A cannot delete it.
    expectError(
      await call(api, { method: 'DELETE', path: `/v1/webhooks/${b1.id}`, token: tokenA }),
      404,
      'webhook_not_found_error',
    )
    assert.deepEqual(await listIds(api, tokenB), [b1.id])
  })

  await t.test(
    'attempts?before= a leap second (valid RFC 3339, passes the schema, no JavaScript date): 400 naming before, not an empty page',
    async () => {
      const path = `/v1/webhooks/${a1.id}/attempts`
      const all = await call(api, { method: 'GET', path, token: tokenA })
      assert.equal(all.status, 200, all.text)
      assert.ok((all.body as { attempts: unknown[] }).attempts.length >= 1, `an attempt to list: ${all.text}`)
      // `before` takes an `at` of a page, which never holds a leap second; the route refuses what Date cannot read.
      const leap = await call(api, { method: 'GET', path: `${path}?before=2099-12-31T23:59:60Z`, token: tokenA })
      const body = expectError(leap, 400, 'request_validation_error')
      assert.deepEqual(Object.keys((body.details?.errors as object | undefined) ?? {}), ['before'], leap.text)
    },
  )

  await t.test(`the per-key limit: --webhook-max-subscriptions ${LIMIT}, the next create is 429`, async () => {
    const tokenC = await newKeyToken(p, 'webhooks-c')
    const body = { url: receiver.url('/c'), query: QUERY }
    // Concurrent creates of a fresh key: exactly LIMIT get through.
    const answers = await Promise.all(
      Array.from({ length: 3 * LIMIT }, () =>
        call(api, { method: 'POST', path: '/v1/webhooks', token: tokenC, ...json(body) }),
      ),
    )
    const statuses = answers.map((a) => a.status).sort()
    assert.deepEqual(statuses, [...Array(LIMIT).fill(201), ...Array(2 * LIMIT).fill(429)], statuses.join(' '))
    for (const answer of answers.filter((a) => a.status === 429))
      expectError(answer, 429, 'webhook_limit_exceeded_error', { kind: 'webhook subscriptions', limit: LIMIT })
    const ids = await listIds(api, tokenC)
    assert.equal(ids.length, LIMIT)
    expectError(
      await call(api, { method: 'POST', path: '/v1/webhooks', token: tokenC, ...json(body) }),
      429,
      'webhook_limit_exceeded_error',
      { limit: LIMIT },
    )
    // The limit is per key: A (one subscription) still creates; a deleted subscription frees its place.
    const a2 = await createWebhook(api, tokenA, body)
    await call(api, { method: 'DELETE', path: `/v1/webhooks/${a2.id}`, token: tokenA })
    const deleted = await call(api, { method: 'DELETE', path: `/v1/webhooks/${ids[0]}`, token: tokenC })
    assert.equal(deleted.status, 204, deleted.text)
    await createWebhook(api, tokenC, body)
  })

  await t.test(
    'fuzz: mutated bodies at the write routes get an answer or a standard 4xx error, never a crash',
    async (st) => {
      const tokenD = await newKeyToken(p, 'webhooks-fuzz')
      const d1 = await createWebhook(api, tokenD, { url: receiver.url('/d1'), query: QUERY })
      const seed = Number(process.env.ANTLER_FUZZ_SEED ?? randomBytes(4).readUInt32LE(0))
      st.diagnostic(`fuzz seed ${seed} (rerun with ANTLER_FUZZ_SEED=${seed})`)
      console.log(`webhooks-bad-input fuzz seed ${seed} (rerun with ANTLER_FUZZ_SEED=${seed})`)
      const fuzz = new Fuzz(mulberry32(seed))
      const calls = Array.from({ length: REQUESTS }, () => fuzzCall(fuzz, d1.id, receiver.url('/d1'), tokenD))
      const failures: string[] = []
      const seen = new Map<string, number>()
      let next = 0
      const worker = async () => {
        while (next < calls.length) {
          const i = next++
          const c = calls[i]
          const what = `#${i} ${c.method} ${c.path} ${String(c.body).slice(0, 160)}`
          let answer: Answer
          try {
            answer = await call(api, c)
          } catch (error) {
            failures.push(`${what}: no answer (${(error as Error).message})`)
            continue
          }
          const code = (answer.body as { code?: unknown } | undefined)?.code
          const outcome = `${answer.status}${typeof code === 'string' ? ` ${code}` : ''}`
          seen.set(outcome, (seen.get(outcome) ?? 0) + 1)
          try {
            assertNoLeak(answer.text)
            if (answer.status === 201 || answer.status === 200) {
              const body = answer.body as { id?: unknown; state?: unknown }
              assert.ok(!isStandardError(body) && typeof body.id === 'string', `a subscription: ${answer.text}`)
              // Keep the key under its limit (and d1 the only one) for the calls that follow.
              if (answer.status === 201) {
                const removed = await call(api, { method: 'DELETE', path: `/v1/webhooks/${body.id}`, token: tokenD })
                assert.equal(removed.status, 204, removed.text)
              }
              continue
            }
            assert.ok(answer.status >= 400 && answer.status < 500, `a 4xx, not ${answer.status}: ${answer.text}`)
            const error = expectError(answer, answer.status, (answer.body as ErrorBody | undefined)?.code ?? '?')
            assert.ok(FUZZ_CODES.has(error.code), `an expected refusal, not ${error.code}`)
          } catch (error) {
            failures.push(`${what}: ${(error as Error).message.split('\n')[0]}`)
          }
        }
      }
      await Promise.all(Array.from({ length: 4 }, worker))
      st.diagnostic(`answers: ${[...seen].map(([outcome, n]) => `${outcome} ×${n}`).join(', ')}`)
      assert.deepEqual(failures.slice(0, 20), [], `seed ${seed}: ${failures.length} bad answers`)
      for (const outcome of ['200', '201', '400 request_validation_error', '400 invalid_json_error'])
        assert.ok((seen.get(outcome) ?? 0) > 0, `the fuzz reached ${outcome}`)
      assert.ok((seen.get('400 webhook_target_refused_error') ?? 0) > 0, 'the fuzz reached a refused target')
      assert.ok((seen.get('404 webhook_not_found_error') ?? 0) > 0, 'the fuzz reached an unknown id')
      assert.deepEqual(await listIds(api, tokenD), [d1.id], 'what the fuzz created it deleted; d1 is still there')
    },
  )

  const health = await send(`${api}/healthz`)
  assert.equal(health.status, 200, 'the server still serves')
  assert.equal(p.cli.child.exitCode, null, 'the platform is still running')
  assert.doesNotMatch(p.cli.stderr(), /unexpected error/, 'no unexpected error in the log')
  assert.ok(receiver.hits() >= 1, 'the receiver got the test message')
})
