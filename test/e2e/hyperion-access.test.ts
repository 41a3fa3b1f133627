import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertNoLeak, send, type Answer } from '../_helpers/http.ts'
import { issueToken, startPlatform } from '../_helpers/platform.ts'
import { pollUntil } from '../_helpers/push.ts'

/** Hyperion's error shape: `{statusCode, error, message}` with the answer's status. */
function assertHyperionError(answer: Answer, status: number): { statusCode: number; error: string; message: string } {
  assert.equal(answer.status, status, answer.text.slice(0, 300))
  const body = answer.body as { statusCode: number; error: string; message: string; code?: string }
  assert.equal(body.statusCode, status)
  assert.equal(typeof body.error, 'string')
  assert.equal(typeof body.message, 'string')
  assert.match(answer.headers.get('x-trace-id') ?? '', /^[0-9a-f]{32}$/)
  assertNoLeak(answer.text)
  return body
}

test("Hyperion's routes are public with a per-IP limit, answer the envelope, health and metadata, and errors in Hyperion's shape", async (t) => {
  const limit = 17
  const p = await startPlatform(t, ['--rate-limits', JSON.stringify({ publicCallsPerIp: { limit, windowMs: 60_000 } })])
  const head = (await send(`${p.api}/healthz`)).body as { head_block_num: number }

  const health = await send(`${p.api}/v2/health`)
  assert.equal(health.status, 200, health.text)
  const h = health.body as {
    version: string
    health: { service: string; status: string; time: number; service_data?: Record<string, unknown> }[]
    features: { streaming: { enable: boolean } }
    query_time_ms: number
    last_indexed_block: number
  }
  assert.deepEqual(
    h.health.map((e) => e.service),
    ['NodeosRPC', 'Store', 'StateHistory'],
  )
  const nodeos = h.health[0]
  assert.equal(nodeos.status, 'OK')
  assert.equal(nodeos.service_data?.chain_id, p.chainId)
  const store = h.health[1]
  assert.equal(store.status, 'OK')
  assert.ok((store.service_data?.last_indexed_block as number) >= head.head_block_num)
  assert.equal(store.service_data?.first_indexed_block, 1)
  assert.equal(h.health[2].status, 'OK', 'the devchain makes blocks: the feed is current')
  assert.ok(h.last_indexed_block >= head.head_block_num, 'the envelope carries the last indexed block')
  assert.equal(typeof h.query_time_ms, 'number')

  // The pinned-page check below needs eosio's first action below the store's LIB: wait for the chain's LIB to pass it
  // (asked of the chain, not counted against the per-IP limit), then read the store's.
  const firstOfEosio = (await send(`${p.api}/v2/history/get_actions?account=eosio&limit=1&sort=asc`)).body as {
    actions: { block_num: number }[]
  }
  const bootBlock = firstOfEosio.actions[0].block_num
  await pollUntil(
    async () => (await send(`${p.chainApi}/v1/chain/get_info`)).body as { last_irreversible_block_num: number },
    (info) => info.last_irreversible_block_num >= bootBlock + 3,
    30_000,
  )
  const metadata = await send(`${p.api}/v2/explorer_metadata`)
  assert.equal(metadata.status, 200, metadata.text)
  const m = metadata.body as {
    lib: number
    chain_id: string
    last_indexed_block: number
    last_indexed_block_time: string
    cached: boolean
  }
  assert.equal(m.chain_id, p.chainId)
  assert.ok(m.last_indexed_block > 1, "Hyperion's explorer refuses an API whose last indexed block is not above 1")
  assert.match(m.last_indexed_block_time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/)
  assert.equal(m.cached, false)
  assert.ok(m.lib >= 1 && m.lib <= m.last_indexed_block, `the envelope's lib is the store's LIB: ${m.lib}`)

  // A get_actions page whose range is irreversible is kept and answered again from the cache (`cached: true`, the same
  // documents); a page reaching above LIB never is.
  const pinnedPath = `/v2/history/get_actions?account=eosio&limit=5&before=${m.lib}`
  const first = (await send(`${p.api}${pinnedPath}`)).body as { cached: boolean; actions: unknown[] }
  const again = (await send(`${p.api}${pinnedPath}`)).body as { cached: boolean; actions: unknown[] }
  assert.ok(first.actions.length > 0, 'the boot left actions of eosio below LIB')
  assert.deepEqual([first.cached, again.cached], [false, true])
  assert.deepEqual(again.actions, first.actions)
  const fresh = (await send(`${p.api}${pinnedPath}&ignoreCache=true`)).body as { cached: boolean }
  assert.equal(fresh.cached, false, 'ignoreCache reads the page again')
  const atHead = `/v2/history/get_actions?account=eosio&limit=5`
  await send(`${p.api}${atHead}`)
  assert.equal(((await send(`${p.api}${atHead}`)).body as { cached: boolean }).cached, false)

  const filters = await send(`${p.api}/v2/get_filters`)
  assert.deepEqual((filters.body as { excludes: unknown }).excludes, { actions: [], deltas: [] })

  // Unknown routes under Hyperion's prefixes: 404 in Hyperion's shape; elsewhere the dfuse object still.
  for (const path of ['/v2/history/nothing', '/v1/history/nothing', '/v1/trace_api/nothing', '/v2/nothing'])
    assertHyperionError(await send(`${p.api}${path}`), 404)
  const dfuse404 = await send(`${p.api}/v0/nothing`)
  assert.equal((dfuse404.body as { code: string }).code, 'not_found_error')

  // The per-IP limit: every Hyperion call so far counted (no token needed); the next ones past the limit are 429.
  let refused: Answer | undefined
  // Windows are aligned to the minute: a window may end during the loop, so two windows of calls at most.
  for (let i = 0; i < 2 * limit + 2 && !refused; i++) {
    const answer = await send(`${p.api}/v2/get_filters`)
    if (answer.status === 429) refused = answer
    else assert.equal(answer.status, 200, answer.text)
  }
  assert.ok(refused, `a call past ${limit} a minute is refused`)
  assertHyperionError(refused, 429)
  assert.ok(Number(refused.headers.get('retry-after')) >= 1, 'Retry-After on the refusal')
  assert.equal(refused.headers.get('x-ratelimit-limit'), String(limit))
  // dfuse's routes are not counted against Hyperion's public limit.
  assert.equal((await send(`${p.api}/healthz`)).status, 200)
  const metrics = (await send(`${p.api}/metrics`)).text
  assert.match(metrics, /antler_rate_limits_hit_total\{scope="public calls per IP"\} [1-9]/)
  assert.match(metrics, /route="\/v2\/get_filters",method="GET",status="429"/)
})

test("with --hyperion-token, Hyperion's routes need a token (header or ?token=) and refuse in Hyperion's shape", async (t) => {
  const p = await startPlatform(t, ['--hyperion-token'])
  const without = await send(`${p.api}/v2/get_filters`)
  assertHyperionError(without, 401)
  const bad = await send(`${p.api}/v2/get_filters`, { headers: { authorization: 'Bearer nope' } })
  assertHyperionError(bad, 401)
  const token = await issueToken(p, p.apiKey)
  const withHeader = await send(`${p.api}/v2/get_filters`, { headers: { authorization: `Bearer ${token}` } })
  assert.equal(withHeader.status, 200, withHeader.text)
  const withQuery = await send(`${p.api}/v2/get_filters?token=${encodeURIComponent(token)}`)
  assert.equal(withQuery.status, 200, withQuery.text)
})
