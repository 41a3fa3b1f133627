import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertNoLeak, send, type Answer } from '../_helpers/http.ts'
import { startPlatform, type Platform } from '../_helpers/platform.ts'
import { mulberry32 } from '../_helpers/random.ts'

/**
 * Bad input on every Hyperion route of a real `antler dev` (docs/HYPERION.md, Errors): seeded random parameters and
 * bodies — wrong types, huge and empty values, repeated keys, odd Unicode, invalid names, keys and ids, free filters
 * of every value form, bodies that are not JSON or not objects. Every answer comes within its timeout, is never a
 * 5xx, is JSON, and when it is an error it is Hyperion's `{statusCode, error, message}` with the answer's status and
 * an X-Trace-Id, without a stack trace; the server serves afterwards. A few targeted cases pin Hyperion's statuses.
 */

const SEED = Number(process.env.ANTLER_TEST_SEED ?? Math.floor(Math.random() * 2 ** 31))
/** Requests of the random loop. */
const FUZZ_REQUESTS = 700

interface Route {
  readonly method: 'GET' | 'POST'
  readonly path: string
  /** The parameters (query string or JSON body keys) the route reads. */
  readonly params: readonly string[]
}

const ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/v2/history/get_actions',
    params: [
      'account',
      'filter',
      'skip',
      'limit',
      'sort',
      'after',
      'before',
      'track',
      'simple',
      'noBinary',
      'checkLib',
      'hot_only',
      'act.name',
      'act.account',
      'act.authorization.actor',
      'transfer.to',
      '@transfer.from',
      'transfer.amount',
      'transfer.memo',
      'block_num',
      'global_sequence',
      'trx_id',
      'receipts.receiver',
      'act.data.to',
      'producer',
    ],
  },
  { method: 'GET', path: '/v2/history/get_transaction', params: ['id', 'block_hint'] },
  { method: 'GET', path: '/v2/history/check_transaction', params: ['id'] },
  {
    method: 'GET',
    path: '/v2/history/get_deltas',
    params: ['code', 'scope', 'table', 'payer', 'present', 'after', 'before', 'limit', 'skip', 'sort', 'primary_key'],
  },
  { method: 'GET', path: '/v2/history/get_table_state', params: ['code', 'table', 'block_num', 'after_key'] },
  { method: 'GET', path: '/v2/history/get_abi_snapshot', params: ['contract', 'block', 'fetch'] },
  { method: 'GET', path: '/v2/history/get_creator', params: ['account'] },
  { method: 'GET', path: '/v2/history/get_created_accounts', params: ['account', 'skip', 'limit'] },
  { method: 'GET', path: '/v2/history/get_block', params: ['block_num'] },
  {
    method: 'GET',
    path: '/v2/history/get_blocks',
    params: [
      'block_num',
      'block_id',
      'producer',
      'trx_count',
      'min_trx_count',
      'max_trx_count',
      'after',
      'before',
      'limit',
      'skip',
      'sort',
    ],
  },
  { method: 'GET', path: '/v2/history/get_schedule', params: ['mode', 'version', 'producer', 'key', 'sort'] },
  { method: 'GET', path: '/v2/state/get_key_accounts', params: ['public_key', 'details', 'limit', 'skip'] },
  { method: 'POST', path: '/v2/state/get_key_accounts', params: ['public_key'] },
  { method: 'GET', path: '/v2/state/get_tokens', params: ['account', 'limit', 'skip'] },
  { method: 'GET', path: '/v2/state/get_account', params: ['account', 'limit', 'skip'] },
  { method: 'GET', path: '/v2/state/get_links', params: ['account', 'code', 'action', 'permission', 'limit', 'skip'] },
  { method: 'GET', path: '/v2/state/get_top_holders', params: ['contract', 'symbol', 'limit', 'skip'] },
  { method: 'GET', path: '/v2/state/get_voters', params: ['producer', 'is_proxy', 'listProducers', 'skip', 'limit'] },
  {
    method: 'GET',
    path: '/v2/state/get_proposals',
    params: ['proposer', 'proposal', 'account', 'requested', 'provided', 'executed', 'expired', 'skip', 'limit'],
  },
  { method: 'GET', path: '/v2/state/get_voter_scopes', params: ['term'] },
  { method: 'GET', path: '/v2/health', params: [] },
  { method: 'GET', path: '/v2/explorer_metadata', params: [] },
  { method: 'GET', path: '/v2/get_filters', params: [] },
  {
    method: 'POST',
    path: '/v1/history/get_actions',
    params: ['account_name', 'pos', 'offset', 'filter', 'sort', 'after', 'before'],
  },
  { method: 'POST', path: '/v1/history/get_transaction', params: ['id', 'block_num_hint'] },
  { method: 'POST', path: '/v1/history/get_key_accounts', params: ['public_key'] },
  { method: 'POST', path: '/v1/history/get_controlled_accounts', params: ['controlling_account'] },
  { method: 'POST', path: '/v1/trace_api/get_block', params: ['block_num', 'block_id'] },
]

