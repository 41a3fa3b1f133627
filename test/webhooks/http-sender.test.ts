import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo, Server, Socket } from 'node:net'
import type { TLSSocket } from 'node:tls'
import { parseAllowCidrs } from '../../src/webhooks/address-policy.ts'
import { resolveTarget, type Resolver } from '../../src/webhooks/target-check.ts'
import {
  createHttpSender,
  MAX_RESPONSE_BODY_CHARS,
  parseRetryAfter,
  type DeliveryRequest,
  type HttpSender,
} from '../../src/webhooks/http-sender.ts'

// Real servers on 127.0.0.1; the allow list is `loopback`, as an operator testing locally would set it.

const LOOPBACK = parseAllowCidrs('loopback')
const LOCAL = { address: '127.0.0.1', family: 4 } as const

interface Received {
  readonly method: string
  readonly url: string
  readonly headers: IncomingMessage['headers']
  readonly body: string
}

interface TestContext {
  after(fn: () => unknown): void
}

/** A server on 127.0.0.1 that records each request (once its body is read) before `handle` answers it. */
async function listen(t: TestContext, handle: (request: IncomingMessage, response: ServerResponse) => void) {
  const received: Received[] = []
  let connections = 0
  const server = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')))
    request.on('end', () => {
      received.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body })
      handle(request, response)
    })
  })
  server.on('connection', () => connections++)
  const port = await listenOn(server)
  t.after(() => {
    server.closeAllConnections()
    server.close()
  })
  return { port, received, connections: () => connections }
}

