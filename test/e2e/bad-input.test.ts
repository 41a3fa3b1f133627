import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { createPublicKey, randomBytes } from 'node:crypto'
import { gzipSync } from 'node:zlib'
import WebSocket from 'ws'
import { SignJWT, decodeJwt, generateKeyPair, type JWK } from 'jose'
import { isStandardError, issueToken, startPlatform, type Platform } from '../_helpers/platform.ts'
import {
  assertError,
  assertNoLeak,
  expectError,
  parseJson,
  send,
  type Answer,
  type ErrorBody,
} from '../_helpers/http.ts'
import { mulberry32 } from '../_helpers/random.ts'

/**
 * Bad input at every route of a real `antler dev` (docs/ARCHITECTURE.md, "Quality bars"): each answer is the standard
 * error object with its status and code, `X-Trace-Id` equal to its `trace_id`, no stack trace, and the server still
 * serves afterwards. One platform for the whole file.
 */

const API_BODY_LIMIT = 1024 * 1024
const CHAIN_BODY_LIMIT = 8 * 1024 * 1024
const TIMEOUT_MS = 10_000

/** A nodeos error as the passthrough keeps it: `{code, message, error: {code, name, what, details}}`. */
function isChainError(body: unknown): boolean {
  const b = body as
    | {
        code?: unknown
        message?: unknown
        error?: { code?: unknown; name?: unknown; what?: unknown; details?: unknown }
      }
    | undefined
  return (
    typeof b?.code === 'number' &&
    typeof b.message === 'string' &&
    typeof b.error?.code === 'number' &&
    typeof b.error.name === 'string' &&
    Array.isArray(b.error.details)
  )
}

/** The chain's own refusal, passed through with nodeos's status and body. */
function expectChainError(answer: Answer, status: number): void {
  assert.equal(answer.status, status, answer.text.slice(0, 300))
  assert.ok(isChainError(answer.body), `a nodeos error body: ${answer.text.slice(0, 300)}`)
  assert.match(answer.headers.get('x-trace-id') ?? '', /^[0-9a-f]{32}$/)
  assertNoLeak(answer.text)
}

async function assertAlive(platform: Platform): Promise<void> {
  const answer = await send(`${platform.api}/healthz`)
  assert.equal(answer.status, 200, `the server still serves: ${answer.text}`)
}

// ---------------------------------------------------------------------------------------------
// Raw sockets: for what fetch cannot send (malformed HTTP) and for watching a body being refused.

interface RawAnswer {
  status: number
  headers: Record<string, string>
  text: string
  body: unknown
  traceHeader: string | null
}

function decodeChunked(data: string): string | undefined {
  let out = ''
  let at = 0
  for (;;) {
    const end = data.indexOf('\r\n', at)
    if (end < 0) return undefined
    const size = parseInt(data.slice(at, end), 16)
    if (Number.isNaN(size)) return undefined
    if (size === 0) return out
    if (data.length < end + 2 + size) return undefined
    out += data.slice(end + 2, end + 2 + size)
    at = end + 2 + size + 2
  }
}

/** The first complete HTTP response in `data`, if there is one. */
function parseResponse(data: string, closed: boolean): RawAnswer | undefined {
  const split = data.indexOf('\r\n\r\n')
  if (split < 0) return undefined
  const [statusLine, ...lines] = data.slice(0, split).split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1])
  if (status === 100) return parseResponse(data.slice(split + 4), closed)
  const rest = data.slice(split + 4)
  let text: string | undefined
  if (headers['content-length'] !== undefined)
    text = Buffer.byteLength(rest) >= Number(headers['content-length']) ? rest : undefined
  else if (headers['transfer-encoding'] === 'chunked') text = decodeChunked(rest)
  else text = closed ? rest : undefined
  if (text === undefined) return undefined
  return { status, headers, text, body: parseJson(text), traceHeader: headers['x-trace-id'] ?? null }
}

/**
 * Writes `head` on a fresh connection, then the chunks `more()` yields, one at a time and only
 * while no answer has begun, and resolves with the first complete response; rejects when none
 * comes in time. The body is left open when `more()` runs dry (no terminating chunk).
 */
