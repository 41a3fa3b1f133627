import { test } from 'node:test'
import assert from 'node:assert/strict'
import { issueToken, startPlatform } from '../_helpers/platform.ts'
import { assertNoLeak, send, type Answer } from '../_helpers/http.ts'
import { pollUntil } from '../_helpers/push.ts'

/**
 * Known bad inputs at `POST`/`GET /graphql`, each with the answer docs/API.md ("GraphQL") gives it: HTTP 200, JSON
 * `{data, errors}`, the error's `extensions.code`.
 */

type Row = { what: string; send: () => Promise<Answer>; code: string | null }

const SEARCH = (args: string) => `{ searchTransactionsForward(query: "receiver:eosio.token", ${args}) { cursor } }`
const WITH_VARS = `query ($q: String!, $limit: Int64, $low: Int64, $cursor: String) {
  searchTransactionsForward(query: $q, limit: $limit, lowBlockNum: $low, cursor: $cursor) { cursor } }`
const BY_TIME = 'query ($t: Time!) { blockIDByTime(time: $t) { num } }'
const BLOCK = 'query ($n: Uint32) { block(num: $n) { id } }'

test('known bad inputs at /graphql: 200 with the documented error code; documented limits', async (t) => {
  const p = await startPlatform(t, ['--workload', 'demo', '--lib-depth', '3', '--block-time', '50'])
  const token = await issueToken(p, p.apiKey)
  const post = (body: string | Buffer, headers: Record<string, string> = {}) =>
    send(`${p.api}/graphql`, {
      method: 'POST',
      body,
      headers: { authorization: `Bearer ${token}`, ...headers },
      timeoutMs: 20_000,
    })
  const json = (query: string, variables?: unknown, extra: Record<string, unknown> = {}) =>
    post(JSON.stringify({ query, variables, ...extra }))
  const get = (query: string, headers: Record<string, string> = { authorization: `Bearer ${token}` }) =>
    send(`${p.api}/graphql?${query}`, { headers })
  const page = await pollUntil(
    () => json(SEARCH('limit: 1')),
    (a) =>
      Boolean(
        (a.body as { data?: { searchTransactionsForward?: { cursor?: string } } }).data?.searchTransactionsForward
          ?.cursor,
      ),
    30_000,
  )
  const cursor = (page.body as { data: { searchTransactionsForward: { cursor: string } } }).data
    .searchTransactionsForward.cursor
  // A real cursor with one character changed, where the change alters its bytes (base64url's last character may not).
  const altered = [...cursor].flatMap((c, i) => {
    const changed = cursor.slice(0, i) + (c === 'A' ? 'B' : 'A') + cursor.slice(i + 1)
    return Buffer.from(changed, 'base64url').equals(Buffer.from(cursor, 'base64url')) ? [] : [changed]
  })
  const nested = (depth: number) =>
    `{ searchTransactionsForward(query: "receiver:eosio", limit: 1) { results { trace { executedActions {
      ${'createdActions { '.repeat(depth)}seq${' }'.repeat(depth)} } } } } }`
  const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: __typename`).join(' ')} }`
  const astText = JSON.stringify({
    kind: 'Document',
    definitions: [
      {
        kind: 'OperationDefinition',
        operation: 'query',
        selectionSet: {
          kind: 'SelectionSet',
          selections: [{ kind: 'Field', name: { kind: 'Name', value: '__typename' } }],
        },
      },
    ],
  })

  const rows: Row[] = [
    { what: 'a body that is not JSON', send: () => post('{not json'), code: 'InvalidArgument' },
    { what: 'random bytes', send: () => post(Buffer.from([0, 255, 1, 254, 0x7b])), code: 'InvalidArgument' },
    { what: 'an array (batched queries)', send: () => post('[{"query":"{ __typename }"}]'), code: 'InvalidArgument' },
    { what: 'null', send: () => post('null'), code: 'InvalidArgument' },
    { what: 'an empty body', send: () => post(''), code: 'InvalidArgument' },
    { what: 'a non-text query', send: () => post('{"query":123}'), code: 'InvalidArgument' },
    { what: 'variables a string', send: () => json('{ __typename }', 'x'), code: 'InvalidArgument' },
    { what: 'variables an array', send: () => json('{ __typename }', [1]), code: 'InvalidArgument' },
    {
      what: 'operationName a number',
      send: () => json('{ __typename }', {}, { operationName: 5 }),
      code: 'InvalidArgument',
    },
    {
      what: 'an unknown operationName',
      send: () => json('query A { __typename }', {}, { operationName: 'B' }),
      code: 'InvalidArgument',
    },
    {
      what: 'two operations, no name',
      send: () => json('query A { __typename } query B { __typename }'),
      code: 'InvalidArgument',
    },
    { what: 'a mutation', send: () => json('mutation { x }'), code: 'InvalidArgument' },
    { what: 'a syntax error', send: () => json('{ searchTransactionsForward('), code: 'InvalidArgument' },
    { what: 'GET without a query', send: () => get(''), code: 'InvalidArgument' },
    {
      what: 'GET with variables not JSON',
      send: () => get('query=%7B__typename%7D&variables=%7Bx'),
      code: 'InvalidArgument',
    },
    { what: 'GET, the token in ?token=', send: () => get(`query=%7B__typename%7D&token=${token}`, {}), code: null },
    { what: 'no token', send: () => get('query=%7B__typename%7D', {}), code: 'Unauthenticated' },
    {
      what: 'a garbage token',
      send: () => get('query=%7B__typename%7D', { authorization: 'Bearer x.y.z' }),
      code: 'Unauthenticated',
    },
    {
      what: 'a body over 1 MiB',
      send: () => json(`#${'x'.repeat(1_100_000)}\n{ __typename }`),
      code: 'InvalidArgument',
    },
    {
      what: 'a text/plain JSON body (@dfuse/client)',
      send: () => post('{"query":"{ __typename }"}', { 'content-type': 'text/plain' }),
      code: null,
    },
    {
      what: 'a form content type with a JSON body',
      send: () => post('{"query":"{ __typename }"}', { 'content-type': 'application/x-www-form-urlencoded' }),
      code: null,
    },
    {
      what: 'an application/graphql content type with a JSON body ("whatever its Content-Type")',
      send: () => post('{"query":"{ __typename }"}', { 'content-type': 'application/graphql' }),
      code: null,
    },
    { what: 'nesting of 16 levels', send: () => json(nested(10)), code: null },
    { what: 'nesting over 16 levels', send: () => json(nested(13)), code: 'InvalidArgument' },
    {
      what: 'braces nested 5,000 deep',
      send: () => json(`{${'a{'.repeat(5000)}}}`),
      code: 'InvalidArgument',
    },
    {
      what: 'a query over 100,000 characters',
      send: () => json(`#${'x'.repeat(150_000)}\n{ __typename }`),
      code: 'InvalidArgument',
    },
    {
      what: 'a query over 5,000 tokens',
      send: () => json(aliases(2_000)),
      code: 'InvalidArgument',
    },
    {
      what: 'a JSON AST in place of the query text',
      send: () => json(astText),
      code: 'InvalidArgument',
    },
    { what: 'limit 1001', send: () => json(SEARCH('limit: 1001')), code: 'InvalidArgument' },
    { what: 'limit 0', send: () => json(SEARCH('limit: 0')), code: 'InvalidArgument' },
    {
      what: 'limit a string variable',
      send: () => json(WITH_VARS, { q: 'receiver:bob', limit: 'ten' }),
      code: 'InvalidArgument',
    },
    { what: 'limit a float', send: () => json(WITH_VARS, { q: 'receiver:bob', limit: 1.5 }), code: 'InvalidArgument' },
    {
      what: 'an Int64 over 2^63',
      send: () => json(WITH_VARS, { q: 'receiver:bob', low: '9223372036854775808' }),
      code: 'InvalidArgument',
    },
    {
      what: 'an Int64 literal over 2^63',
      send: () => json(SEARCH('lowBlockNum: 99999999999999999999')),
      code: 'InvalidArgument',
    },
    {
      what: 'the least Int64, as a variable',
      send: () => json(WITH_VARS, { q: 'receiver:bob', low: '-9223372036854775808', limit: 1 }),
      code: null,
    },
    {
      what: 'the least Int64, as a literal',
      send: () => json(SEARCH('lowBlockNum: -9223372036854775808, limit: 1')),
      code: null,
    },
    { what: 'a query variable a number', send: () => json(WITH_VARS, { q: 5 }), code: 'InvalidArgument' },
    { what: 'a required variable missing', send: () => json(WITH_VARS, {}), code: 'InvalidArgument' },
    { what: 'a negative Uint32', send: () => json(BLOCK, { n: -1 }), code: 'InvalidArgument' },
    { what: 'a Uint32 over 2^32', send: () => json(BLOCK, { n: 2 ** 32 }), code: 'InvalidArgument' },
    { what: 'a Uint32 literal negative', send: () => json('{ block(num: -1) { id } }'), code: 'InvalidArgument' },
    { what: 'an invalid search query', send: () => json(WITH_VARS, { q: 'receiver:(' }), code: 'InvalidArgument' },
    { what: 'an unknown search field', send: () => json(WITH_VARS, { q: 'nosuch:x' }), code: 'InvalidArgument' },
    {
      what: 'a garbage cursor',
      send: () => json(WITH_VARS, { q: 'receiver:bob', cursor: 'garbage' }),
      code: 'InvalidArgument',
    },
    {
      what: 'a cursor cut short',
      send: () => json(WITH_VARS, { q: 'receiver:bob', cursor: cursor.slice(0, 20) }),
      code: 'InvalidArgument',
    },
    { what: 'a time that is no time', send: () => json(BY_TIME, { t: 'yesterday' }), code: 'InvalidArgument' },
    { what: 'February 30th', send: () => json(BY_TIME, { t: '2020-02-30T00:00:00Z' }), code: 'InvalidArgument' },
    { what: 'a time object', send: () => json(BY_TIME, { t: { at: 1 } }), code: 'InvalidArgument' },
    {
      what: 'a time literal 1e400',
      send: () => json('{ blockIDByTime(time: 1e400) { num } }'),
      code: 'InvalidArgument',
    },
    { what: 'a time far in the future', send: () => json(BY_TIME, { t: '2999-01-01T00:00:00Z' }), code: null },
    {
      what: 'Unix seconds outside any date (-1e20)',
      send: () => json(BY_TIME, { t: -1e20 }),
      code: 'InvalidArgument',
    },
    {
      what: 'an invalid account name',
      send: () => json('{ getAccountHistoryActions(account: "A!") { edges { cursor } } }'),
      code: 'InvalidArgument',
    },
  ]

  for (const row of rows)
    await t.test(row.what, {}, async () => {
      const answer = await row.send()
      assert.equal(answer.status, 200, answer.text.slice(0, 300))
      assertNoLeak(answer.text)
      const body = answer.body as {
        data?: unknown
        errors?: { message: string; extensions: { code: string; trace_id: string } }[]
      }
      assert.ok(body && typeof body === 'object', `JSON: ${answer.text.slice(0, 200)}`)
      if (row.code === null) return assert.equal(body.errors, undefined, answer.text.slice(0, 300))
      assert.equal(body.errors?.[0]?.extensions?.code, row.code, answer.text.slice(0, 300))
      assert.match(body.errors![0].extensions.trace_id, /^[0-9a-f]{32}$/)
      assert.equal(typeof body.errors![0].message, 'string')
    })

  await t.test(`a real cursor with one character changed, at each of ${altered.length} places`, async () => {
    for (const changed of altered) {
      const answer = await json(WITH_VARS, { q: 'receiver:bob', cursor: changed })
      assert.equal(answer.status, 200)
      const errors = (answer.body as { errors?: { extensions: { code: string } }[] }).errors
      assert.equal(errors?.[0]?.extensions.code, 'InvalidArgument', `${changed}: ${answer.text.slice(0, 300)}`)
    }
  })

  await t.test('the server still serves', async () => {
    assert.equal((await send(`${p.api}/healthz`)).status, 200)
    assert.equal(p.cli.child.exitCode, null)
  })
})
