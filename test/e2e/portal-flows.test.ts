import { test } from 'node:test'
import assert from 'node:assert/strict'
import { startPlatform } from '../_helpers/platform.ts'
import { startWebhookReceiver } from '../_helpers/webhook-receiver.ts'
import { csrfIn, eventually, portalFetch, setUpWithFetch } from '../_helpers/portal.ts'
import { keyMetrics, portalKeyUsage } from '../_helpers/usage.ts'

const OPTIONS = { timeout: 180_000 }

/** The loopback form of the ready line's API address. */
const loopback = (api: string) => api.replace('0.0.0.0', '127.0.0.1')

/** Creates a server key through the portal's form: its id and the key string shown once. */
async function createServerKey(base: string, cookie: string, name: string): Promise<{ id: string; key: string }> {
  const csrf = csrfIn((await portalFetch(base, '/portal/keys', { cookie })).text)
  const created = await portalFetch(base, '/portal/keys', { cookie, form: { _csrf: csrf, name, type: 'server' } })
  assert.equal(created.status, 200, created.text.slice(0, 300))
  const key = /id="new-key" readonly value="([^"]+)"/.exec(created.text)?.[1]
  const id = /\/portal\/keys\/(key_[0-9a-f]+)/.exec(created.text)?.[1]
  assert.ok(key && id)
  return { id, key }
}

test(
  "a key's usage in the portal matches /metrics: ok, 4xx, auth failures and 429 counted, documents as results",
  OPTIONS,
  async (t) => {
    // A low per-key-type call limit for server keys so that 429s happen; issuance stays open.
    const limits = JSON.stringify({ callsPerIp: { server: { limit: 6, windowMs: 60_000 } } })
    const p = await startPlatform(t, ['--rate-limits', limits])
    const base = loopback(p.api)
    const cookie = await setUpWithFetch(base, p.dataDir)
    const { id, key } = await createServerKey(base, cookie, 'counted')
    const issue = await fetch(`${base}/v1/auth/issue`, { method: 'POST', body: JSON.stringify({ api_key: key }) })
    const { token } = (await issue.json()) as { token: string }
    const call = (path: string) => fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } })
    // The limit counts in fixed windows of a minute: start the calls well inside one.
    const left = 60_000 - (Date.now() % 60_000)
    if (left < 20_000) await new Promise((resolve) => setTimeout(resolve, left + 100))
    // 3 searches (0 results each: no transaction matches), 2 bad queries, then calls past the limit of 6.
    for (let i = 0; i < 3; i++) assert.equal((await call('/v0/search/transactions?q=receiver:nobody')).status, 200)
    for (let i = 0; i < 2; i++) assert.equal((await call('/v0/search/transactions?q=((')).status, 400)
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push((await call('/v0/search/transactions?q=receiver:nobody')).status)
    assert.deepEqual(statuses, [200, 429, 429])
    // The key revoked through the portal: the token is then refused (an auth failure of this key).
    const keyPage = await portalFetch(base, `/portal/keys/${id}`, { cookie })
    const revoked = await portalFetch(base, `/portal/keys/${id}/revoke`, {
      cookie,
      form: { _csrf: csrfIn(keyPage.text), confirm: 'yes' },
    })
    assert.equal(revoked.status, 303)
    assert.equal((await call('/v0/search/transactions?q=receiver:nobody')).status, 401)

    // 1 issuance + 4 searches ok; 2 bad queries; 2 × 429; 1 revoked token. Search answers held no transaction, so each
    // counts one document.
    const expected = { ok: 5, clientErrors: 2, authFailures: 1, rateLimited: 2, documents: 5 }
    const usage = await eventually('the usage reaches the store', async () => {
      const seen = await portalKeyUsage(base, cookie, id)
      return seen.authFailures === 1 ? seen : undefined
    })
    assert.deepEqual(usage, expected)
    assert.deepEqual(await keyMetrics(base, id), expected, '/metrics counts the same')
    const page = (await portalFetch(base, `/portal/usage`, { cookie })).text
    assert.match(page, /24 h<\/th><td>5<\/td><td>2<\/td><td>1<\/td><td>2<\/td><td>5<\/td>/)
  },
)

