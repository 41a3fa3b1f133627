import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import WebSocket from 'ws'
import type { DfuseClient } from '@dfuse/client'
import { launchBrowser, lanAddressFor, skipWithoutBrowser, type TestPage } from '../_helpers/browser.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { dfuseClient, isStandardError, issueToken, startPlatform, type Platform } from '../_helpers/platform.ts'
import {
  copyShownKey,
  createKey,
  eventually,
  FIRST_ACCOUNT,
  keysOf,
  portalFetch,
  sessionCookieName,
  sessionCookieValue,
  setUpFirstAccount,
  signIn,
  signOut,
  submitAndWait,
  usageTable,
  type ListedKey,
} from '../_helpers/portal.ts'

/*
 * The management portal end to end in real headless Chromium, on loopback and again on the machine's LAN address
 * over plain HTTP: the first account from the one-time setup token, sign-in, a key of each type created and copied
 * from the clipboard, used with @dfuse/client until the key page shows its last use and usage, an edit of a web key's
 * origins, rotations (grace now and 1 h), a revoke through the confirm dialog, sign-out ending the session on the
 * server. Across every page visited: no CSP violation, no console error or warning, no page error, no request leaving
 * the portal's origin, and every HTML answer `Cache-Control: no-store`.
 */

// @dfuse/client looks for a WebSocket class when it is created, even for REST-only use.
;(globalThis as { WebSocket?: unknown }).WebSocket = WebSocket

const DAPP = 'http://dapp.example'
const OTHER = 'http://other.example'

type Answer = { status: number; body: Record<string, unknown> }

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

const issue = (api: string, apiKey: string, headers: Record<string, string> = {}) =>
  post(`${api}/v1/auth/issue`, { api_key: apiKey }, headers)
const getInfo = (api: string, token: string, headers: Record<string, string> = {}) =>
  post(`${api}/v1/chain/get_info`, undefined, { authorization: `Bearer ${token}`, ...headers })

function assertRefused(answer: Answer, status: number, code: string, what: string): void {
  assert.equal(answer.status, status, `${what}: ${JSON.stringify(answer.body)}`)
  assert.ok(isStandardError(answer.body), `${what}: the standard error object`)
  assert.equal(answer.body.code, code, what)
}

/** An @dfuse/client for a portal key; a web key's client sends the dapp's Origin on every request. */
function clientFor(t: TestContext, api: string, apiKey: string, origin?: string): DfuseClient {
  const fetchWithOrigin = (url: string, init: RequestInit = {}) =>
    fetch(url, { ...init, headers: { ...(init.headers as Record<string, string>), origin: origin! } })
  return dfuseClient(
    t,
    { api, apiKey },
    origin === undefined ? {} : { httpClientOptions: { fetch: fetchWithOrigin as unknown as typeof fetch } },
  )
}

/** A REST read with @dfuse/client (alice's token balances) that must succeed. */
async function useWithClient(client: DfuseClient): Promise<void> {
  const answer = await client.stateTable<{ balance: string }>('eosio.token', 'alice', 'accounts')
  assert.ok(Array.isArray(answer.rows), 'the state read answers rows')
}

/**
 * One portal journey against a running platform; `base` is the portal's origin (loopback or LAN) and also the API
 * the clients use.
 */