/** Values that are wrong somewhere: every parameter gets any of them. */
function badValue(random: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]
  const n = Math.floor(random() * 2 ** 53)
  return pick([
    '',
    ' ',
    '-1',
    '0',
    '1',
    String(n),
    `-${n}`,
    '1e309',
    'NaN',
    '0x10',
    '1.5',
    'true',
    'false',
    'null',
    'x'.repeat(1 + Math.floor(random() * 5000)),
    'eosio',
    'alice',
    'eosio.token',
    'ALICE',
    '*',
    '*:*',
    'eosio.token:*',
    '*:transfer',
    'a-b',
    '1-',
    '-',
    '5-1',
    '1,2,!3',
    '!',
    '!!alice',
    'a b c',
    '2024-01-01',
    '2024-01-01T00:00:00',
    '2024-13-45T99:99:99.999Z',
    'T',
    'EOS6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5GDW5CV',
    'PUB_K1_6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5BLDikw',
    'PUB_K1_nope',
    '0'.repeat(64),
    'f'.repeat(63),
    'g'.repeat(64),
    '%00',
    '\u0000',
    '\ud83d\ude00'.repeat(20),
    '{"a":1}',
    '[1,2]',
    'desc',
    'asc',
    'activated',
  ])
}

/** A JSON value of another type than a string, for bodies. */
function badJson(random: () => number): unknown {
  const values: unknown[] = [null, true, 0, -1, 2 ** 64, 1.5, [], [1, 'a'], {}, { a: { b: [] } }, 'x'.repeat(3000)]
  return values[Math.floor(random() * values.length)]
}

