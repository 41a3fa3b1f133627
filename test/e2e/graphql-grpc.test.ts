import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import * as grpc from '@grpc/grpc-js'
import { loadSync } from '@grpc/proto-loader'
import { protoPath as healthProtoPath } from 'grpc-health-check'
import { APIClient } from '@wharfkit/antelope'
import { onCleanup } from '../_helpers/cleanup.ts'
import { reflectedServices } from '../_helpers/grpc-reflection.ts'
import { tempDir } from '../_helpers/devchain.ts'
import { antlerKeys, issueToken, type Platform, startPlatform } from '../_helpers/platform.ts'
import { pollUntil, pushActions, waitIndexed } from '../_helpers/push.ts'
import { mulberry32 } from '../_helpers/random.ts'

// GraphQL over gRPC against a real antler dev: the proto as /graphql/graphql.proto serves it, loaded by a grpc-js
// client; answers equal to HTTP's, a live subscription, dfuse's service names, reflection, admission and bad input.

interface Response {
  data: string
  errors: { message: string; locations: { line: number; column: number }[]; path: string; extensions: string }[]
}
interface Outcome {
  responses: Response[]
  code: grpc.status
  details: string
  trailers: grpc.Metadata
}
type Request = { query: string; variables?: string; operationName?: string }
type Execute = (
  request: Request,
  metadata: grpc.Metadata,
  options?: grpc.CallOptions,
) => grpc.ClientReadableStream<Response>

const SEARCH = `{ searchTransactionsForward(query: "receiver:eosio.token", limit: 5) {
  cursor results { cursor block { num } trace { id matchingActions { name json } } } } }`
const SUBSCRIPTION = `subscription { searchTransactionsForward(query: "receiver:eosio.token action:transfer", lowBlockNum: 1) {
  undo cursor block { num } trace { id } } }`
const SERVICES = ['antler.graphql.v1.GraphQL', 'dfuse.graphql.v1.GraphQL', 'dfuse.eosio.v1.GraphQL']

const transfer = (memo: string) => ({
  account: 'eosio.token',
  name: 'transfer',
  actor: 'alice',
  data: { from: 'alice', to: 'bob', quantity: '0.0001 EOS', memo },
})

/** Clients of each service name, from the proto the API serves (dfuse's names: the same file, package renamed). */
async function grpcClients(t: TestContext, p: Platform): Promise<Record<string, Execute>> {
  const response = await fetch(`${p.api}/graphql/graphql.proto`)
  assert.equal(response.status, 200)
  const proto = await response.text()
  const dir = tempDir(t, 'antler-grpc-proto-')
  const clients: Record<string, Execute> = {}
  for (const service of SERVICES) {
    const pkg = service.replace(/\.GraphQL$/, '')
    const file = join(dir, `${pkg}.proto`)
    writeFileSync(file, proto.replace('package antler.graphql.v1;', `package ${pkg};`))
    const loaded = grpc.loadPackageDefinition(loadSync(file, { keepCase: true, defaults: true }))
    const Client = pkg.split('.').reduce((o: Record<string, never>, k) => o[k], loaded as never) as unknown as {
      GraphQL: grpc.ServiceClientConstructor
    }
    const client = new Client.GraphQL(p.grpc, grpc.credentials.createInsecure())
    onCleanup(t, () => client.close())
    clients[service] = (request, metadata, options) =>
      (client as unknown as { Execute: Execute }).Execute(request, metadata, options ?? {})
  }
  return clients
}

const bearer = (token: string | undefined, origin?: string): grpc.Metadata => {
  const metadata = new grpc.Metadata()
  if (token !== undefined) metadata.set('authorization', token)
  if (origin) metadata.set('origin', origin)
  return metadata
}

/** Runs a call to its status. */
function run(call: grpc.ClientReadableStream<Response>, onResponse?: (r: Response) => void): Promise<Outcome> {
  const responses: Response[] = []
  call.on('data', (r: Response) => {
    responses.push(r)
    onResponse?.(r)
  })
  call.on('error', () => undefined)
  return new Promise((resolve) =>
    call.on('status', (s: grpc.StatusObject) =>
      resolve({ responses, code: s.code, details: s.details, trailers: s.metadata }),
    ),
  )
}