async function journey(t: TestContext, p: Platform, base: string, secureOrigins: string[]): Promise<void> {
  const browser = await launchBrowser({ insecureOriginsAsSecure: secureOrigins })
  onCleanup(t, () => browser.close())
  const pages: TestPage[] = []
  const cacheControl: string[] = []
  const open = async (): Promise<TestPage> => {
    const opened = await browser.newPage()
    pages.push(opened)
    opened.page.on('response', (response) => {
      const type = response.headers()['content-type'] ?? ''
      if (type.startsWith('text/html'))
        cacheControl.push(`${response.request().method()} ${response.url()}: ${response.headers()['cache-control']}`)
    })
    return opened
  }

  // The first account with the setup token: signed in at once, with the session cookie this address keeps.
  const setup = await open()
  const { token: setupToken } = await setUpFirstAccount(setup, base, p.dataDir)
  const cookies = await setup.context.cookies(base)
  const session = cookies.find((c) => c.name === sessionCookieName(base))
  assert.ok(session, `the ${sessionCookieName(base)} cookie in ${JSON.stringify(cookies.map((c) => c.name))}`)
  assert.equal(session.httpOnly, true)
  assert.equal(session.sameSite, 'Strict')
  assert.equal(session.secure, sessionCookieName(base).startsWith('__Host-'))
  assert.equal(session.path, '/')

  // The token works once: its page now sends to sign in, and posting it again is refused.
  const again = await open()
  await again.page.goto(`${base}/portal/setup`)
  assert.equal(again.page.url(), `${base}/portal/login`, 'no setup page once an account exists')
  const reused = await portalFetch(base, '/portal/setup', {
    form: { token: setupToken, login: 'mallory', password: 'a long enough password' },
  })
  assert.equal(reused.status, 401, `a spent setup token: ${reused.status}`)
  assert.match(reused.text, /portal_setup_token_error/)
  assert.equal(reused.headers.get('set-cookie'), null, 'no session for a spent token')

  // Sign in with the form in a fresh context; the journey continues there.
  const main = await open()
  await signIn(main, base, FIRST_ACCOUNT.login, FIRST_ACCOUNT.password)
  const page = main.page
  const dialogs: string[] = []
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message())
    void dialog.accept()
  })
  const cookie = await sessionCookieValue(main, base)
  assert.ok(cookie, 'signed in: a session cookie')

  // A key of each type, copied from the clipboard.
  const server = await createKey(main, base, { name: 'backend', type: 'server' })
  const mobile = await createKey(main, base, { name: 'phone app', type: 'mobile' })
  const web = await createKey(main, base, { name: 'dapp', type: 'web', origins: [DAPP] })
  const listed = await keysOf(base, cookie)
  const byId = (id: string): ListedKey => {
    const found = listed.find((k) => k.id === id)
    assert.ok(found, `key ${id} listed`)
    return found
  }
  for (const [created, type] of [
    [server, 'server'],
    [mobile, 'mobile'],
    [web, 'web'],
  ] as const) {
    const row = byId(created.id)
    assert.equal(row.type, type)
    assert.equal(row.lastUsed, 'never')
    assert.equal(row.stateClass, 'active')
    assert.ok(row.prefix.endsWith('…'), row.prefix)
    assert.ok(created.key.startsWith(row.prefix.slice(0, -1)), `the list shows the key's prefix ${row.prefix}`)
    assert.ok(row.prefix.length < 16, `only a short prefix: ${row.prefix}`)
  }
  const listHtml = (await portalFetch(base, '/portal/keys', { cookie })).text
  for (const created of [server, mobile, web]) assert.ok(!listHtml.includes(created.key), 'no key string in the list')

  // Each key works with @dfuse/client; its page then shows a last use and an OK count.
  for (const [created, origin] of [
    [server, undefined],
    [mobile, undefined],
    [web, DAPP],
  ] as const) {
    const client = clientFor(t, base, created.key, origin)
    await useWithClient(client)
    await useWithClient(client)
    await submitAndWait(main, () => page.goto(`${base}/portal/keys/${created.id}`))
    const counted = await eventually(`the key page of ${created.id} shows a use`, async () => {
      await page.reload()
      const lastUsed = (await page.locator('.last-used').textContent()) ?? ''
      const usage = usageTable(await page.content())
      return lastUsed !== 'never' && (usage['24 h']?.ok ?? 0) >= 2 ? { lastUsed, usage } : undefined
    })
    assert.match(counted.lastUsed, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/)
    for (const window of ['24 h', '7 d', '30 d'])
      assert.ok((counted.usage[window]?.ok ?? 0) >= 2, `${window}: ${JSON.stringify(counted.usage)}`)
    // The chart, drawn from the data the page fetched itself (the uses above are in it: never "No requests").
    await page.locator('#usage-chart .uplot').waitFor()
  }
  const used = await keysOf(base, cookie)
  for (const created of [server, mobile, web])
    assert.notEqual(used.find((k) => k.id === created.id)?.lastUsed, 'never', 'the list shows the last use too')

  // The web key's origins: another origin is refused until it is added with the edit form.
  assertRefused(
    await issue(base, web.key, { origin: OTHER }),
    403,
    'auth_origin_not_allowed_error',
    'issuance from an origin the key does not list',
  )
  await page.goto(`${base}/portal/keys/${web.id}`)
  await page.fill('#origins', `${DAPP}\n${OTHER}`)
  await submitAndWait(main, () => page.click(`form[action="/portal/keys/${web.id}"] button[type=submit]`))
  assert.equal(page.url(), `${base}/portal/keys/${web.id}`)
  assert.equal(await page.inputValue('#origins'), `${DAPP}\n${OTHER}`)
  await issueToken({ api: base }, web.key, { origin: OTHER })

  // Rotate the mobile key with no grace: the old key is refused at once, the new one works.
  await page.goto(`${base}/portal/keys/${mobile.id}`)
  await page.check('input[name=grace][value="0"]')
  await submitAndWait(main, () => page.click(`form[action="/portal/keys/${mobile.id}/rotate"] button[type=submit]`))
  assert.equal(await page.locator('h1').textContent(), 'Key rotated')
  assert.match((await page.locator('.shown-once').textContent()) ?? '', /stopped working now/)
  const mobile2 = await copyShownKey(main)
  assert.notEqual(mobile2.key, mobile.key)
  assert.notEqual(mobile2.id, mobile.id)
  assertRefused(await issue(base, mobile.key), 401, 'auth_invalid_api_key_error', 'the key rotated with no grace')
  await useWithClient(clientFor(t, base, mobile2.key))

  // Rotate the server key with a 1 h grace: both work, and the list tells the old one is in its grace.
  await page.goto(`${base}/portal/keys/${server.id}`)
  await page.check('input[name=grace][value="3600"]')
  await submitAndWait(main, () => page.click(`form[action="/portal/keys/${server.id}/rotate"] button[type=submit]`))
  assert.match((await page.locator('.shown-once').textContent()) ?? '', /works until \d{4}-/)
  const server2 = await copyShownKey(main)
  await issueToken({ api: base }, server.key)
  await issueToken({ api: base }, server2.key)
  await useWithClient(clientFor(t, base, server2.key))
  const rotated = await keysOf(base, cookie)
  const old = rotated.find((k) => k.id === server.id)
  assert.equal(old?.stateClass, 'grace', JSON.stringify(old))
  assert.match(old?.state ?? '', /^rotated: works until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/)
  assert.equal(rotated.find((k) => k.id === server2.id)?.stateClass, 'active')
  assert.equal(rotated.find((k) => k.id === mobile.id)?.stateClass, 'revoked')

  // Revoke the web key through the confirm dialog: a token issued before stops working within 2 s, issuance too.
  const before = await issueToken({ api: base }, web.key, { origin: DAPP })
  assert.equal((await getInfo(base, before, { origin: DAPP })).status, 200)
  await page.goto(`${base}/portal/keys/${web.id}`)
  await page.check('input[name=confirm]')
  await submitAndWait(main, () => page.click(`form[action="/portal/keys/${web.id}/revoke"] button[type=submit]`))
  const revokedAt = Date.now()
  assert.equal(dialogs.length, 1, 'one confirm dialog')
  assert.match(dialogs[0], /^Revoke “dapp”\?/)
  assert.equal(page.url(), `${base}/portal/keys`)
  await eventually(
    'the token issued before the revoke is refused',
    async () => ((await getInfo(base, before, { origin: DAPP })).status === 401 ? true : undefined),
    2_000,
    100,
  )
  assert.ok(Date.now() - revokedAt <= 2_500)
  assertRefused(await getInfo(base, before, { origin: DAPP }), 401, 'auth_invalid_token_error', 'a revoked token')
  assertRefused(
    await issue(base, web.key, { origin: DAPP }),
    401,
    'auth_invalid_api_key_error',
    'issuance for a revoked key',
  )
  const revoked = (await keysOf(base, cookie)).find((k) => k.id === web.id)
  assert.equal(revoked?.stateClass, 'revoked')
  await page.goto(`${base}/portal/keys/${web.id}`)
  assert.equal(await page.locator(`form[action="/portal/keys/${web.id}/revoke"]`).count(), 0, 'no actions left')

  // The other pages of the navigation: each served, visited in the browser, and shown with its heading.
  for (const [path, heading] of [
    ['/portal/usage', 'Usage'],
    ['/portal/webhooks', 'Webhooks'],
    ['/portal/audit', 'Audit log'],
  ]) {
    const response = await page.goto(`${base}${path}`)
    assert.equal(response?.status(), 200, `${path} is served`)
    assert.equal(page.url(), `${base}${path}`)
    assert.equal(await page.locator('h1').textContent(), heading, `${path} shows its page`)
  }

  // Sign out: the old cookie no longer opens anything, the server forgot the session.
  await page.goto(`${base}/portal/keys`)
  await signOut(main, base)
  assert.equal(await sessionCookieValue(main, base), undefined, 'the cookie is cleared')
  const replayed = await portalFetch(base, '/portal/keys', { cookie })
  assert.equal(replayed.status, 303, 'the old session cookie is refused by the server')
  assert.equal(replayed.headers.get('location'), '/portal/login')

  // What every page did.
  for (const visited of pages) await visited.settle()
  const seen = pages.map((v) => ({
    csp: v.cspViolations,
    console: v.console,
    errors: v.pageErrors,
    outside: v.requestsOutside(base),
  }))
  assert.deepEqual(
    seen,
    pages.map(() => ({ csp: [], console: [], errors: [], outside: [] })),
  )
  assert.ok(
    pages.every((v) => v.requests.length > 0),
    'the pages made requests',
  )
  assert.deepEqual(
    cacheControl.filter((line) => !line.endsWith(': no-store')),
    [],
    'every portal page is no-store',
  )
  assert.ok(cacheControl.length >= 20, `${cacheControl.length} pages seen`)
}

test(
  'the portal in Chromium on loopback: setup, sign-in, keys of each type copied and used, edit, rotate, revoke, sign-out',
  { timeout: 180_000, skip: skipWithoutBrowser },
  async (t) => {
    const p = await startPlatform(t)
    const base = `http://127.0.0.1:${new URL(p.api).port}`
    await journey(t, p, base, [])
  },
)

test(
  'the portal in Chromium on the LAN address over plain HTTP (treated as secure for the clipboard)',
  { timeout: 180_000, skip: skipWithoutBrowser },
  async (t) => {
    // The machine's LAN address, or one added for the test (as root); else the LAN checks are reported NOT RUN.
    const lan = await lanAddressFor(t)
    if (lan.address === undefined) return t.skip(lan.reason)
    const p = await startPlatform(t, ['--host', '0.0.0.0'])
    const port = new URL(p.api).port
    const base = `http://${lan.address}:${port}`
    await journey(t, p, base, [base])
    // The loopback address of the same server answers too (with its own cookie name).
    assert.equal((await portalFetch(`http://127.0.0.1:${port}`, '/portal/keys')).status, 303)
  },
)