function rawExchange(
  api: string,
  head: string | Buffer,
  more?: () => Buffer | undefined,
  options: { halfClose?: boolean } = {},
): Promise<RawAnswer> {
  const timeoutMs = TIMEOUT_MS
  const { hostname, port } = new URL(api)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname)
    const chunks: Buffer[] = []
    let answered: RawAnswer | undefined
    const finish = (error?: Error) => {
      clearTimeout(timer)
      socket.destroy()
      if (answered) resolve(answered)
      else reject(error ?? new Error(`no answer; received ${Buffer.concat(chunks).toString('latin1').slice(0, 300)}`))
    }
    const timer = setTimeout(
      () =>
        finish(
          new Error(
            `no answer within ${timeoutMs} ms; received ${Buffer.concat(chunks).toString('latin1').slice(0, 300)}`,
          ),
        ),
      timeoutMs,
    )
    const tryParse = (closed: boolean) => {
      answered ??= parseResponse(Buffer.concat(chunks).toString('latin1'), closed)
      if (answered) finish()
    }
    socket.on('data', (d: Buffer) => {
      chunks.push(d)
      tryParse(false)
    })
    socket.on('end', () => tryParse(true))
    socket.on('close', () => finish())
    // The server may close while we still write (it refused the body): the answer already read counts.
    socket.on('error', (error) => (answered || chunks.length > 0 ? tryParse(true) : finish(error)))
    const pump = () => {
      if (chunks.length > 0 || socket.destroyed) return
      const chunk = more?.()
      if (chunk) socket.write(chunk, () => pump())
    }
    socket.write(head, () => (options.halfClose ? socket.end() : pump()))
  })
}

/** Chunks of `size` bytes of `byte`, up to `total` bytes, for a body sent in pieces. */
function bodyChunks(total: number, size = 64 * 1024, frame?: (chunk: Buffer) => Buffer): () => Buffer | undefined {
  let sent = 0
  return () => {
    if (sent >= total) return undefined
    const chunk = Buffer.alloc(Math.min(size, total - sent), 'a')
    sent += chunk.length
    return frame ? frame(chunk) : chunk
  }
}

const chunkFrame = (chunk: Buffer) =>
  Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])

// ---------------------------------------------------------------------------------------------
// Forged tokens.

function b64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url')
}

async function forgedTokens(platform: Platform, realToken: string): Promise<Record<string, string>> {
  const claims = decodeJwt(realToken)
  const jwks = (await send(`${platform.api}/.well-known/jwks.json`)).body as { keys: (JWK & { kid: string })[] }
  const serverJwk = jwks.keys[0]
  const [head, payload, signature] = realToken.split('.')
  const publicPem = createPublicKey({ key: serverJwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' })
  const other = await generateKeyPair('ES256')
  const tampered = { ...claims, usg: 'server', exp: (claims.exp ?? 0) + 365 * 86400, aki: 'key_0000000000000000' }
  return {
    alg_none: `${b64url({ alg: 'none', typ: 'JWT' })}.${payload}.`,
    hs256_with_public_key: await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: serverJwk.kid })
      .sign(new TextEncoder().encode(String(publicPem))),
    hs256_with_public_jwk: await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: serverJwk.kid })
      .sign(new TextEncoder().encode(JSON.stringify(serverJwk))),
    other_es256_key: await new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid: serverJwk.kid })
      .sign(other.privateKey),
    payload_modified: `${head}.${b64url(tampered)}.${signature}`,
    signature_cut: `${head}.${payload}.${signature.slice(0, 20)}`,
    header_not_json: `${Buffer.from('{not json').toString('base64url')}.${payload}.${signature}`,
  }
}

// ---------------------------------------------------------------------------------------------
// WebSocket upgrades.

type UpgradeResult =
  | { opened: true; socket: WebSocket }
  | { opened: false; status: number; text: string; body: unknown; traceHeader: string | null }

function upgrade(url: string, headers: Record<string, string> = {}): Promise<UpgradeResult> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers, handshakeTimeout: TIMEOUT_MS })
    socket.once('open', () => resolve({ opened: true, socket }))
    socket.once('unexpected-response', (_request, response) => {
      let text = ''
      response.on('data', (d: Buffer) => (text += d))
      response.on('end', () =>
        resolve({
          opened: false,
          status: response.statusCode ?? 0,
          text,
          body: parseJson(text),
          traceHeader: (response.headers['x-trace-id'] as string | undefined) ?? null,
        }),
      )
    })
    socket.once('error', reject)
  })
}

async function expectUpgradeRefused(url: string, headers: Record<string, string>, reason: string): Promise<void> {
  const result = await upgrade(url, headers)
  if (result.opened) {
    result.socket.terminate()
    assert.fail(`the upgrade to ${url} must be refused`)
  }
  assertError(result, 401, 'auth_invalid_token_error', { reason })
}

/** The next message of a socket, parsed. */
function nextMessage(socket: WebSocket): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no message in time')), TIMEOUT_MS)
    socket.once('message', (data: Buffer) => {
      clearTimeout(timer)
      resolve(JSON.parse(data.toString('utf8')) as Record<string, unknown>)
    })
  })
}

// ---------------------------------------------------------------------------------------------
// The fuzz loop's generators: a seeded PRNG so a failure reproduces with ANTLER_FUZZ_SEED.