test(
  'webhooks in the portal: create (secret once), test, pause and resume, replay; each in the audit log, no secret there',
  OPTIONS,
  async (t) => {
    const p = await startPlatform(t)
    const base = loopback(p.api)
    const receiver = await startWebhookReceiver(t)
    const cookie = await setUpWithFetch(base, p.dataDir)
    const { id: keyId, key } = await createServerKey(base, cookie, 'hooks')
    const list = await portalFetch(base, '/portal/webhooks', { cookie })
    assert.equal(list.status, 200)
    const csrf = csrfIn(list.text)
    const form = (fields: Record<string, string>) => ({ cookie, form: { _csrf: csrf, ...fields } })

    const refused = await portalFetch(
      base,
      '/portal/webhooks',
      form({ key_id: keyId, url: 'http://169.254.169.254/x', query: 'receiver:eosio.token', finality: 'reversible' }),
    )
    assert.equal(refused.status, 400)
    assert.match(refused.text, /webhook_target_refused_error/)

    const created = await portalFetch(
      base,
      '/portal/webhooks',
      form({ key_id: keyId, url: receiver.url('/portal'), query: 'receiver:eosio.token', finality: 'reversible' }),
    )
    assert.equal(created.status, 200, created.text.slice(0, 300))
    const secret = /id="wh-secret" readonly value="([^"]+)"/.exec(created.text)?.[1] ?? ''
    const webhookId = /\/portal\/webhooks\/(wh_[A-Za-z0-9_-]+)/.exec(created.text)?.[1] ?? ''
    assert.ok(secret.startsWith('whsec_') && webhookId, created.text.slice(0, 300))
    const detail = await portalFetch(base, `/portal/webhooks/${webhookId}`, { cookie })
    assert.equal(detail.status, 200)
    assert.ok(!detail.text.includes(secret), 'the secret is shown once')

    const tested = await portalFetch(base, `/portal/webhooks/${webhookId}/test`, form({}))
    assert.equal(tested.status, 200)
    assert.match(tested.text, /Test message <code>msg_test_[^<]+<\/code>: delivered \(HTTP 200\)/)
    assert.equal(receiver.deliveries.filter((d) => JSON.parse(d.body).type === 'webhook.test').length, 1)
    assert.deepEqual(receiver.unverified('/portal', secret), [], 'signed with the secret shown once')
    assert.match((await portalFetch(base, `/portal/webhooks/${webhookId}`, { cookie })).text, /<td>200<\/td>/)

    assert.equal((await portalFetch(base, `/portal/webhooks/${webhookId}/pause`, form({}))).status, 303)
    assert.match((await portalFetch(base, `/portal/webhooks/${webhookId}`, { cookie })).text, /webhook-state">paused/)
    assert.equal((await portalFetch(base, `/portal/webhooks/${webhookId}/resume`, form({}))).status, 303)
    assert.match((await portalFetch(base, `/portal/webhooks/${webhookId}`, { cookie })).text, /webhook-state">active/)
    const badReplay = await portalFetch(base, `/portal/webhooks/${webhookId}/replay`, form({ from_block: 'x' }))
    assert.equal(badReplay.status, 400)
    assert.equal(
      (await portalFetch(base, `/portal/webhooks/${webhookId}/replay`, form({ from_block: '1' }))).status,
      303,
    )
    assert.match((await portalFetch(base, `/portal/webhooks/${webhookId}`, { cookie })).text, /from block 1</)

    // The same subscription through the API with the key's token.
    const issued = await fetch(`${base}/v1/auth/issue`, { method: 'POST', body: JSON.stringify({ api_key: key }) })
    const { token } = (await issued.json()) as { token: string }
    const api = await fetch(`${base}/v1/webhooks/${webhookId}`, { headers: { authorization: `Bearer ${token}` } })
    assert.equal(((await api.json()) as { state: string }).state, 'active')

    const audit = (await portalFetch(base, '/portal/audit', { cookie })).text
    for (const action of ['setup', 'key_create', 'webhook_create', 'webhook_test', 'webhook_pause', 'webhook_resume'])
      assert.match(audit, new RegExp(`<td>${action}</td>`), action)
    assert.match(audit, /<td>ana<\/td><td>webhook_replay<\/td><td>127\.0\.0\.1<\/td><td><code>key_[0-9a-f]+<\/code>/)
    assert.match(audit, /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/)
    for (const hidden of [secret, key]) assert.ok(!audit.includes(hidden), 'no secret or key in the audit log')
  },
)
