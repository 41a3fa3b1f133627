import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { AntlerError } from '../../src/antelope/index.ts'
import { createGraphqlRuntime } from '../../src/graphql/index.ts'
import { createLifecycleService } from '../../src/lifecycle/index.ts'
import { createLiveHub } from '../../src/live/index.ts'
import { createSearchService } from '../../src/search/index.ts'
import {
  DEFAULT_WEBHOOK_RETRIES,
  createWebhooks,
  parseAllowCidrs,
  parseRetrySchedule,
  type Resolver,
} from '../../src/webhooks/index.ts'
import { capturedLog } from '../_helpers/captured-log.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { spawnAntler } from '../_helpers/cli.ts'
import { tempDir, withDevchain } from '../_helpers/devchain.ts'
import { expectError, send, type Answer } from '../_helpers/http.ts'
import { issueToken, startPlatform } from '../_helpers/platform.ts'
import { until } from '../_helpers/store.ts'
import { startHarness, transferAction } from '../search/harness.ts'

/*
 * The SSRF guard of webhooks end to end. On `antler serve` (default `--webhook-allow-cidr none`) every private,
 * loopback, link-local, CGNAT, unique-local and metadata target, in IPv4, IPv6 and IPv4-mapped forms, and a non-HTTP
 * scheme or a URL with credentials, is refused at creation (and at a PATCH of the URL) with 400
 * `webhook_target_refused_error`, its reason and address in `details`, and nothing reaches a receiver. On `antler dev`
 * (default loopback) a loopback receiver is accepted and gets its test message, but 169.254.169.254 is refused, even
 * with `--webhook-allow-cidr 169.254.0.0/16`. In process, with an injected resolver: a name resolving to a private
 * address is refused at creation, and a name that resolved to a public address at creation and to 127.0.0.1 at
 * delivery (DNS rebinding) fails its delivery attempt with `blocked_ip` and never reaches the receiver.
 */

const QUERY = 'receiver:eosio.token action:transfer'
/** A public address (IANA's example.com) that nothing here ever connects to: only creations name it. */
const PUBLIC_ADDRESS = '93.184.215.14'

/** A receiver on loopback counting what reaches it (nothing must, where a target is refused). */
async function startReceiver(t: TestContext): Promise<{ port: number; hits: string[] }> {
  const hits: string[] = []
  const server = createServer((request, response) => {
    hits.push(`${request.method} ${request.url}`)
    request.resume().on('end', () => response.writeHead(200, { 'content-type': 'text/plain' }).end('ok'))
  })
  server.keepAliveTimeout = 1_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  onCleanup(t, () => new Promise<void>((resolve) => server.close(() => resolve())))
  return { port: (server.address() as AddressInfo).port, hits }
}

const headersOf = (token: string | undefined): Record<string, string> => ({
  'content-type': 'application/json',
  ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
})

const create = (api: string, token: string | undefined, url: string, query = QUERY): Promise<Answer> =>
  send(`${api}/v1/webhooks`, { method: 'POST', headers: headersOf(token), body: JSON.stringify({ url, query }) })

/** A refused target: reason, and the address when the refusal is about one. */
interface Refusal {
  readonly url: string
  readonly reason: string
  /** The blocked address `details.address` must name (any of them, for a name). */
  readonly address?: readonly string[]
}

/** Creates each target; returns one line per answer that is not the refusal expected. */
async function refusalFailures(api: string, token: string | undefined, refusals: readonly Refusal[]) {
  const failures: string[] = []
  for (const r of refusals) {
    try {
      const answer = await create(api, token, r.url)
      const body = expectError(answer, 400, 'webhook_target_refused_error', { reason: r.reason })
      assert.equal(typeof body.details?.url, 'string', answer.text)
      if (r.address === undefined) assert.equal(body.details?.address, undefined, answer.text)
      else assert.ok(r.address.includes(String(body.details?.address)), `address one of ${r.address}: ${answer.text}`)
    } catch (error) {
      failures.push(`${r.url}: ${(error as Error).message.split('\n')[0]}`)
    }
  }
  return failures
}

/** What no default allow list lets through (the loopback ones are refused on `serve` only). */
const privateTargets = (port: number): Refusal[] => [
  { url: `http://169.254.169.254/latest/meta-data`, reason: 'blocked_ip', address: ['169.254.169.254'] },
  { url: `http://[::ffff:169.254.169.254]:${port}/`, reason: 'blocked_ip', address: ['::ffff:a9fe:a9fe'] },
  { url: `http://10.1.2.3:${port}/`, reason: 'blocked_ip', address: ['10.1.2.3'] },
  { url: `http://100.64.0.1/`, reason: 'blocked_ip', address: ['100.64.0.1'] },
  { url: `http://192.168.1.1/`, reason: 'blocked_ip', address: ['192.168.1.1'] },
  { url: `http://[fc00::1]/`, reason: 'blocked_ip', address: ['fc00::1'] },
  { url: `ftp://127.0.0.1:${port}/`, reason: 'scheme' },
  { url: `http://user:pass@example.com/`, reason: 'credentials' },
]