class Fuzz {
  constructor(private readonly random: () => number) {}
  int(n: number): number {
    return Math.floor(this.random() * n)
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]
  }
  string(max: number): string {
    const alphabets = [
      'abcxyz_12345.',
      '{}[]":,\\ \t\n',
      '\u0000\u0001\u007f\u00ff\u2028\ud83e\udd8c\ud800',
      'eosio.token',
    ]
    let out = ''
    const length = this.int(max)
    for (let i = 0; i < length; i++) out += this.pick([...this.pick(alphabets)])
    return out
  }
  value(depth = 0): unknown {
    switch (this.int(depth > 3 ? 6 : 9)) {
      case 0:
        return null
      case 1:
        return this.random() < 0.5
      case 2:
        return this.pick([0, -1, 1e308, -1e-308, 2 ** 53 + 1, 2 ** 64, 0.1])
      case 3:
        return this.string(40)
      case 4:
        return 'x'.repeat(this.pick([0, 1, 255, 256, 257, 10_000, 200_000]))
      case 5:
        return this.pick([
          'server_',
          'web_',
          'mobile_',
          'server_' + '0'.repeat(64),
          'eosio',
          'SIG_K1_',
          'EOS6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5GDW5CV',
        ])
      case 6:
        return Array.from({ length: this.int(4) }, () => this.value(depth + 1))
      default: {
        const keys = [
          'api_key',
          'packed_trx',
          'signatures',
          'compression',
          'packed_context_free_data',
          'account_name',
          'code',
          'json',
          'block_num_or_id',
          this.string(8),
        ]
        return Object.fromEntries(Array.from({ length: this.int(5) }, () => [this.pick(keys), this.value(depth + 1)]))
      }
    }
  }
  /** A body: random JSON, JSON mutated byte by byte, random bytes, or one of the edge cases. */
  body(valid: string): string | Buffer {
    switch (this.int(5)) {
      case 0:
        return JSON.stringify(this.value())
      case 1: {
        const bytes = [...Buffer.from(valid)]
        for (let i = 0, n = 1 + this.int(4); i < n; i++) {
          const at = this.int(bytes.length + 1)
          const op = this.int(3)
          if (op === 0) bytes.splice(at, 1)
          else if (op === 1) bytes.splice(at, 0, this.int(256))
          else bytes[at % bytes.length] = this.int(256)
        }
        return Buffer.from(bytes)
      }
      case 2:
        return randomBytesFrom(this, this.int(2048))
      case 3:
        return this.pick([
          '',
          ' ',
          'null',
          '[]',
          '{}',
          '{"api_key":',
          '"',
          '\u0000',
          '{"a":'.repeat(5000),
          '['.repeat(100_000),
          '{"limit":18446744073709551615,"json":1e999}',
        ])
      default:
        return valid
    }
  }
}

function randomBytesFrom(fuzz: Fuzz, n: number): Buffer {
  const out = Buffer.alloc(n)
  for (let i = 0; i < n; i++) out[i] = fuzz.int(256)
  return out
}

const printable = (s: string) => s.replace(/[^\x20-\x7e]/g, '?')

