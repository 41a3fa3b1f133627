import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createPublicKey } from 'node:crypto'
import WebSocket from 'ws'
import { SignJWT, decodeJwt, decodeProtectedHeader, generateKeyPair, type JWK } from 'jose'
import { InMemoryApiTokenStore } from '@dfuse/client'
import {
  antlerKeys,
  dfuseClient,
  isStandardError,
  issueToken,
  type Platform,
  startPlatform,
} from '../_helpers/platform.ts'

// @dfuse/client looks for a WebSocket class when it is created, even for REST-only use.
;(globalThis as { WebSocket?: unknown }).WebSocket = WebSocket

const TOKEN_TTL_S = 5
/** Waits, if needed, until at least 15 s remain in the current fixed window of `windowMs`. */
async function awayFromWindowEnd(windowMs: number): Promise<void> {
  const left = windowMs - (Date.now() % windowMs)
  if (left < 15_000) await new Promise((resolve) => setTimeout(resolve, left + 50))
}

const LIMITS = {
  issuancePerKey: {
    server: { limit: 4, windowMs: 3_600_000 },
    web: { limit: 5, windowMs: 60_000 },
    mobile: { limit: 8, windowMs: 60_000 },
  },
  issuancePerIp: { limit: 10_000, windowMs: 60_000 },
  callsPerIp: { web: { limit: 30, windowMs: 60_000 } },
}
const DAPP = 'https://dapp.example'

type Answer = { status: number; headers: Headers; body: Record<string, unknown> }

async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(url, { method: 'POST', ...init, signal: AbortSignal.timeout(10_000) })
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  }
}

/** `POST /v1/chain/get_info` through the passthrough with the token as a Bearer header. */
const getInfo = (p: Platform, token: string, headers: Record<string, string> = {}) =>
  call(`${p.api}/v1/chain/get_info`, { headers: { authorization: `Bearer ${token}`, ...headers } })

function assertRefused(answer: Answer, status: number, code: string, reason?: string): void {
  assert.equal(answer.status, status, JSON.stringify(answer.body))
  assert.ok(isStandardError(answer.body), `standard error object: ${JSON.stringify(answer.body)}`)
  assert.equal(answer.body.code, code)
  assert.equal(answer.headers.get('x-trace-id'), answer.body.trace_id)
  if (reason) assert.equal((answer.body.details as { reason?: string }).reason, reason)
}

/** Opens a WebSocket and reports either the open socket or the HTTP refusal of the upgrade. */
function upgrade(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ socket: WebSocket } | { status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers, handshakeTimeout: 10_000 })
    socket.once('open', () => resolve({ socket }))
    socket.once('unexpected-response', (_request, response) => {
      let text = ''
      response.on('data', (d: Buffer) => (text += d))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }))
    })
    socket.once('error', (error) => reject(error))
  })
}

async function assertUpgradeRefused(url: string, headers: Record<string, string>, reason: string): Promise<void> {
  const result = await upgrade(url, headers)
  assert.ok(!('socket' in result), `the upgrade to ${url} is refused`)
  assert.equal(result.status, 401)
  assert.ok(isStandardError(result.body))
  assert.equal(result.body.code, 'auth_invalid_token_error')
  assert.equal((result.body.details as { reason: string }).reason, reason)
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

/** Tokens a forger could make from a real token and the published key. */
async function forgeries(p: Platform, real: string): Promise<Record<string, string>> {
  const header = decodeProtectedHeader(real)
  const claims = decodeJwt(real)
  const [, , signature] = real.split('.')
  const jwks = (await call(`${p.api}/.well-known/jwks.json`, { method: 'GET' })).body as { keys: JWK[] }
  const published = jwks.keys[0]
  const publicPem = createPublicKey({ key: published as import('node:crypto').JsonWebKey, format: 'jwk' }).export({
    type: 'spki',
    format: 'pem',
  })
  const other = await generateKeyPair('ES256')
  return {
    'alg none': `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims)}.`,
    'HS256 keyed with the public key': await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: header.kid })
      .sign(Buffer.from(String(publicPem))),
    'another ES256 key': await new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: header.kid })
      .sign(other.privateKey),
    'a modified payload': `${real.split('.')[0]}.${b64url({ ...claims, usg: 'server', exp: (claims.exp ?? 0) + 86_400 * 300 })}.${signature}`,
  }
}

