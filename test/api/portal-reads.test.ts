import { test } from 'node:test'
import assert from 'node:assert/strict'
import Fastify from 'fastify'
import { createAccountsService, hourOf } from '../../src/accounts/index.ts'
import { createApiKeyService, DEFAULT_AUTH_LIMITS } from '../../src/auth/index.ts'
import { portalRoutes } from '../../src/api/portal/index.ts'
import type { KeyUsageRecord, Store } from '../../src/store/index.ts'
import { tempSqliteStore } from '../_helpers/store.ts'

const KEYS = 200
const PASSWORD = 'a-long-enough-password'

/** The store with every method call counted by name. */
function countingStore(store: Store): { store: Store; calls: Map<string, number> } {
  const calls = new Map<string, number>()
  const counted = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        calls.set(String(property), (calls.get(String(property)) ?? 0) + 1)
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })
  return { store: counted, calls }
}

test(
  'an account with 200 keys: the keys and usage pages read the store a fixed number of times (no read per key)',
  { timeout: 120_000 },
  async (t) => {
    const { store, calls } = countingStore(tempSqliteStore(t))
    const accounts = createAccountsService({ store })
    const keys = createApiKeyService({ store })
    const app = Fastify()
    t.after(() => app.close())
    await app.register(portalRoutes, {
      accounts,
      keys,
      store,
      refreshRevocations: async () => undefined,
      limits: DEFAULT_AUTH_LIMITS,
    })
    const account = await accounts.create({ login: 'ana', password: PASSWORD })
    const signIn = await app.inject({
      method: 'POST',
      url: '/portal/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `login=ana&password=${PASSWORD}`,
    })
    assert.equal(signIn.statusCode, 303)
    const cookies = Object.fromEntries(signIn.cookies.map((c) => [c.name, c.value]))

    const now = Date.now()
    const rows: KeyUsageRecord[] = []
    for (let i = 0; i < KEYS; i++) {
      const { record } = await keys.create({ type: 'server', name: `key ${i}`, accountId: account.id })
      // Now, 3 days ago and 10 days ago: one row in the 24 h window, two in 7 d, three in 30 d.
      for (const days of [0, 3, 10])
        rows.push({
          keyId: record.id,
          hourMs: hourOf(now) - days * 24 * 3_600_000,
          ok: i + 1,
          clientErrors: 1,
          authFailures: 0,
          rateLimited: 0,
          documents: 2 * (i + 1),
        })
    }
    await store.addKeyUsage(rows)

    for (const [url, perKeyText] of [
      ['/portal/keys', 'data-key-id='],
      ['/portal/usage', 'class="key-usage"'],
    ] as const) {
      calls.clear()
      const page = await app.inject({ url, cookies })
      assert.equal(page.statusCode, 200, page.body.slice(0, 300))
      assert.equal(page.body.split(perKeyText).length - 1, KEYS, `${url} shows every key`)
      const reads = [...calls.values()].reduce((a, b) => a + b, 0)
      // The session, its account, the keys, and (usage) their rows: whatever the number of keys.
      assert.ok(reads <= 4, `${url}: ${reads} store calls (${JSON.stringify(Object.fromEntries(calls))})`)
      assert.equal(calls.get('apiKeysOf'), 1)
    }
    assert.equal(calls.get('keyUsage'), 1)
    // Key 199's windows.
    const usage = (await app.inject({ url: '/portal/usage', cookies })).body
    // Keys made in one millisecond are listed by id: find key 199's section by its name.
    const last = usage.slice(usage.indexOf('>key 199</a>'))
    assert.match(last, /24 h<\/th><td>200<\/td><td>1<\/td><td>0<\/td><td>0<\/td><td>400<\/td>/)
    assert.match(last, /7 d<\/th><td>400<\/td><td>2<\/td>/)
    assert.match(last, /30 d<\/th><td>600<\/td><td>3<\/td><td>0<\/td><td>0<\/td><td>1200<\/td>/)
  },
)