const loopbackTargets = (port: number): Refusal[] => [
  { url: `http://127.0.0.1:${port}/`, reason: 'blocked_ip', address: ['127.0.0.1'] },
  { url: `http://localhost:${port}/`, reason: 'blocked_ip', address: ['127.0.0.1', '::1'] },
  { url: `http://[::1]:${port}/`, reason: 'blocked_ip', address: ['::1'] },
  { url: `http://[::1]/`, reason: 'blocked_ip', address: ['::1'] },
  { url: `http://[::ffff:127.0.0.1]:${port}/`, reason: 'blocked_ip', address: ['::ffff:7f00:1', '::ffff:127.0.0.1'] },
  { url: `http://127.1.2.3:${port}/`, reason: 'blocked_ip', address: ['127.1.2.3'] },
]

test('antler serve (--webhook-allow-cidr none by default): loopback, private, link-local, metadata, CGNAT and unique-local targets, other schemes and credentials are refused with their reason and address; nothing reaches the receiver', async (t) => {
  const receiver = await startReceiver(t)
  const devchain = await withDevchain(t)
  for (let i = 0; i < 5; i++) devchain.chain.produceBlock()
  const serve = await spawnAntler(t, [
    'serve',
    '--ship',
    devchain.ship,
    '--chain-api',
    devchain.chainApi,
    '--data-dir',
    tempDir(t),
    '--port',
    '0',
    '--grpc-port',
    '0',
    '--no-auth',
    '--log-level',
    'warn',
  ])
  const { api } = serve.ready
  const failures = await refusalFailures(api, undefined, [
    ...loopbackTargets(receiver.port),
    ...privateTargets(receiver.port),
  ])
  assert.deepEqual(failures, [])
  const list = await send(`${api}/v1/webhooks`)
  assert.deepEqual(list.body, { webhooks: [] }, 'nothing was created')

  // A URL changed to a blocked one is refused too, and the stored one stays.
  const created = await create(api, undefined, `http://${PUBLIC_ADDRESS}/hook`, 'receiver:nobody')
  assert.equal(created.status, 201, created.text)
  const { id } = created.body as { id: string }
  for (const url of [`http://127.0.0.1:${receiver.port}/`, 'http://[::ffff:10.0.0.1]/', 'http://169.254.169.254/'])
    expectError(
      await send(`${api}/v1/webhooks/${id}`, {
        method: 'PATCH',
        headers: headersOf(undefined),
        body: JSON.stringify({ url }),
      }),
      400,
      'webhook_target_refused_error',
      { reason: 'blocked_ip' },
    )
  const stored = await send(`${api}/v1/webhooks/${id}`)
  assert.equal((stored.body as { url: string }).url, `http://${PUBLIC_ADDRESS}/hook`)
  assert.deepEqual(receiver.hits, [], 'nothing reached the receiver')
  assert.equal(serve.child.exitCode, null)
})

test('antler dev (loopback allowed by default): a loopback receiver is accepted and gets its test message; 169.254.169.254 and private targets are refused, even with --webhook-allow-cidr 169.254.0.0/16', async (t) => {
  const receiver = await startReceiver(t)

  await t.test('default allow list', async (st) => {
    const p = await startPlatform(st)
    const token = await issueToken(p, p.apiKey)
    const created = await create(p.api, token, `http://127.0.0.1:${receiver.port}/dev`)
    assert.equal(created.status, 201, created.text)
    const { id } = created.body as { id: string }
    const tested = await send(`${p.api}/v1/webhooks/${id}/test`, { method: 'POST', headers: headersOf(token) })
    assert.equal(tested.status, 200, tested.text)
    assert.equal((tested.body as { ok: boolean }).ok, true, tested.text)
    assert.deepEqual(receiver.hits, ['POST /dev'], 'the loopback receiver got the test message')
    const localhost = await create(p.api, token, `http://localhost:${receiver.port}/dev-localhost`)
    assert.equal(localhost.status, 201, localhost.text)
    assert.deepEqual(await refusalFailures(p.api, token, privateTargets(receiver.port)), [])
  })

  await t.test(
    '--webhook-allow-cidr 169.254.0.0/16: link-local allowed, the metadata address still refused',
    async (st) => {
      const p = await startPlatform(st, ['--webhook-allow-cidr', '169.254.0.0/16'])
      const token = await issueToken(p, p.apiKey)
      // The list took effect: another link-local address is accepted (nothing is delivered to it: no match).
      const linkLocal = await create(p.api, token, 'http://169.254.10.20/hook', 'receiver:nobody')
      assert.equal(linkLocal.status, 201, linkLocal.text)
      const failures = await refusalFailures(p.api, token, [
        { url: 'http://169.254.169.254/latest/meta-data', reason: 'blocked_ip', address: ['169.254.169.254'] },
        { url: 'http://169.254.169.254:8080/', reason: 'blocked_ip', address: ['169.254.169.254'] },
        { url: 'http://[::ffff:169.254.169.254]/', reason: 'blocked_ip', address: ['::ffff:a9fe:a9fe'] },
        { url: 'http://[::ffff:a9fe:a9fe]/', reason: 'blocked_ip', address: ['::ffff:a9fe:a9fe'] },
        { url: 'http://[fd00:ec2::254]/', reason: 'blocked_ip', address: ['fd00:ec2::254'] },
        // The list replaces the default: loopback is no longer allowed.
        { url: `http://127.0.0.1:${receiver.port}/`, reason: 'blocked_ip', address: ['127.0.0.1'] },
      ])
      assert.deepEqual(failures, [])
    },
  )
  assert.deepEqual(receiver.hits, ['POST /dev'], 'only the accepted test message reached the receiver')
})