function fuzzRequest(random: () => number, route: Route): { path: string; init: RequestInit } {
  const chosen = route.params.filter(() => random() < 0.5)
  if (route.method === 'GET') {
    const parts: string[] = []
    for (const key of chosen) {
      const repeats = random() < 0.1 ? 2 : 1
      for (let i = 0; i < repeats; i++) parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(badValue(random))}`)
    }
    if (random() < 0.1) parts.push(`unknown_${Math.floor(random() * 100)}=${encodeURIComponent(badValue(random))}`)
    return { path: `${route.path}${parts.length ? `?${parts.join('&')}` : ''}`, init: { method: 'GET' } }
  }
  const roll = random()
  let body: string
  if (roll < 0.1) body = 'not json {'
  else if (roll < 0.2) body = JSON.stringify(badJson(random))
  else {
    const object: Record<string, unknown> = {}
    for (const key of chosen) object[key] = random() < 0.5 ? badValue(random) : badJson(random)
    body = JSON.stringify(object)
  }
  const headers: Record<string, string> = random() < 0.5 ? { 'content-type': 'application/json' } : {}
  return { path: route.path, init: { method: 'POST', body, headers } }
}

function assertWellFormed(answer: Answer, what: string): void {
  assert.ok(answer.status < 500, `${what}: no 5xx for bad input (${answer.status} ${answer.text.slice(0, 300)})`)
  assert.notEqual(answer.body, undefined, `${what}: JSON (${answer.text.slice(0, 200)})`)
  assertNoLeak(answer.text)
  if (answer.status >= 400) {
    const body = answer.body as { statusCode?: unknown; error?: unknown; message?: unknown }
    // /v1/history/get_transaction's unknown id is nodeos's error object (docs/HYPERION.md), every other one Hyperion's.
    if ('statusCode' in body) {
      assert.equal(body.statusCode, answer.status, `${what}: statusCode is the status`)
      assert.equal(typeof body.error, 'string', what)
      assert.equal(typeof body.message, 'string', what)
    } else
      assert.ok(
        'error' in body && 'code' in body,
        `${what}: Hyperion's or nodeos's error shape: ${answer.text.slice(0, 300)}`,
      )
    assert.match(answer.headers.get('x-trace-id') ?? '', /^[0-9a-f]{32}$/, what)
  }
}

async function assertAlive(p: Platform): Promise<void> {
  assert.equal((await send(`${p.api}/v2/get_filters`)).status, 200, 'the server still serves')
}

test(`bad input on every Hyperion route (seed ${SEED}): never a 5xx or a hang, always Hyperion's error shape`, async (t) => {
  const p = await startPlatform(t, [
    '--rate-limits',
    JSON.stringify({ publicCallsPerIp: { limit: 1_000_000, windowMs: 60_000 } }),
  ])
  const targeted: [string, RequestInit, number][] = [
    ['/v2/history/get_actions?limit=1001', {}, 400],
    ['/v2/history/get_actions?limit=0', {}, 400],
    ['/v2/history/get_actions?skip=10001', {}, 400],
    ['/v2/history/get_actions?limit=abc', {}, 400],
    ['/v2/history/get_actions?sort=sideways', {}, 400],
    ['/v2/history/get_transaction', {}, 400],
    ['/v2/history/get_transaction?id=zz', {}, 400],
    ['/v2/history/get_block?block_num=0', {}, 400],
    ['/v2/history/get_block?block_num=4000000000', {}, 404],
    ['/v2/history/get_creator', {}, 400],
    ['/v2/history/get_creator?account=nobody.here', {}, 404],
    ['/v2/state/get_key_accounts?public_key=PUB_K1_nope', {}, 400],
    ['/v2/state/get_tokens', {}, 400],
    ['/v2/history/get_actions/', {}, 200],
    ['/v1/history/get_actions', { method: 'POST', body: 'not json' }, 400],
    ['/v1/trace_api/get_block', { method: 'POST', body: JSON.stringify({ block_num: 4_000_000_000 }) }, 404],
  ]
  for (const [path, init, status] of targeted) {
    const answer = await send(`${p.api}${path}`, { ...init, body: init.body as string | undefined })
    assertWellFormed(answer, `${init.method ?? 'GET'} ${path}`)
    assert.equal(answer.status, status, `${path}: ${answer.text.slice(0, 300)}`)
  }

  const random = mulberry32(SEED)
  const statuses = new Map<number, number>()
  for (let i = 0; i < FUZZ_REQUESTS; i++) {
    const route = ROUTES[Math.floor(random() * ROUTES.length)]
    const { path, init } = fuzzRequest(random, route)
    const answer = await send(`${p.api}${path}`, {
      ...init,
      body: init.body as string | undefined,
      timeoutMs: 10_000,
    })
    statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
    assertWellFormed(answer, `#${i} ${init.method} ${path.slice(0, 200)} ${String(init.body ?? '').slice(0, 200)}`)
  }
  t.diagnostic(`statuses: ${JSON.stringify(Object.fromEntries(statuses))}`)
  assert.ok((statuses.get(200) ?? 0) > 0 && (statuses.get(400) ?? 0) > 0, 'the fuzz reaches answers and refusals')
  await assertAlive(p)
})