async function httpGraphql(p: Platform, token: string, query: string): Promise<{ data?: unknown; errors?: unknown }> {
  const response = await fetch(`${p.api}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  })
  assert.equal(response.status, 200)
  return (await response.json()) as { data?: unknown; errors?: unknown }
}

/** One Response's errors with their extensions parsed. */
const errorsOf = (r: Response) => r.errors.map((e) => ({ ...e, extensions: JSON.parse(e.extensions) }))

const FUZZ_BASES = [
  SEARCH,
  SUBSCRIPTION.replace('lowBlockNum: 1', 'lowBlockNum: 1, limit: 1'),
  '{ searchTransactionsBackward(query: "receiver:eosio.token", limit: 2) { cursor results { trace { id } } } }',
  '{ blockIDByTime(time: "2020-01-01T00:00:00Z") { id num time } }',
]
const SEARCH_VARIABLES = `query Q($q: String!, $low: Int64, $cursor: String) {
  searchTransactionsForward(query: $q, lowBlockNum: $low, cursor: $cursor, limit: 2) { cursor } }`
const PIECES = [...'{}()"\':$!-,\\\n\u0000é', '😀', '...', 'OR', 'query']
const VARIABLES = ['', '{', 'null', '[1]', '"text"', '{"q": 5}', `${'{"a":'.repeat(500)}1${'}'.repeat(500)}`, '\u0000']

/**
 * A garbled request (seeded): a known document with a few random cuts, inserts, copies and swaps; the search query
 * with random values (search text, block bound, cursor) in its variables; or random characters.
 */
function fuzzRequest(random: () => number, cursor: string): Request {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]
  const garble = (text: string): string => {
    let out = text
    for (let n = 1 + Math.floor(random() * 3); n > 0; n--) {
      const at = Math.floor(random() * (out.length + 1))
      const op = pick(['delete', 'insert', 'duplicate', 'truncate', 'swap'])
      if (op === 'delete') out = out.slice(0, at) + out.slice(at + 1 + Math.floor(random() * 8))
      else if (op === 'insert') out = out.slice(0, at) + pick(PIECES) + out.slice(at)
      else if (op === 'duplicate') out = out.slice(0, at) + out.slice(at, at + 12) + out.slice(at)
      else if (op === 'truncate') out = out.slice(0, at)
      else out = out.slice(0, at) + out.slice(at + 1, at + 2) + out.slice(at, at + 1) + out.slice(at + 2)
    }
    return out
  }
  const roll = random()
  if (roll < 0.1)
    return { query: String.fromCharCode(...Array.from({ length: 40 }, () => random() * 0xffff)), variables: '' }
  if (roll < 0.5) {
    const variables = JSON.stringify({
      q: garble('receiver:eosio.token (action:transfer OR -data.to:bob) auth:alice@active'),
      low: pick([1, 0, -5, 2 ** 53, 1.5, 'abc', null, '1']),
      ...(random() < 0.5 ? { cursor: pick([cursor, garble(cursor), '', 'nope', 'A'.repeat(300)]) } : {}),
    })
    return { query: SEARCH_VARIABLES, variables: random() < 0.1 ? garble(variables) : variables }
  }
  return {
    query: garble(pick(FUZZ_BASES)),
    variables: random() < 0.3 ? garble(pick(VARIABLES)) : pick(VARIABLES),
    ...(random() < 0.2 ? { operationName: pick(['Q', 'X', '', '1']) } : {}),
  }
}

test('GraphQL over gRPC against a running antler dev: queries as over HTTP, a live subscription, dfuse names, reflection, admission, bad input', async (t) => {
  const limits = { callsPerIp: { web: { limit: 3, windowMs: 60_000 } } }
  const p = await startPlatform(t, ['--rate-limits', JSON.stringify(limits)])
  const chain = new APIClient({ url: p.chainApi })
  const token = await issueToken(p, p.apiKey)
  const clients = await grpcClients(t, p)
  const execute = (request: Request, metadata = bearer(`Bearer ${token}`), service = SERVICES[0]) =>
    run(clients[service](request, metadata))
  const pushed: Awaited<ReturnType<typeof pushActions>>[] = []
  for (let i = 0; i < 5; i++) pushed.push(await pushActions(chain, [transfer(`grpc-${i}`)]))
  await waitIndexed(p.api, pushed.at(-1)!.blockNum)

  await t.test('a query answers one Response whose data equals the answer of POST /graphql, then OK', async () => {
    const outcome = await execute({ query: SEARCH })
    assert.equal(outcome.code, grpc.status.OK, outcome.details)
    assert.equal(outcome.responses.length, 1)
    assert.deepEqual(outcome.responses[0].errors, [])
    const data = JSON.parse(outcome.responses[0].data)
    assert.equal(data.searchTransactionsForward.results.length, 5)
    const http = await httpGraphql(p, token, SEARCH)
    assert.equal(http.errors, undefined)
    assert.deepEqual(data, http.data)
  })

  await t.test("dfuse's service names answer the same", async () => {
    const answers = await Promise.all(SERVICES.map((service) => execute({ query: SEARCH }, undefined, service)))
    for (const [i, outcome] of answers.entries()) {
      assert.equal(outcome.code, grpc.status.OK, SERVICES[i])
      assert.equal(outcome.responses[0].data, answers[0].responses[0].data)
    }
  })

  await t.test('a subscription streams history, then the transfers pushed while it runs; cancel ends it', async () => {
    const seen: Record<string, unknown>[] = []
    const call = clients[SERVICES[1]]({ query: SUBSCRIPTION }, bearer(token))
    const outcome = run(
      call,
      (r) => void seen.push(r.errors.length ? { errors: r.errors } : JSON.parse(r.data).searchTransactionsForward),
    )
    const ids = (rows: Record<string, unknown>[]) => rows.map((r) => (r.trace as { id: string } | undefined)?.id)
    await pollUntil(
      async () => ids(seen),
      (got) => pushed.every((x) => got.includes(x.id)),
    )
    const live = [await pushActions(chain, [transfer('live-1')]), await pushActions(chain, [transfer('live-2')])]
    await pollUntil(
      async () => ids(seen),
      (got) => live.every((x) => got.includes(x.id)),
    )
    call.cancel()
    const ended = await outcome
    assert.equal(ended.code, grpc.status.CANCELLED)
    assert.deepEqual(
      seen.filter((r) => r.errors),
      [],
    )
    for (const x of [...pushed, ...live]) {
      const row = seen.find((r) => (r.trace as { id: string } | undefined)?.id === x.id)!
      assert.equal((row.block as { num: number }).num, x.blockNum)
      assert.equal(row.undo, false)
      assert.equal(typeof row.cursor, 'string')
    }
    // The server goes on: the same subscription again, ended by a limit.
    const again = await execute({ query: SUBSCRIPTION.replace('lowBlockNum: 1', 'lowBlockNum: 1, limit: 2') })
    assert.equal(again.code, grpc.status.OK)
    assert.equal(again.responses.length, 2)
  })

  await t.test('reflection lists antler.graphql.v1.GraphQL (and health), not the earlier names', async () => {
    assert.deepEqual(await reflectedServices(t, p.grpc), ['antler.graphql.v1.GraphQL', 'grpc.health.v1.Health'])
  })

  await t.test('health reports the GraphQL service SERVING', async () => {
    const loaded = grpc.loadPackageDefinition(
      loadSync(healthProtoPath, { keepCase: true, enums: String }),
    ) as never as {
      grpc: { health: { v1: { Health: grpc.ServiceClientConstructor } } }
    }
    const client = new loaded.grpc.health.v1.Health(p.grpc, grpc.credentials.createInsecure())
    onCleanup(t, () => client.close())
    type Check = (request: object, callback: (error: Error | null, answer: unknown) => void) => void
    const check = (service: string) =>
      new Promise((resolve, reject) =>
        (client as unknown as { Check: Check }).Check({ service }, (e, answer) => (e ? reject(e) : resolve(answer))),
      )
    assert.deepEqual(await check('antler.graphql.v1.GraphQL'), { status: 'SERVING' })
    assert.deepEqual(await check(''), { status: 'SERVING' })
  })

  await t.test(
    'admission: no token or a bad one is UNAUTHENTICATED, an origin refused PERMISSION_DENIED, a limit RESOURCE_EXHAUSTED',
    async () => {
      for (const metadata of [bearer(undefined), bearer('Bearer garbage'), bearer('garbage'), bearer('Bearer a b')]) {
        const outcome = await execute({ query: SEARCH }, metadata)
        assert.equal(outcome.code, grpc.status.UNAUTHENTICATED)
        assert.deepEqual(outcome.responses, [])
        assert.match(outcome.details, /token/i)
      }
      // The bare token works as well as `Bearer <token>`.
      assert.equal((await execute({ query: '{ __typename }' }, bearer(token))).code, grpc.status.OK)
      const web = JSON.parse(
        antlerKeys(p, ['create', '--type', 'web', '--name', 'grpc-web', '--origin', 'https://app.example', '--json']),
      ) as { key: string }
      const webToken = await issueToken(p, web.key, { origin: 'https://app.example' })
      const asWeb = (origin: string) => execute({ query: '{ __typename }' }, bearer(`Bearer ${webToken}`, origin))
      assert.equal((await asWeb('https://app.example')).code, grpc.status.OK)
      const refused = await asWeb('https://evil.example')
      assert.equal(refused.code, grpc.status.PERMISSION_DENIED)
      assert.match(refused.details, /origin/i)
      assert.equal((await asWeb('https://app.example')).code, grpc.status.OK)
      assert.equal((await asWeb('https://app.example')).code, grpc.status.OK)
      const limited = await asWeb('https://app.example')
      assert.equal(limited.code, grpc.status.RESOURCE_EXHAUSTED)
      assert.match(limited.trailers.get('retry-after')[0] as string, /^\d+$/)
    },
  )

  await t.test('bad input is INVALID_ARGUMENT; errors of execution come inside a Response, then OK', async () => {
    const bad: [Request, RegExp][] = [
      [{ query: SEARCH, variables: '{"low":' }, /variables is not JSON text/],
      [{ query: SEARCH, variables: '[]' }, /variables must be JSON text of an object/],
      [{ query: '{ searchTransactionsForward(query: "x" { cursor } }' }, /Syntax Error/],
      [{ query: '{ nope }' }, /Cannot query field "nope"/],
      [{ query: '' }, /query is required/],
      [{ query: SEARCH, operationName: 'Missing' }, /operationName/],
    ]
    for (const [request, message] of bad) {
      const outcome = await execute(request)
      assert.equal(outcome.code, grpc.status.INVALID_ARGUMENT, request.query)
      assert.match(outcome.details, message)
    }
    const badSearch = await execute({
      query: '{ searchTransactionsForward(query: "receiver:(", limit: 1) { cursor } }',
    })
    assert.equal(badSearch.code, grpc.status.OK)
    const [searchError] = errorsOf(badSearch.responses[0])
    assert.equal(searchError.extensions.code, 'InvalidArgument')
    assert.equal(typeof searchError.extensions.error_code, 'string')
    assert.deepEqual(JSON.parse(badSearch.responses[0].errors[0].path), ['searchTransactionsForward'])
    const badCursor = await execute({
      query: '{ searchTransactionsForward(query: "receiver:eosio.token", cursor: "nope", limit: 1) { cursor } }',
    })
    assert.equal(badCursor.code, grpc.status.OK)
    assert.equal(errorsOf(badCursor.responses[0])[0].extensions.code, 'InvalidArgument')
    // A subscription whose stream fails: one Response with the (terminal) error, then OK.
    const badStream = await execute({ query: SUBSCRIPTION.replace('action:transfer', 'action:(') })
    assert.equal(badStream.code, grpc.status.OK)
    assert.equal(badStream.responses.length, 1)
    const [streamError] = errorsOf(badStream.responses[0])
    assert.deepEqual([streamError.extensions.code, streamError.extensions.terminal], ['InvalidArgument', true])
  })

  await t.test(
    'fuzz: 200 garbled requests each get INVALID_ARGUMENT or Responses; the server answers after',
    async () => {
      const random = mulberry32(20_240_611)
      const cursor = JSON.parse((await execute({ query: SEARCH })).responses[0].data).searchTransactionsForward.cursor
      const tally = { invalid: 0, answered: 0 }
      for (let i = 0; i < 200; i++) {
        const request = fuzzRequest(random, cursor)
        const outcome = await run(clients[SERVICES[0]](request, bearer(token), { deadline: Date.now() + 5_000 }))
        const what = `${JSON.stringify(request)} → ${outcome.code} ${outcome.details}`
        if (outcome.code === grpc.status.INVALID_ARGUMENT) {
          assert.ok(outcome.details.length > 0 && outcome.responses.length === 0, what)
          tally.invalid++
          continue
        }
        // A garbled subscription can stay valid and wait for a match that never comes: the deadline ends it.
        if (outcome.code === grpc.status.DEADLINE_EXCEEDED && request.query.startsWith('subscription')) continue
        assert.equal(outcome.code, grpc.status.OK, what)
        assert.ok(outcome.responses.length >= 1, what)
        for (const response of outcome.responses) {
          if (response.data !== '') JSON.parse(response.data)
          for (const error of errorsOf(response)) {
            assert.match(error.extensions.code, /^[A-Z][A-Za-z]+$/, what)
            assert.notEqual(error.extensions.code, 'Internal', what)
            assert.doesNotMatch(error.message, /\n\s+at /, what)
          }
        }
        tally.answered++
      }
      assert.ok(tally.invalid > 40 && tally.answered > 40, JSON.stringify(tally))
      const health = await fetch(`${p.api}/healthz`)
      assert.equal(health.status, 200)
      const after = await execute({ query: SEARCH })
      assert.equal(after.code, grpc.status.OK)
      assert.equal(JSON.parse(after.responses[0].data).searchTransactionsForward.results.length, 5)
    },
  )
})

test('GraphQL over gRPC with --no-auth: no token is asked for; stopping the server ends open subscriptions', async (t) => {
  const p = await startPlatform(t, ['--no-auth'])
  const clients = await grpcClients(t, p)
  const outcome = await run(clients[SERVICES[0]]({ query: '{ __typename }' }, new grpc.Metadata()))
  assert.equal(outcome.code, grpc.status.OK)
  assert.deepEqual(JSON.parse(outcome.responses[0].data), { __typename: 'Query' })
  const garbage = await run(clients[SERVICES[2]]({ query: '{ __typename }' }, bearer('Bearer garbage')))
  assert.equal(garbage.code, grpc.status.OK)
  // A live subscription open when the server stops: it ends with UNAVAILABLE, and the process exits promptly.
  const seen: Response[] = []
  const open = run(clients[SERVICES[0]]({ query: SUBSCRIPTION }, new grpc.Metadata()), (r) => void seen.push(r))
  const pushed = await pushActions(new APIClient({ url: p.chainApi }), [transfer('before the stop')])
  await pollUntil(
    async () => seen.map((r) => r.data),
    (data) => data.some((d) => d.includes(pushed.id)),
  )
  const stoppedAt = Date.now()
  p.cli.child.kill('SIGTERM')
  const ended = await open
  assert.deepEqual([ended.code, ended.details], [grpc.status.UNAVAILABLE, 'the server is shutting down'])
  assert.equal(await p.cli.exited, 0)
  assert.ok(Date.now() - stoppedAt < 4_000, `stopped in ${Date.now() - stoppedAt} ms`)
})