/** Every byte of the string's UTF-8 (lone surrogates included, as U+FFFD) percent-encoded. */
const percentEncoded = (s: string) => [...Buffer.from(s)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')

// ---------------------------------------------------------------------------------------------

test('bad input at every route gets the standard error object, never a crash, a hang or a stack', async (t: TestContext) => {
  const platform = await startPlatform(t, [
    '--rate-limits',
    JSON.stringify({ issuancePerIp: { limit: 100_000, windowMs: 60_000 } }),
  ])
  const { api } = platform
  const token = await issueToken(platform, platform.apiKey)
  const bearer = { authorization: `Bearer ${token}` }
  const chain = `${api}/v1/chain`

  await t.test('POST /v1/auth/issue: missing, malformed and wrongly typed bodies', async () => {
    const issue = (body: string | Buffer, headers: Record<string, string> = {}) =>
      send(`${api}/v1/auth/issue`, { method: 'POST', headers, body })
    for (const body of [
      '',
      'null',
      '[]',
      '"x"',
      'true',
      '12',
      '{}',
      '{"api_key":{"a":1}}',
      '{"api_key":[{}]}',
      `{"api_key":"${'a'.repeat(500_000)}"}`,
      `{"api_key":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
      `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`,
    ]) {
      expectError(await issue(body), 400, 'request_validation_error')
    }
    for (const body of ['{', '{"api_key":', '{"api_key":"x"', "{'api_key':'x'}", 'api_key=x', '\u0000', '\ud800'])
      expectError(await issue(body), 400, 'invalid_json_error')
    expectError(
      await issue('api_key=x', { 'content-type': 'application/x-www-form-urlencoded' }),
      400,
      'invalid_json_error',
    )
    // Fastify's validation turns a scalar into the string the schema asks for: the key is then refused as a key.
    expectError(await issue('{"api_key":12}'), 401, 'auth_invalid_api_key_error', { reason: 'malformed' })
    expectError(await issue('{"api_key":null}'), 401, 'auth_invalid_api_key_error', { reason: 'missing' })
    expectError(await issue('{"api_key":"nope"}'), 401, 'auth_invalid_api_key_error', { reason: 'malformed' })
    expectError(
      await issue(JSON.stringify({ api_key: `server_${'0'.repeat(64)}` })),
      401,
      'auth_invalid_api_key_error',
      { reason: 'unknown' },
    )
    expectError(await issue(JSON.stringify({ api_key: `${platform.apiKey}x` })), 401, 'auth_invalid_api_key_error')
    // Request decompression: a body that does not inflate, and an encoding the API does not decode.
    expectError(await issue('not gzip', { 'content-encoding': 'gzip' }), 400, 'bad_request_error')
    expectError(await issue('{}', { 'content-encoding': 'bogus' }), 415, 'unsupported_content_encoding_error', {
      content_encoding: 'bogus',
    })
    expectError(
      await issue(gzipSync('{"api_key":"nope"}'), { 'content-encoding': 'gzip' }),
      401,
      'auth_invalid_api_key_error',
    )
    // Over the 1 MiB limit: refused with the limit in details.
    expectError(await issue(Buffer.alloc(API_BODY_LIMIT + 1, 'a')), 413, 'request_too_large_error', {
      limit_bytes: API_BODY_LIMIT,
    })
    await assertAlive(platform)
  })

  await t.test('an oversized body is refused as soon as it passes the limit, never read to its end', async () => {
    // Bodies are sent only a little past the limit and left open (no end, no terminating chunk): an answer
    // proves the server did not wait for the rest. (Sending far more than the server reads would race
    // its close: the client's kernel may drop the answer on the reset that unread bytes cause.)
    const past = 8 * 1024
    // Declared 100 MiB, nothing sent: refused from the header alone, on the API's routes and the passthrough.
    const declared = await rawExchange(
      api,
      `POST /v1/auth/issue HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n`,
    )
    assertError(declared, 413, 'request_too_large_error', { limit_bytes: API_BODY_LIMIT })
    const declaredChain = await rawExchange(
      api,
      `POST /v1/chain/get_info HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n`,
    )
    assertError(declaredChain, 413, 'request_too_large_error', { limit_bytes: CHAIN_BODY_LIMIT })
    // Chunked, no length: refused once the bytes read pass 1 MiB.
    const chunked = await rawExchange(
      api,
      'POST /v1/auth/issue HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
      bodyChunks(API_BODY_LIMIT + past, 64 * 1024, chunkFrame),
    )
    assertError(chunked, 413, 'request_too_large_error', { limit_bytes: API_BODY_LIMIT })
    // Chunked past 8 MiB through the passthrough and the guaranteed push. The devchain hangs up at its own
    // 1 MiB limit: the answer is its 413 when that comes back in time, else ours once the rest of the body
    // passed our limit; never a 502 for the chain's hang-up, never a wait for the end of the body.
    // (Three times through the plain passthrough: whether the devchain's answer wins the race varies.)
    for (const [path, extra] of [
      ['/v1/chain/get_account', ''],
      ['/v1/chain/get_account', ''],
      ['/v1/chain/get_account', ''],
      ['/v1/chain/push_transaction', 'X-Eos-Push-Guarantee: in-block\r\n'],
    ]) {
      const answer = await rawExchange(
        api,
        `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n${extra}Transfer-Encoding: chunked\r\n\r\n`,
        bodyChunks(CHAIN_BODY_LIMIT + past, 64 * 1024, chunkFrame),
      )
      if (isChainError(answer.body)) assert.equal(answer.status, 413, answer.text)
      else assertError(answer, 413, 'request_too_large_error', { limit_bytes: CHAIN_BODY_LIMIT })
    }
    await assertAlive(platform)
  })

  await t.test('public GET routes: wrong methods, bodies and query strings', async () => {
    for (const [method, path, allowed] of [
      ['GET', '/v1/auth/issue', ['POST']],
      ['PUT', '/v1/auth/issue', ['POST']],
      ['DELETE', '/healthz', ['GET']],
      ['POST', '/healthz', ['GET']],
      ['POST', '/metrics', ['GET']],
      ['PATCH', '/openapi.json', ['GET']],
      ['POST', '/.well-known/jwks.json', ['GET']],
      ['PUT', '/v1/chain/get_info', ['GET', 'POST']],
      ['DELETE', '/v1/stream', ['GET']],
    ] as const) {
      const answer = await send(`${api}${path}`, { method, headers: bearer })
      expectError(answer, 405, 'method_not_allowed_error', { method, allowed })
      assert.equal(answer.headers.get('allow'), allowed.join(', '))
    }
    // A body or a garbage query on a GET route changes nothing.
    for (const path of ['/healthz', '/.well-known/jwks.json', '/openapi.json', '/metrics']) {
      assert.equal((await send(`${api}${path}?a=%zz&b[]=1&&=&c=${'q'.repeat(8000)}`)).status, 200, path)
    }
    // A bare OPTIONS (no preflight headers) is answered like a preflight, not with a text/plain 400.
    const options = await send(`${api}/healthz`, { method: 'OPTIONS' })
    assert.equal(options.status, 204, options.text)
  })

  await t.test('unknown paths, very long paths and percent-encoding garbage', async () => {
    expectError(await send(`${api}/nope`), 404, 'not_found_error', { path: '/nope' })
    expectError(await send(`${api}/v1/nope/${'a'.repeat(8000)}`), 404, 'not_found_error')
    expectError(await send(`${api}/nope?${'q=1&'.repeat(3000)}`), 404, 'not_found_error')
    expectError(await send(`${api}/v0/nope/nothing`, { headers: bearer }), 404, 'not_found_error')
    const head = await send(`${api}/nope`, { method: 'HEAD' })
    assert.equal(head.status, 404)
    assert.match(head.headers.get('x-trace-id') ?? '', /^[0-9a-f]{32}$/)
    for (const path of ['/%zz', '/%', '/v1/%E0%A4%A', '/healthz%', '/v1/chain/%zz', '/.well-known/%c0%af']) {
      expectError(await send(`${api}${path}`, { headers: bearer }), 400, 'bad_request_error')
    }
    await assertAlive(platform)
  })

  await t.test('/v1/chain/*: garbage tokens and headers are 401 auth_invalid_token_error with a reason', async (st) => {
    const forged = await forgedTokens(platform, token)
    const getInfo = (headers: Record<string, string>, query = '') =>
      send(`${chain}/get_info${query}`, { method: 'POST', headers })
    const cases: [string, Record<string, string>, string, string][] = [
      ['no token', {}, '', 'missing'],
      ['Bearer with nothing', { authorization: 'Bearer' }, '', 'malformed'],
      ['Bearer garbage', { authorization: 'Bearer garbage' }, '', 'malformed'],
      ['Bearer a.b.c', { authorization: 'Bearer a.b.c' }, '', 'malformed'],
      ['Basic', { authorization: 'Basic dXNlcjpwYXNz' }, '', 'malformed'],
      ['three words', { authorization: `Bearer ${token} extra` }, '', 'malformed'],
      ['?token= garbage', {}, '?token=garbage', 'malformed'],
      ['?token= twice', {}, `?token=${token}&token=${token}`, 'malformed'],
      ['?token[]=', {}, `?token[]=${token}`, 'missing'],
      ...Object.entries(forged).map(([name, forgedToken]): [string, Record<string, string>, string, string] => [
        name,
        { authorization: `Bearer ${forgedToken}` },
        '',
        name === 'header_not_json' ? 'malformed' : 'bad_signature',
      ]),
      ...Object.entries(forged).map(([name, forgedToken]): [string, Record<string, string>, string, string] => [
        `${name} in ?token=`,
        {},
        `?token=${forgedToken}`,
        name === 'header_not_json' ? 'malformed' : 'bad_signature',
      ]),
    ]
    for (const [name, headers, query, reason] of cases) {
      await st.test(name, async () => {
        expectError(await getInfo(headers, query), 401, 'auth_invalid_token_error', { reason })
      })
    }
    // Repeated Authorization headers (Node keeps the first): refused whichever comes first.
    for (const pair of [
      [token, 'garbage'],
      ['garbage', token],
      [token, token],
    ]) {
      const answer = await rawExchange(
        api,
        `GET /v1/chain/get_info HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${pair[0]}\r\nAuthorization: Bearer ${pair[1]}\r\nConnection: close\r\n\r\n`,
      )
      assertError(answer, 401, 'auth_invalid_token_error', { reason: 'malformed' })
    }
    // The same token alone is fine: the refusals above were about the input, not the token.
    assert.equal((await getInfo(bearer)).status, 200)
    await assertAlive(platform)
  })

  await t.test(
    '/v1/chain/*: bad bodies reach the chain, whose refusals keep nodeos shape; ours stay standard',
    async () => {
      const post = (path: string, body: string | Buffer | undefined, headers: Record<string, string> = {}) =>
        send(`${chain}/${path}`, { method: 'POST', headers: { ...bearer, ...headers }, body })
      for (const body of [
        '{',
        '[]',
        '"x"',
        '{"account_name":12}',
        '{"account_name":"' + 'a'.repeat(100_000) + '"}',
        '\u0000',
      ])
        expectChainError(await post('get_account', body), 400)
      expectChainError(await post('nope', '{}'), 404)
      expectChainError(await post('a'.repeat(5000), '{}'), 404)
      expectChainError(await post('get_block', '{"block_num_or_id":"zz"}'), 400)
      // Bodies are forwarded as sent, so a compressed one is refused (before, request decompression read it too:
      // a bad one came out as a 502, and a guaranteed push could wait for ever).
      expectError(
        await post('get_info', '{}', { 'content-encoding': 'bogus' }),
        415,
        'unsupported_content_encoding_error',
      )
      expectError(
        await post('get_account', 'not gzip', { 'content-encoding': 'gzip' }),
        415,
        'unsupported_content_encoding_error',
        { content_encoding: 'gzip' },
      )
      expectError(
        await post('get_account', gzipSync('{"account_name":"eosio"}'), { 'content-encoding': 'gzip' }),
        415,
        'unsupported_content_encoding_error',
      )
      expectError(
        await post('push_transaction', 'true', { 'content-encoding': 'br', 'x-eos-push-guarantee': 'in-block' }),
        415,
        'unsupported_content_encoding_error',
        { content_encoding: 'br' },
      )
      expectError(
        await send(`${chain}/get_info`, { method: 'DELETE', headers: bearer }),
        405,
        'method_not_allowed_error',
      )
      await assertAlive(platform)
    },
  )

  await t.test(
    'POST /v1/chain/push_transaction with X-Eos-Push-Guarantee: bad guarantees and non-transactions',
    async (st) => {
      const push = (guarantee: string, body: string, headers: Record<string, string> = bearer) =>
        send(`${chain}/push_transaction`, {
          method: 'POST',
          headers: { ...headers, 'x-eos-push-guarantee': guarantee },
          body,
        })
      expectError(await push('in-block', '{}', {}), 401, 'auth_invalid_token_error', { reason: 'missing' })
      expectError(await push('in-block', '{}', { authorization: 'Bearer garbage' }), 401, 'auth_invalid_token_error', {
        reason: 'malformed',
      })
      for (const guarantee of [
        'handoffs:9',
        'handoffs:0',
        'handoff:4',
        'foo',
        '',
        'in-block, irreversible',
        'IN-BLOCK ',
        'x'.repeat(4000),
      ]) {
        await st.test(`guarantee ${JSON.stringify(guarantee.slice(0, 30))}`, async () => {
          expectError(await push(guarantee, '{}'), 400, 'push_invalid_guarantee_error', { value: guarantee.trim() })
        })
      }
      expectError(await push('in-block', ''), 400, 'missing_body_error')
      expectError(await push('in-block', '   '), 400, 'missing_body_error')
      expectError(await push('in-block', '{'), 400, 'invalid_json_error')
      for (const body of [
        'null',
        '[]',
        '"x"',
        '12',
        '{}',
        '{"signatures":12}',
        '{"signatures":[],"packed_trx":"zz","compression":"none"}',
        '{"signatures":[],"packed_trx":"00","compression":"none"}',
        '{"signatures":["SIG_K1_x"],"packed_trx":"","compression":"none"}',
        '{"transaction":{"actions":[]}}',
      ]) {
        await st.test(`body ${body}`, async () => {
          expectError(await push('irreversible', body), 400, 'push_invalid_transaction_error')
        })
      }
      expectError(await push('handoffs:3', 'a'.repeat(CHAIN_BODY_LIMIT + 1)), 413, 'request_too_large_error', {
        limit_bytes: CHAIN_BODY_LIMIT,
      })
      await assertAlive(platform)
    },
  )

  await t.test('malformed HTTP on a raw socket: the standard error object, not the framework shape', async (st) => {
    const cases: [string, string, number, string][] = [
      ['bad request line', 'GARBAGE\r\n\r\n', 400, 'bad_request_error'],
      ['method only', 'GET\r\n\r\n', 400, 'bad_request_error'],
      ['bad version', 'GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n', 400, 'bad_request_error'],
      ['space in the path', 'GET /heal thz HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'bad_request_error'],
      ['path without a slash', 'GET healthz HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'bad_request_error'],
      [
        'oversize headers',
        `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`,
        431,
        'request_header_too_large_error',
      ],
      [
        'oversize URL',
        `GET /${'a'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
        431,
        'request_header_too_large_error',
      ],
      ['invalid header name', 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-B\u0001d: a\r\n\r\n', 400, 'bad_request_error'],
      [
        'NUL in a header value',
        'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0000b\r\n\r\n',
        400,
        'bad_request_error',
      ],
      ['header without colon', 'GET /healthz HTTP/1.1\r\nHost: x\r\nnocolon\r\n\r\n', 400, 'bad_request_error'],
      ['HTTP/1.1 without Host', 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n', 400, 'bad_request_error'],
      [
        'bad Content-Length',
        'POST /v1/auth/issue HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
        400,
        'bad_request_error',
      ],
      [
        'two Content-Lengths',
        'POST /v1/auth/issue HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
        400,
        'bad_request_error',
      ],
      [
        'Content-Length and chunked',
        'POST /v1/auth/issue HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
        400,
        'bad_request_error',
      ],
      [
        'bad chunk size',
        'POST /v1/auth/issue HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
        400,
        'bad_request_error',
      ],
      ['bad percent-encoding', 'GET /%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 400, 'bad_request_error'],
    ]
    for (const [name, payload, status, code] of cases) {
      await st.test(name, async () => {
        assertError(await rawExchange(api, Buffer.from(payload, 'latin1')), status, code)
      })
    }
    // A body shorter than its Content-Length, then the client's end: the parser's error is answered; the
    // route reading the body sees the connection go (Node's `aborted`), which is no server fault.
    for (const path of ['/v1/auth/issue', '/v1/chain/get_account']) {
      const short = await rawExchange(
        api,
        `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Length: 100\r\n\r\n{}`,
        undefined,
        { halfClose: true },
      )
      assertError(short, 400, 'bad_request_error')
    }
    await assertAlive(platform)
  })

  await t.test('WebSocket upgrades: refused at the upgrade with a 401 and the standard error object', async (st) => {
    const ws = api.replace(/^http/, 'ws')
    await expectUpgradeRefused(`${ws}/v1/stream`, {}, 'missing')
    await expectUpgradeRefused(`${ws}/v1/stream?token=garbage`, {}, 'malformed')
    await expectUpgradeRefused(`${ws}/v1/stream`, { authorization: 'Bearer garbage' }, 'malformed')
    await expectUpgradeRefused(`${ws}/v1/stream`, { authorization: `Basic ${token}` }, 'malformed')
    await expectUpgradeRefused(`${ws}/v1/stream?token=${token}&token=x`, {}, 'malformed')
    await expectUpgradeRefused(`${ws}/graphql?token=garbage`, {}, 'malformed')
    await expectUpgradeRefused(`${ws}/graphql`, { authorization: 'Bearer garbage' }, 'malformed')
    const forged = await forgedTokens(platform, token)
    await expectUpgradeRefused(`${ws}/v1/stream?token=${forged.alg_none}`, {}, 'bad_signature')
    await expectUpgradeRefused(`${ws}/graphql?token=${forged.other_es256_key}`, {}, 'bad_signature')

    // /graphql takes its token in connection_init when the upgrade offers none: garbage there is a connection_error.
    const graphql = await upgrade(`${ws}/graphql`)
    assert.ok(graphql.opened)
    graphql.socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: 'Bearer garbage' } }))
    const refusal = await nextMessage(graphql.socket)
    assert.equal(refusal.type, 'connection_error')
    assert.ok(isStandardError(refusal.payload), JSON.stringify(refusal))
    // A frame that is not JSON is answered with an error frame; the socket stays usable.
    graphql.socket.send('{not json')
    const notJson = await nextMessage(graphql.socket)
    assert.equal(notJson.type, 'error', JSON.stringify(notJson))
    graphql.socket.close()

    // An admitted /v1/stream answers garbage frames with error messages carrying the standard object.
    const stream = await upgrade(`${ws}/v1/stream?token=${token}`)
    assert.ok(stream.opened)
    for (const frame of ['{not json', '[]', '{"type":12}', '{"type":"nope","req_id":"r1"}', Buffer.from([0, 1, 2])]) {
      stream.socket.send(frame)
      const message = await nextMessage(stream.socket)
      assert.equal(message.type, 'error', JSON.stringify(message))
      assert.ok(isStandardError(message.data), JSON.stringify(message))
      assertNoLeak(JSON.stringify(message))
    }
    stream.socket.close()

    // A handshake ws itself refuses (after auth admitted it), and a plain GET: standard objects too.
    for (const [name, headers] of [
      [
        'bad Sec-WebSocket-Key',
        'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: x\r\n',
      ],
      [
        'bad Sec-WebSocket-Version',
        'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 99\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n',
      ],
      ['Upgrade: h2c', 'Upgrade: h2c\r\nConnection: Upgrade\r\n'],
      [
        'bad subprotocol list',
        'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: ,,\r\n',
      ],
    ]) {
      await st.test(name, async () => {
        assertError(
          await rawExchange(api, `GET /v1/stream?token=${token} HTTP/1.1\r\nHost: x\r\n${headers}\r\n`),
          400,
          'ws_upgrade_failed_error',
        )
      })
    }
    // dfuse's code and status for a plain GET of its WebSocket endpoint, with the reason its library gave.
    const notUpgraded = /^the client is not using the websocket protocol/
    const body = expectError(await send(`${api}/v1/stream?token=${token}`), 400, 'ws_upgrade_failed_error')
    assert.match(String(body.details?.reason), notUpgraded)
    // /graphql answers GET queries: a plain GET without one is a GraphQL error (HTTP 200, as dfuse answered).
    const plain = await send(`${api}/graphql`, { headers: { authorization: `Bearer ${token}` } })
    assert.equal(plain.status, 200)
    assert.equal(
      (plain.body as { errors: { extensions: { code: string } }[] }).errors[0].extensions.code,
      'InvalidArgument',
    )
    expectError(await send(`${api}/v1/stream`), 401, 'auth_invalid_token_error', { reason: 'missing' })
    await assertAlive(platform)
  })

  await t.test('fuzz: random and mutated bodies and headers at /v1/auth/issue and the passthrough', async (st) => {
    const seed = Number(process.env.ANTLER_FUZZ_SEED ?? randomBytes(4).readUInt32LE(0))
    st.diagnostic(`fuzz seed ${seed} (rerun with ANTLER_FUZZ_SEED=${seed})`)
    console.log(`bad-input fuzz seed ${seed} (rerun with ANTLER_FUZZ_SEED=${seed})`)
    const fuzz = new Fuzz(mulberry32(seed))
    const validIssue = JSON.stringify({ api_key: `server_${'0'.repeat(64)}` })
    const validChain = JSON.stringify({ account_name: 'eosio', code: 'eosio.token', json: true })
    const authorizations = [
      undefined,
      `Bearer ${token}`,
      `Bearer ${token}`,
      `Bearer ${token}`,
      `Bearer ${token}`,
      `Bearer ${token.slice(0, -3)}xyz`,
      'Bearer',
      `bearer  ${token}`,
      `Basic ${token}`,
      `Bearer ${'a.'.repeat(2000)}`,
      'Bearer e30.e30.',
      'Bearer .....',
    ]
    const contentTypes = [
      undefined,
      'application/json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/json; charset=utf-16',
      '*/*',
      ';;;',
      'application/octet-stream',
    ]
    const encodings = [undefined, undefined, undefined, 'gzip', 'deflate', 'br', 'identity', 'compress', 'gzip, gzip']
    const guarantees = [undefined, undefined, undefined, 'in-block', 'handoffs:2', 'handoffs:9', 'irreversible', 'zz']
    const paths = [
      '/v1/auth/issue',
      '/v1/auth/issue',
      '/v1/chain/get_account',
      '/v1/chain/get_table_rows',
      '/v1/chain/push_transaction',
      '/v1/chain/get_block',
      '/v1/chain/%41bc',
      `/v1/chain/${percentEncoded(fuzz.string(20))}`,
    ]
    const requests = Array.from({ length: 300 }, (_, i) => {
      const path = fuzz.pick(paths)
      const headers: Record<string, string> = {}
      const authorization = fuzz.pick(authorizations)
      if (authorization) headers.authorization = authorization
      const contentType = fuzz.pick(contentTypes)
      if (contentType) headers['content-type'] = contentType
      const encoding = fuzz.pick(encodings)
      if (encoding) headers['content-encoding'] = encoding
      const guarantee = fuzz.pick(guarantees)
      if (guarantee) headers['x-eos-push-guarantee'] = guarantee
      if (fuzz.int(4) === 0)
        headers[`x-${printable(fuzz.string(10)).replace(/[^a-z0-9-]/gi, '') || 'fuzz'}`] = printable(fuzz.string(200))
      const query = fuzz.int(4) === 0 ? `?token=${percentEncoded(fuzz.string(30))}` : ''
      return {
        i,
        path: `${path}${query}`,
        method: fuzz.int(8) === 0 ? 'GET' : 'POST',
        headers,
        body: fuzz.body(path.startsWith('/v1/auth') ? validIssue : validChain),
      }
    })
    let next = 0
    const failures: string[] = []
    const seen = new Map<string, number>()
    const worker = async () => {
      while (next < requests.length) {
        const request = requests[next++]
        const headers = JSON.stringify(request.headers).slice(0, 200)
        const body = JSON.stringify(String(request.body).slice(0, 80))
        const what = `#${request.i} ${request.method} ${request.path.slice(0, 80)} ${headers} body ${body}`
        let answer: Answer
        try {
          answer = await send(`${api}${request.path}`, {
            method: request.method,
            headers: request.headers,
            body: request.method === 'GET' ? undefined : request.body,
          })
        } catch (error) {
          failures.push(`${what}: no answer (${(error as Error).message})`)
          continue
        }
        const outcome = `${answer.status} ${(answer.body as { code?: unknown } | undefined)?.code ?? ''}`
        seen.set(outcome, (seen.get(outcome) ?? 0) + 1)
        try {
          assertNoLeak(answer.text)
          if (answer.status >= 200 && answer.status < 300) continue
          const passthrough = request.path.startsWith('/v1/chain/')
          if (passthrough && isChainError(answer.body)) continue
          expectError(answer, answer.status, (answer.body as ErrorBody | undefined)?.code ?? '?')
          assert.ok(answer.status < 500, `a 5xx that is not the chain's: ${answer.text}`)
        } catch (error) {
          failures.push(`${what}: ${(error as Error).message.split('\n')[0]}`)
        }
      }
    }
    await Promise.all(Array.from({ length: 8 }, worker))
    st.diagnostic(`answers: ${[...seen].map(([outcome, n]) => `${outcome} ×${n}`).join(', ')}`)
    assert.deepEqual(failures, [], `seed ${seed}: ${failures.length} bad answers`)
    await assertAlive(platform)
  })

  assert.equal(platform.cli.child.exitCode, null, 'the platform is still running')
  await assertAlive(platform)
  // Every failure above was answered on purpose: none reached the catch-all, which logs "unexpected error".
  assert.doesNotMatch(platform.cli.stderr(), /unexpected error/, 'no unexpected_error in the log')
})