/** A resolver answering from a table the test changes (DNS answers change), recording each name it was asked. */
function switchableResolver(table: Map<string, string[]>): Resolver & { asked: string[] } {
  const asked: string[] = []
  const resolve: Resolver = async (hostname) => {
    asked.push(hostname)
    const addresses = table.get(hostname)
    if (addresses === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
  }
  return Object.assign(resolve, { asked })
}

test('in process, names: one resolving to a private address is refused at creation; one that resolved to a public address at creation and to 127.0.0.1 at delivery fails its attempts with blocked_ip and never reaches the receiver', async (t) => {
  const receiver = await startReceiver(t)
  const h = await startHarness(t, { libDepth: 3 })
  for (let i = 0; i < 3; i++) h.chain.produceBlock()
  await h.synced()
  const hub = createLiveHub({ source: h.store, pollIntervalMs: 10 })
  onCleanup(t, () => hub.close())
  const search = createSearchService({
    store: h.store,
    lifecycle: createLifecycleService({ store: h.store }),
    cursorKey: h.cursorKey,
  })
  const graphql = createGraphqlRuntime({ search, store: h.store, live: hub, cursorKey: h.cursorKey })
  const table = new Map<string, string[]>([
    ['internal.example', ['10.0.0.7']],
    ['mixed.example', [PUBLIC_ADDRESS, '10.0.0.7']],
    ['rebind.example', [PUBLIC_ADDRESS]],
  ])
  const resolver = switchableResolver(table)
  const log = capturedLog()
  const webhooks = createWebhooks({
    store: h.store,
    graphql,
    allow: parseAllowCidrs('none'),
    resolver,
    retries: parseRetrySchedule(DEFAULT_WEBHOOK_RETRIES),
    disableAfterMs: 5 * 86_400_000,
    limits: { maxSubscriptionsPerKey: 10, deliveriesPerSecondPerKey: 50 },
    log,
  })
  onCleanup(t, () => webhooks.close())
  const { service } = webhooks
  const owner = 'key_ssrf'

  const refusalOf = async (url: string) => {
    try {
      await service.create(owner, { url, query: QUERY })
    } catch (error) {
      assert.ok(error instanceof AntlerError, String(error))
      return { code: error.code, reason: error.details.reason, address: error.details.address }
    }
    assert.fail(`${url} was accepted`)
  }
  const blocked = { code: 'webhook_target_refused_error', reason: 'blocked_ip', address: '10.0.0.7' }
  assert.deepEqual(await refusalOf(`http://internal.example:${receiver.port}/`), blocked)
  assert.deepEqual(await refusalOf(`http://mixed.example:${receiver.port}/`), blocked, 'one private answer is enough')
  assert.deepEqual(await refusalOf(`http://unknown.example/`), {
    code: 'webhook_target_refused_error',
    reason: 'dns',
    address: undefined,
  })
  assert.deepEqual(await service.list(owner), [], 'nothing was created')

  // Rebinding: public at creation, loopback (where the receiver listens) once deliveries start.
  const record = await service.create(owner, { url: `http://rebind.example:${receiver.port}/hook`, query: QUERY })
  table.set('rebind.example', ['127.0.0.1'])
  const asked = resolver.asked.length
  assert.ok(h.push([transferAction('alice', 'bob', '0.0001 EOS', 'rebind')]), 'the transfer was accepted')
  for (let i = 0; i < 3; i++) h.chain.produceBlock()
  await h.synced()
  await until(async () => (await service.attempts(owner, record.id, { limit: 10 })).length > 0, 'a delivery attempt')
  const [attempt] = await service.attempts(owner, record.id, { limit: 10 })
  assert.deepEqual(
    { error: attempt.error, status: attempt.status, attempt: attempt.attempt },
    { error: 'blocked_ip', status: null, attempt: 1 },
    JSON.stringify(attempt),
  )
  assert.match(attempt.messageId, /^msg_/)
  assert.ok(resolver.asked.slice(asked).includes('rebind.example'), 'the delivery resolved the name again')
  // The test message takes the same path.
  const tested = await service.test(owner, record.id)
  assert.deepEqual({ ok: tested.outcome.ok, error: tested.outcome.error }, { ok: false, error: 'blocked_ip' })
  const stored = await service.get(owner, record.id)
  assert.equal(stored.cursor, '', 'the cursor did not move past the failed message')
  assert.notEqual(stored.failingSinceMs, undefined, 'the subscription is failing')
  assert.deepEqual(receiver.hits, [], 'nothing reached the receiver')
  assert.deepEqual(log.lines, [], 'the dispatcher logged no failure')
})