test('auth end to end on a running antler dev: @dfuse/client issue and refresh, every refusal on REST and at the WebSocket upgrades, keys made and revoked while it runs, issuance and call limits, origin rules', async (t) => {
  const p = await startPlatform(t, ['--rate-limits', JSON.stringify(LIMITS)])
  // Server keys may issue 4 tokens an hour here: checks take their tokens from this mobile key.
  const helperKey = antlerKeys(p, ['create', '--type', 'mobile', '--name', 'helper']).trim().split('\n').at(-1)!
  const freshToken = () => issueToken(p, helperKey)

  await t.test(
    '@dfuse/client authIssue (text/plain JSON) gets a token that works; expires_at is UNIX seconds, 24 h ahead by default',
    async (st) => {
      const client = dfuseClient(st, p)
      const issued = await client.authIssue(p.apiKey)
      const nowS = Date.now() / 1000
      assert.ok(Math.abs(issued.expires_at - (nowS + 86_400)) < 5, `expires_at ${issued.expires_at} ≈ now + 24 h`)
      assert.equal((await getInfo(p, issued.token)).status, 200)
      const claims = decodeJwt(issued.token)
      assert.equal(claims.usg, 'server')
      assert.equal(decodeProtectedHeader(issued.token).alg, 'ES256')
    },
  )

  await t.test(
    'missing, malformed and forged tokens are 401 auth_invalid_token_error with the reason, on REST and at both WebSocket upgrades',
    async () => {
      const devToken = await freshToken()
      const stream = `${p.api.replace('http', 'ws')}/v1/stream`
      const graphql = `${p.api.replace('http', 'ws')}/graphql`
      assertRefused(await call(`${p.api}/v1/chain/get_info`), 401, 'auth_invalid_token_error', 'missing')
      await assertUpgradeRefused(stream, {}, 'missing')
      for (const headers of Object.values({
        'garbage bearer': { authorization: 'Bearer not.a.jwt' },
        'Basic scheme': { authorization: 'Basic YWxpY2U6Ym9i' },
        'three words': { authorization: `Bearer ${devToken} x` },
      })) {
        assertRefused(
          await call(`${p.api}/v1/chain/get_info`, { headers }),
          401,
          'auth_invalid_token_error',
          'malformed',
        )
        await assertUpgradeRefused(stream, headers, 'malformed')
        await assertUpgradeRefused(graphql, headers, 'malformed')
      }
      assertRefused(
        await call(`${p.api}/v1/chain/get_info?token=garbage`),
        401,
        'auth_invalid_token_error',
        'malformed',
      )
      await assertUpgradeRefused(`${stream}?token=garbage`, {}, 'malformed')
      for (const [what, forged] of Object.entries(await forgeries(p, devToken))) {
        const answer = await getInfo(p, forged)
        assertRefused(answer, 401, 'auth_invalid_token_error')
        assert.ok(
          ['bad_signature', 'malformed'].includes((answer.body.details as { reason: string }).reason),
          `${what}: ${JSON.stringify(answer.body)}`,
        )
        const ws = await upgrade(`${stream}?token=${forged}`)
        assert.ok(
          !('socket' in ws) && ws.status === 401 && ws.body.code === 'auth_invalid_token_error',
          `${what} at the upgrade`,
        )
        const gql = await upgrade(graphql, { authorization: `Bearer ${forged}` })
        assert.ok(!('socket' in gql) && gql.status === 401, `${what} at the GraphQL upgrade`)
      }
      // The real token passes everywhere the forgeries failed.
      assert.equal((await getInfo(p, devToken)).status, 200)
      const open = await upgrade(`${stream}?token=${devToken}`)
      assert.ok('socket' in open)
      open.socket.close()
    },
  )

  await t.test(
    "antler keys create works for each type while the platform runs; revoke fails the key's new and existing tokens",
    async () => {
      const created: Record<string, { id: string; key: string; type: string }> = {}
      for (const type of ['server', 'web', 'mobile']) {
        const out = JSON.parse(
          antlerKeys(p, [
            'create',
            '--type',
            type,
            '--name',
            `e2e-${type}`,
            '--json',
            ...(type === 'web' ? ['--origin', DAPP] : []),
          ]),
        )
        assert.ok(out.key.startsWith(`${type}_`), out.key)
        assert.ok(out.key.length >= type.length + 1 + 43, 'at least 256 bits of randomness in the key')
        created[type] = out
        const token = await issueToken(p, out.key, type === 'web' ? { origin: DAPP } : {})
        assert.equal(decodeJwt(token).usg, type)
        assert.equal(
          (await getInfo(p, token, type === 'web' ? { origin: DAPP } : {})).status,
          200,
          `${type} key's token works`,
        )
      }
      const listed = antlerKeys(p, ['list'])
      for (const type of ['server', 'web', 'mobile'])
        assert.ok(listed.includes(created[type].id), `keys list shows ${created[type].id}`)

      const mobile = created.mobile
      const token = await issueToken(p, mobile.key)
      assert.equal((await getInfo(p, token)).status, 200)
      antlerKeys(p, ['revoke', mobile.id])
      // Revocations reach the API within its refresh interval (1 s).
      const deadline = Date.now() + 5000
      let answer = await getInfo(p, token)
      while (answer.status === 200 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200))
        answer = await getInfo(p, token)
      }
      assertRefused(answer, 401, 'auth_invalid_token_error', 'revoked')
      assertRefused(
        await call(`${p.api}/v1/auth/issue`, { body: JSON.stringify({ api_key: mobile.key }) }),
        401,
        'auth_invalid_api_key_error',
      )
      assertRefused(
        await call(`${p.api}/v1/auth/issue`, { body: JSON.stringify({ api_key: 'server_' + '0'.repeat(64) }) }),
        401,
        'auth_invalid_api_key_error',
      )
      assert.equal((await getInfo(p, await freshToken())).status, 200, 'other keys are untouched')
    },
  )

  await t.test(
    'issuance floods reach 429 rate_limit_exceeded_error with Retry-After, per key and type; tokens issued before keep working',
    async () => {
      for (const [type, limit] of [
        ['server', 4],
        ['web', 5],
        ['mobile', 8],
      ] as const) {
        const key = antlerKeys(p, [
          'create',
          '--type',
          type,
          '--name',
          `flood-${type}`,
          ...(type === 'web' ? ['--origin', DAPP] : []),
        ])
          .trim()
          .split('\n')
          .at(-1)!
        const headers: Record<string, string> = type === 'web' ? { origin: DAPP } : {}
        // Issuance windows are fixed and aligned to the epoch: a flood that straddles a window's end would be let
        // through, so it starts with the whole flood's time left in the window.
        await awayFromWindowEnd(LIMITS.issuancePerKey[type].windowMs)
        const tokens: string[] = []
        for (let i = 0; i < limit; i++) tokens.push(await issueToken(p, key, headers))
        const refused = await call(`${p.api}/v1/auth/issue`, { headers, body: JSON.stringify({ api_key: key }) })
        assertRefused(refused, 429, 'rate_limit_exceeded_error')
        assert.equal(
          refused.headers.get('x-ratelimit-limit'),
          String(limit),
          `${type}: X-RateLimit-Limit on the refusal`,
        )
        assert.equal(refused.headers.get('x-ratelimit-remaining'), '0')
        const retryAfter = Number(refused.headers.get('retry-after'))
        assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After ${refused.headers.get('retry-after')}`)
        assert.equal(
          (await getInfo(p, tokens[0], headers)).status,
          200,
          `${type}: a token issued before the flood still works`,
        )
      }
    },
  )

  await t.test(
    'a web key: its token from a foreign Origin is 403, from its Origin it works with CORS; its calls per IP reach 429 with X-RateLimit headers',
    async () => {
      const key = antlerKeys(p, ['create', '--type', 'web', '--name', 'dapp', '--origin', DAPP])
        .trim()
        .split('\n')
        .at(-1)!
      assertRefused(
        await call(`${p.api}/v1/auth/issue`, {
          headers: { origin: 'https://evil.example' },
          body: JSON.stringify({ api_key: key }),
        }),
        403,
        'auth_origin_not_allowed_error',
      )
      const token = await issueToken(p, key, { origin: DAPP })
      assertRefused(await getInfo(p, token, { origin: 'https://evil.example' }), 403, 'auth_origin_not_allowed_error')
      const ok = await getInfo(p, token, { origin: DAPP })
      assert.equal(ok.status, 200)
      assert.equal(ok.headers.get('access-control-allow-origin'), DAPP)
      assert.equal(ok.headers.get('x-ratelimit-limit'), '30')
      const preflight = await fetch(`${p.api}/v1/chain/get_info`, {
        method: 'OPTIONS',
        headers: {
          origin: DAPP,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization',
        },
      })
      assert.equal(preflight.status, 204)
      assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /authorization/i)

      // Windows are aligned to the minute: 61 calls reach the limit even when one boundary falls among them.
      let last: Answer = ok
      for (let i = 0; i < 70 && last.status === 200; i++) last = await getInfo(p, token, { origin: DAPP })
      assertRefused(last, 429, 'rate_limit_exceeded_error')
      assert.equal(last.headers.get('x-ratelimit-remaining'), '0')
      assert.ok(Number(last.headers.get('retry-after')) >= 1)
      assert.ok(Number(last.headers.get('x-ratelimit-reset')) > Date.now() / 1000)
      // Another key on the same IP is not limited by this one's calls.
      assert.equal((await getInfo(p, await freshToken())).status, 200)
    },
  )

  await t.test('CORS: public routes answer any page with *, token routes echo the Origin', async () => {
    const jwks = await fetch(`${p.api}/.well-known/jwks.json`, { headers: { origin: 'https://any.example' } })
    assert.equal(jwks.headers.get('access-control-allow-origin'), '*')
    const health = await fetch(`${p.api}/healthz`, { headers: { origin: 'https://any.example' } })
    assert.equal(health.headers.get('access-control-allow-origin'), '*')
    const info = await getInfo(p, await freshToken(), { origin: 'https://any.example' })
    assert.equal(info.headers.get('access-control-allow-origin'), 'https://any.example')
  })

  await t.test('/metrics counts the tokens issued and the limits hit', async () => {
    const text = await (await fetch(`${p.api}/metrics`)).text()
    assert.match(text, /tokens_issued/)
    assert.match(text, /rate_limit/)
  })
})

test('tokens of a short --token-ttl: @dfuse/client refreshes before expiry, an expired token is refused, an open stream socket outlives its token', async (t) => {
  const p = await startPlatform(t, ['--token-ttl', String(TOKEN_TTL_S)])
  await t.test(
    '@dfuse/client refreshes its token before expiry and keeps calling the passthrough with the new one',
    async (st) => {
      const mobileKey = antlerKeys(p, ['create', '--type', 'mobile', '--name', 'refresh']).trim().split('\n').at(-1)!
      const store = new InMemoryApiTokenStore()
      const client = dfuseClient(st, p, { apiKey: mobileKey, apiTokenStore: store })
      const first = await client.apiRequest<{ chain_id: string }>('/v1/chain/get_info', 'POST')
      assert.equal(first.chain_id, p.chainId)
      const before = (await store.get())!.token
      await new Promise((resolve) => setTimeout(resolve, TOKEN_TTL_S * 1000 + 500))
      const after = (await store.get())!.token
      assert.notEqual(after, before, 'the client issued a new token on its refresh timer')
      assert.equal((await client.apiRequest<{ chain_id: string }>('/v1/chain/get_info', 'POST')).chain_id, p.chainId)
      // The old token has expired meanwhile: refused, and the reason says so.
      assertRefused(await getInfo(p, before), 401, 'auth_invalid_token_error', 'expired')
      await assertUpgradeRefused(`${p.api.replace('http', 'ws')}/v1/stream?token=${before}`, {}, 'expired')
    },
  )
  await t.test('a token is checked once per connection: a stream socket outlives its token', async () => {
    const mobileKey = antlerKeys(p, ['create', '--type', 'mobile', '--name', 'long-socket']).trim().split('\n').at(-1)!
    const token = await issueToken(p, mobileKey)
    const opened = await upgrade(`${p.api.replace('http', 'ws')}/v1/stream?token=${token}`)
    assert.ok('socket' in opened)
    const { socket } = opened
    const closed = new Promise<boolean>((resolve) => socket.once('close', () => resolve(true)))
    await new Promise((resolve) => setTimeout(resolve, TOKEN_TTL_S * 1000 + 500))
    assertRefused(await getInfo(p, token), 401, 'auth_invalid_token_error', 'expired')
    const reply = new Promise<Record<string, unknown>>((resolve) =>
      socket.once('message', (data: Buffer) => resolve(JSON.parse(String(data)))),
    )
    socket.send(JSON.stringify({ type: 'nonsense', req_id: 'r1' }))
    const message = await reply
    assert.equal(message.type, 'error', 'the socket still answers after its token expired')
    assert.equal(message.req_id, 'r1')
    assert.ok(isStandardError(message.data))
    assert.equal(
      await Promise.race([closed, new Promise((resolve) => setTimeout(() => resolve(false), 100))]),
      false,
      'still open',
    )
    socket.close()
  })
})

test('--no-auth serves the passthrough without a token and says so loudly at start', async (t) => {
  const p = await startPlatform(t, ['--no-auth', '--log-level', 'warn'])
  const answer = await call(`${p.api}/v1/chain/get_info`)
  assert.equal(answer.status, 200)
  assert.equal(answer.body.chain_id, p.chainId)
  assert.match(p.cli.stderr(), /--no-auth/)
})