async function listenOn(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

function sender(t: TestContext): HttpSender {
  const created = createHttpSender()
  t.after(() => created.close())
  return created
}

function delivery(url: string, overrides: Partial<DeliveryRequest> = {}): DeliveryRequest {
  return {
    url: new URL(url),
    target: LOCAL,
    headers: { 'webhook-id': 'msg_1', 'webhook-timestamp': '1700000000', 'webhook-signature': 'v1,abc=' },
    body: '{"type":"test"}',
    timeoutMs: 5_000,
    ...overrides,
  }
}

test('a 2xx is ok: POST with the JSON body, the content type, the user agent and the message headers', async (t) => {
  const server = await listen(t, (_request, response) => response.writeHead(204).end())
  const outcome = await sender(t).send(
    delivery(`http://127.0.0.1:${server.port}/hooks/in?x=1`, { headers: { 'webhook-id': 'msg_1', Host: 'evil.test' } }),
  )
  assert.equal(outcome.ok, true)
  assert.equal(outcome.status, 204)
  assert.equal(outcome.error, null)
  assert.equal(outcome.responseBody, '')
  assert.equal(outcome.retryAfterMs, undefined)
  assert.ok(outcome.durationMs >= 0 && outcome.durationMs < 5_000)
  const [request] = server.received
  assert.equal(request.method, 'POST')
  assert.equal(request.url, '/hooks/in?x=1')
  assert.equal(request.body, '{"type":"test"}')
  assert.equal(request.headers['content-type'], 'application/json')
  assert.equal(request.headers['user-agent'], 'Antler-Webhooks/1')
  assert.equal(request.headers['webhook-id'], 'msg_1')
  // The Host header is the URL's, whatever the caller's headers say.
  assert.equal(request.headers.host, `127.0.0.1:${server.port}`)
})

test('a 500 is http_status, with the response body', async (t) => {
  const server = await listen(t, (_request, response) => response.writeHead(500).end('{"error":"boom"}'))
  const outcome = await sender(t).send(delivery(`http://127.0.0.1:${server.port}/`))
  assert.deepEqual(outcome, {
    ok: false,
    status: 500,
    durationMs: outcome.durationMs,
    error: 'http_status',
    responseBody: '{"error":"boom"}',
  })
})

test('a 302 is a redirect and is not followed: the server it points to sees no request', async (t) => {
  const elsewhere = await listen(t, (_request, response) => response.writeHead(200).end())
  const server = await listen(t, (_request, response) =>
    response.writeHead(302, { location: `http://127.0.0.1:${elsewhere.port}/caught` }).end('moved'),
  )
  const outcome = await sender(t).send(delivery(`http://127.0.0.1:${server.port}/`))
  assert.equal(outcome.ok, false)
  assert.equal(outcome.status, 302)
  assert.equal(outcome.error, 'redirect')
  assert.equal(outcome.responseBody, 'moved')
  await new Promise((resolve) => setTimeout(resolve, 100))
  assert.equal(server.received.length, 1)
  assert.equal(elsewhere.received.length, 0)
  assert.equal(elsewhere.connections(), 0)
})

test('a server that never answers is a timeout within the bound; so is a body that never ends', async (t) => {
  const silent = await listen(t, () => {})
  const outcome = await sender(t).send(delivery(`http://127.0.0.1:${silent.port}/`, { timeoutMs: 300 }))
  assert.equal(outcome.error, 'timeout')
  assert.equal(outcome.status, null)
  assert.equal(outcome.responseBody, null)
  assert.ok(outcome.durationMs >= 250 && outcome.durationMs < 2_000, `${outcome.durationMs} ms`)

  const stalled = await listen(t, (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' })
    response.write('started')
  })
  const stalledOutcome = await sender(t).send(delivery(`http://127.0.0.1:${stalled.port}/`, { timeoutMs: 300 }))
  assert.equal(stalledOutcome.error, 'timeout')
  assert.equal(stalledOutcome.ok, false)
  assert.equal(stalledOutcome.status, 200)
  assert.ok(stalledOutcome.durationMs < 2_000, `${stalledOutcome.durationMs} ms`)
})

test('a closed port is refused', async (t) => {
  const probe = createServer()
  const port = await listenOn(probe)
  await new Promise((resolve) => probe.close(resolve))
  const outcome = await sender(t).send(delivery(`http://127.0.0.1:${port}/`))
  assert.equal(outcome.error, 'refused')
  assert.equal(outcome.status, null)
  assert.match(outcome.errorMessage ?? '', /ECONNREFUSED/)
})

test('a server that destroys the socket is a reset', async (t) => {
  const server = await listen(t, (request) => request.socket.destroy())
  const outcome = await sender(t).send(delivery(`http://127.0.0.1:${server.port}/`))
  assert.equal(outcome.error, 'reset')
  assert.equal(outcome.status, null)
  assert.equal(outcome.ok, false)
})

test('a huge (here endless) body is cut at 20,000 characters and the rest is not read', async (t) => {
  // Multi-byte characters, so that a cut inside a chunk or a character would show.
  const chunk = '€'.repeat(16_384)
  const server = await listen(t, (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' })
    const pump = () => {
      while (!response.destroyed && response.write(chunk));
      if (!response.destroyed) response.once('drain', pump)
    }
    pump()
  })
  const outcome = await sender(t).send(delivery(`http://127.0.0.1:${server.port}/`, { timeoutMs: 3_000 }))
  assert.equal(outcome.ok, true)
  assert.equal(outcome.error, null)
  assert.equal(MAX_RESPONSE_BODY_CHARS, 20_000)
  assert.equal(outcome.responseBody, '€'.repeat(20_000))
  assert.ok(outcome.durationMs < 2_000, `${outcome.durationMs} ms`)
})

test('Retry-After is read in both forms, delta-seconds and an HTTP date', async (t) => {
  const inAMinute = new Date(Date.now() + 60_000).toUTCString()
  const server = await listen(t, (request, response) => {
    const value = request.url === '/seconds' ? '120' : inAMinute
    response.writeHead(request.url === '/seconds' ? 429 : 503, { 'retry-after': value }).end()
  })
  const send = sender(t)
  const seconds = await send.send(delivery(`http://127.0.0.1:${server.port}/seconds`))
  assert.equal(seconds.status, 429)
  assert.equal(seconds.error, 'http_status')
  assert.equal(seconds.retryAfterMs, 120_000)
  const date = await send.send(delivery(`http://127.0.0.1:${server.port}/date`))
  assert.equal(date.status, 503)
  assert.ok(date.retryAfterMs !== undefined && date.retryAfterMs > 55_000 && date.retryAfterMs <= 60_000)

  const now = Date.parse('Sun, 06 Nov 1994 08:49:37 GMT')
  assert.equal(parseRetryAfter('Sun, 06 Nov 1994 08:49:47 GMT', now), 10_000)
  assert.equal(parseRetryAfter('Sunday, 06-Nov-94 08:49:47 GMT', now), 10_000)
  // asctime's form names no zone: it is GMT, not local time (a zone set here, so that a UTC machine would tell).
  const zone = process.env.TZ
  process.env.TZ = 'America/New_York'
  try {
    assert.equal(parseRetryAfter('Sun Nov  6 08:49:47 1994', now), 10_000)
  } finally {
    if (zone === undefined) delete process.env.TZ
    else process.env.TZ = zone
  }
  assert.equal(parseRetryAfter('Sun, 06 Nov 1994 08:49:00 GMT', now), 0)
  assert.equal(parseRetryAfter(' 0 ', now), 0)
  for (const bad of [undefined, '', '1.5', '-5', 'soon', '5 minutes'])
    assert.equal(parseRetryAfter(bad, now), undefined)
  assert.equal(parseRetryAfter(['7', '9'], now), 7_000)
})

test('a name resolved (by an injected resolver) to 127.0.0.1 connects to the checked address; Host carries the name', async (t) => {
  const server = await listen(t, (request, response) => response.writeHead(200).end(request.socket.remoteAddress))
  // `.test` names do not resolve: the request can only reach the server through the checked address.
  const resolver: Resolver = async (hostname) =>
    hostname === 'hooks.test' ? [{ address: '127.0.0.1', family: 4 }] : []
  const url = new URL(`http://hooks.test:${server.port}/in?x=1`)
  const target = await resolveTarget(url, LOOPBACK, resolver)
  const outcome = await sender(t).send(delivery(url.href, { target }))
  assert.equal(outcome.ok, true, outcome.errorMessage)
  assert.equal(server.received[0].headers.host, `hooks.test:${server.port}`)
  assert.equal(server.received[0].url, '/in?x=1')
})

test('connections are kept alive and reused, at most maxConnectionsPerOrigin per address', async (t) => {
  const server = await listen(t, (_request, response) => response.writeHead(200).end('ok'))
  const url = `http://127.0.0.1:${server.port}/`
  const send = sender(t)
  for (let i = 0; i < 3; i++) {
    assert.equal((await send.send(delivery(url))).ok, true)
    // Sequential deliveries, a moment apart (back to back, the socket may not be back in the pool yet).
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  assert.equal(server.connections(), 1)

  const single = createHttpSender({ maxConnectionsPerOrigin: 1 })
  t.after(() => single.close())
  const outcomes = await Promise.all(Array.from({ length: 5 }, () => single.send(delivery(url))))
  assert.deepEqual(
    outcomes.map((outcome) => outcome.ok),
    [true, true, true, true, true],
  )
  assert.equal(server.connections(), 2)
})

test("the caller's signal ends an attempt early, as network", async (t) => {
  const silent = await listen(t, () => {})
  const controller = new AbortController()
  setTimeout(() => controller.abort(), 50)
  const url = `http://127.0.0.1:${silent.port}/`
  const outcome = await sender(t).send(delivery(url, { signal: controller.signal, timeoutMs: 5_000 }))
  assert.equal(outcome.error, 'network')
  assert.ok(outcome.durationMs < 2_000, `${outcome.durationMs} ms`)
})

// A self-signed certificate for hooks.test (valid until 2126), trusted here through the sender's `ca` option.
const TLS_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgLX8I2owKTI13DdKj
yrTBJqzGyuZsmRsxqsdz36tD1KGhRANCAAQ9e6fns+/HOeLVTRg/Vmz30oRw0AGa
f0o5zNCWWaYS0IqDcgIn2GyHHHDOQPaMBG41E0kCzFNQKCEQY+RUdGhI
-----END PRIVATE KEY-----
`
const TLS_CERT = `-----BEGIN CERTIFICATE-----
MIIBmDCCAT6gAwIBAgIUVMrVXCuxRh6Wk1fmA25NTE+tjHswCgYIKoZIzj0EAwIw
FTETMBEGA1UEAwwKaG9va3MudGVzdDAgFw0yNjExMjgwMDExNDBaGA8yMTI2MTEw
NDAwMTE0MFowFTETMBEGA1UEAwwKaG9va3MudGVzdDBZMBMGByqGSM49AgEGCCqG
SM49AwEHA0IABD17p+ez78c54tVNGD9WbPfShHDQAZp/SjnM0JZZphLQioNyAifY
bIcccM5A9owEbjUTSQLMU1AoIRBj5FR0aEijajBoMB0GA1UdDgQWBBTXY3RcJNle
t90HF0xUeNH8fLIY3TAfBgNVHSMEGDAWgBTXY3RcJNlet90HF0xUeNH8fLIY3TAP
BgNVHRMBAf8EBTADAQH/MBUGA1UdEQQOMAyCCmhvb2tzLnRlc3QwCgYIKoZIzj0E
AwIDSAAwRQIhANvVYxPC+4hcCtIniaPBQD5MbyakyY+AhoI/DmPv/QgiAiAHb3yh
yQZYcF+uyTOFfQDhzZv+QI8WCbeUA6aVy/8ZPA==
-----END CERTIFICATE-----
`

test('https connects to the checked address and verifies the certificate for the URL hostname (SNI too)', async (t) => {
  const server = createHttpsServer({ key: TLS_KEY, cert: TLS_CERT }, (request, response) => {
    response.writeHead(200).end(String((request.socket as TLSSocket).servername))
  })
  const sockets = new Set<Socket>()
  server.on('secureConnection', (socket: Socket) => sockets.add(socket))
  const port = await listenOn(server)
  t.after(() => {
    for (const socket of sockets) socket.destroy()
    server.close()
  })
  const trusting = createHttpSender({ ca: TLS_CERT })
  t.after(() => trusting.close())

  const ok = await trusting.send(delivery(`https://hooks.test:${port}/`))
  assert.equal(ok.ok, true, ok.errorMessage)
  assert.equal(ok.responseBody, 'hooks.test')
  // The same address under another name: the certificate does not match it.
  const otherName = await trusting.send(delivery(`https://other.test:${port}/`))
  assert.equal(otherName.error, 'tls')
  assert.match(otherName.errorMessage ?? '', /altnames/)
  // The IP literal itself is not in the certificate either.
  assert.equal((await trusting.send(delivery(`https://127.0.0.1:${port}/`))).error, 'tls')
  // Without the CA, the certificate is not trusted.
  assert.equal((await sender(t).send(delivery(`https://hooks.test:${port}/`))).error, 'tls')
})
