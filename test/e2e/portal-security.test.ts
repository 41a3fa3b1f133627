import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import pg from 'pg'
import { lanAddressFor, launchBrowser, skipWithoutBrowser } from '../_helpers/browser.ts'
import { onCleanup } from '../_helpers/cleanup.ts'
import { isStandardError, issueToken, startPlatform } from '../_helpers/platform.ts'
import { PG_SKIP_REASON, withPostgresDatabase } from '../_helpers/postgres.ts'
import {
  cookieSet,
  createAccountWithCli,
  createKeyWithFetch,
  csrfOfSession,
  eventually,
  FIRST_ACCOUNT,
  keysOf,
  portalFetch,
  sessionCookieName,
  setUpWithFetch,
  shownKeyIn,
  signIn,
  signInWithFetch,
  type Answer,
} from '../_helpers/portal.ts'

/*
 * The portal's defences, mostly with plain fetch: no session (pages redirect, actions and data 401, nothing changes),
 * CSRF (missing, wrong, another Origin) and a real cross-site form in Chromium, one account against another's key
 * (404 for everything, the key unchanged), no key string in the store (SQLite files with their WAL; PostgreSQL's
 * tables when ANTLER_TEST_PG is set), the sign-in throttle, and the security headers of every page.
 */

const OPTIONS = { timeout: 180_000 }
const NAV_PAGES = ['/portal/usage', '/portal/webhooks', '/portal/audit']

const loopback = (api: string) => `http://127.0.0.1:${new URL(api).port}`

/** The standard error object of a JSON answer. */
function jsonError(answer: Answer): { code: string; message: string } {
  const body = JSON.parse(answer.text) as unknown
  assert.ok(isStandardError(body), `the standard error object: ${answer.text}`)
  return body
}

/** The error code an error page shows. */
const pageCode = (answer: Answer): string | undefined => /Code <code>([a-z0-9_]+)<\/code>/.exec(answer.text)?.[1]

/** A key page's content without what changes on its own (the CSRF token stays: same session). */
async function keyPageOf(base: string, cookie: string, id: string): Promise<string> {
  const answer = await portalFetch(base, `/portal/keys/${id}`, { cookie })
  assert.equal(answer.status, 200, `key page ${id}: ${answer.status}`)
  return answer.text
}

test(
  'without a session: every page sends to sign in, every action and usage.json is 401, nothing changes',
  OPTIONS,
  async (t) => {
    const p = await startPlatform(t)
    const base = loopback(p.api)
    const cookie = await setUpWithFetch(base, p.dataDir)
    const csrf = await csrfOfSession(base, cookie)
    const key = await createKeyWithFetch(base, cookie, { name: 'kept', type: 'web', origins: ['http://dapp.example'] })
    const keysBefore = await keysOf(base, cookie)
    const pageBefore = await keyPageOf(base, cookie, key.id)

    for (const withCookie of [undefined, 'not-a-session', 'x'.repeat(200)]) {
      const what = withCookie === undefined ? 'no cookie' : `cookie ${withCookie.slice(0, 12)}`
      for (const path of ['/portal/keys', `/portal/keys/${key.id}`, '/portal/keys/nope', ...NAV_PAGES]) {
        const answer = await portalFetch(base, path, { cookie: withCookie })
        assert.equal(answer.status, 303, `${what}: GET ${path}`)
        assert.equal(answer.headers.get('location'), '/portal/login', `${what}: GET ${path}`)
        assert.ok(!answer.text.includes(key.id), `${what}: GET ${path} tells nothing`)
      }
      const actions: [string, Record<string, string>][] = [
        ['/portal/keys', { _csrf: csrf, name: 'sneaky', type: 'server', origins: '' }],
        [`/portal/keys/${key.id}`, { _csrf: csrf, name: 'renamed', origins: 'http://evil.example' }],
        [`/portal/keys/${key.id}/rotate`, { _csrf: csrf, grace: '0' }],
        [`/portal/keys/${key.id}/revoke`, { _csrf: csrf, confirm: 'yes' }],
        ['/portal/logout', { _csrf: csrf }],
      ]
      for (const [path, form] of actions) {
        const answer = await portalFetch(base, path, { cookie: withCookie, form })
        assert.equal(answer.status, 401, `${what}: POST ${path}`)
        assert.equal(pageCode(answer), 'portal_session_required_error', `${what}: POST ${path}`)
        assert.equal(answer.headers.get('set-cookie'), null)
      }
      const usage = await portalFetch(base, `/portal/keys/${key.id}/usage.json`, { cookie: withCookie })
      assert.equal(usage.status, 401, `${what}: usage.json`)
      assert.match(usage.headers.get('content-type') ?? '', /^application\/json/)
      assert.equal(jsonError(usage).code, 'portal_session_required_error')
    }

    // A session cookie under the other name (no __Host- prefix on loopback) is not the session either.
    const misnamed = await fetch(`${base}/portal/keys`, {
      headers: { cookie: `antler_portal=${cookie}` },
      redirect: 'manual',
    })
    assert.equal(misnamed.status, 303)

    assert.deepEqual(await keysOf(base, cookie), keysBefore, 'no key created, renamed, rotated or revoked')
    assert.equal(await keyPageOf(base, cookie, key.id), pageBefore, 'the key page is unchanged')
    await issueToken({ api: base }, key.key, { origin: 'http://dapp.example' })
  },
)

test(
  'CSRF: no token, a wrong one or another Origin is 403 and changes nothing; a cross-site form in Chromium creates nothing',
  { ...OPTIONS, skip: skipWithoutBrowser },
  async (t) => {
    const p = await startPlatform(t)
    const base = loopback(p.api)
    const cookie = await setUpWithFetch(base, p.dataDir)
    const csrf = await csrfOfSession(base, cookie)
    const key = await createKeyWithFetch(base, cookie, { name: 'kept', type: 'server' })
    const keysBefore = await keysOf(base, cookie)
    const pageBefore = await keyPageOf(base, cookie, key.id)

    const forms: [string, Record<string, string>][] = [
      ['/portal/keys', { name: 'sneaky', type: 'server', origins: '' }],
      [`/portal/keys/${key.id}`, { name: 'renamed' }],
      [`/portal/keys/${key.id}/rotate`, { grace: '0' }],
      [`/portal/keys/${key.id}/revoke`, { confirm: 'yes' }],
      ['/portal/logout', {}],
    ]
    const variants: [
      string,
      (form: Record<string, string>) => Record<string, string>,
      Record<string, string>,
      string,
    ][] = [
      ['no _csrf', (form) => form, {}, 'missing or wrong CSRF token'],
      ['an empty _csrf', (form) => ({ ...form, _csrf: '' }), {}, 'missing or wrong CSRF token'],
      ['a wrong _csrf', (form) => ({ ...form, _csrf: `${csrf.slice(0, -2)}xx` }), {}, 'missing or wrong CSRF token'],
      [
        'a wrong X-CSRF-Token',
        (form) => form,
        { 'x-csrf-token': 'A'.repeat(csrf.length) },
        'missing or wrong CSRF token',
      ],
      [
        'the right _csrf from another Origin',
        (form) => ({ ...form, _csrf: csrf }),
        { origin: 'http://localhost:1' },
        'cross-origin request',
      ],
      [
        'the right _csrf from a look-alike Origin',
        (form) => ({ ...form, _csrf: csrf }),
        { origin: `${base}.evil.example` },
        'cross-origin request',
      ],
      [
        'the right _csrf from the null Origin',
        (form) => ({ ...form, _csrf: csrf }),
        { origin: 'null' },
        'cross-origin request',
      ],
    ]
    for (const [what, formOf, headers] of variants)
      for (const [path, form] of forms) {
        const answer = await portalFetch(base, path, { cookie, form: formOf(form), headers })
        assert.equal(answer.status, 403, `${what}: POST ${path}`)
        assert.equal(pageCode(answer), 'portal_csrf_error', `${what}: POST ${path}`)
      }
    // Another session's token is no better.
    const other = await signInWithFetch(base, FIRST_ACCOUNT.login, FIRST_ACCOUNT.password)
    assert.ok(other.cookie)
    const otherCsrf = await csrfOfSession(base, other.cookie)
    assert.notEqual(otherCsrf, csrf)
    const crossed = await portalFetch(base, '/portal/keys', { cookie, form: { ...forms[0][1], _csrf: otherCsrf } })
    assert.equal(crossed.status, 403)
    assert.deepEqual(await keysOf(base, cookie), keysBefore, 'nothing created, renamed, rotated or revoked')
    assert.equal(await keyPageOf(base, cookie, key.id), pageBefore)
    assert.equal(
      (await portalFetch(base, '/portal/keys', { cookie })).status,
      200,
      'the session still works (no sign-out)',
    )

    // The same form from a page on http://localhost:<port2> (another site), auto-submitted in a signed-in browser, with
    // the session's real CSRF token as if it had leaked.
    const portalOrigin = base
    const attacker = createServer((request, response) => {
      if (request.url !== '/') return void response.writeHead(404).end()
      response.writeHead(200, { 'content-type': 'text/html' })
      response.end(`<!doctype html><html><head><title>win a prize</title></head><body>
<form id="f" method="post" action="${portalOrigin}/portal/keys">
<input name="_csrf" value="${csrf}"><input name="name" value="evil"><input name="type" value="server"><input name="origins" value="">
</form><script>document.getElementById('f').submit()</script></body></html>`)
    })
    attacker.keepAliveTimeout = 1_000
    await new Promise<void>((resolve, reject) => attacker.once('error', reject).listen(0, '127.0.0.1', resolve))
    onCleanup(t, () => new Promise<void>((resolve) => attacker.close(() => resolve())))
    onCleanup(t, () => attacker.closeAllConnections())
    const attackerOrigin = `http://localhost:${(attacker.address() as AddressInfo).port}`

    const browser = await launchBrowser()
    onCleanup(t, () => browser.close())
    const victim = await browser.newPage()
    await signIn(victim, base, FIRST_ACCOUNT.login, FIRST_ACCOUNT.password)
    const posted = victim.page.waitForRequest((r) => r.method() === 'POST' && r.url() === `${portalOrigin}/portal/keys`)
    const answered = victim.page.waitForResponse((r) => r.url() === `${portalOrigin}/portal/keys`)
    await victim.page.goto(`${attackerOrigin}/`)
    const request = await posted
    const response = await answered
    const sent = await request.allHeaders()
    assert.equal(sent.origin, attackerOrigin, 'Chromium sent the attacker page as the Origin')
    assert.ok(
      !(sent.cookie ?? '').includes(sessionCookieName(base)),
      `SameSite=Strict withheld the cookie: ${sent.cookie}`,
    )
    assert.equal(response.status(), 403, 'the Origin check refused it before anything else')
    const keysAfter = await keysOf(base, cookie)
    assert.ok(!keysAfter.some((k) => k.name === 'evil'), 'no key named evil')
    assert.deepEqual(keysAfter, keysBefore)
  },
)

test(
  "account B (from the CLI) gets 404 for account A's key: page, edit, rotate, revoke, usage.json; A's key unchanged",
  OPTIONS,
  async (t) => {
    const p = await startPlatform(t)
    const base = loopback(p.api)
    const cookieA = await setUpWithFetch(base, p.dataDir)
    const keyA = await createKeyWithFetch(base, cookieA, { name: 'alpha', type: 'web', origins: ['http://a.example'] })
    const keysA = await keysOf(base, cookieA)
    const pageA = await keyPageOf(base, cookieA, keyA.id)

    await createAccountWithCli(p, 'bea', 'bea password 123')
    const b = await signInWithFetch(base, 'bea', 'bea password 123')
    assert.equal(b.status, 303, `B signs in: ${b.text.slice(0, 200)}`)
    const cookieB = b.cookie!
    const csrfB = await csrfOfSession(base, cookieB)
    const keyB = await createKeyWithFetch(base, cookieB, { name: 'beta', type: 'server' })
    assert.deepEqual(
      (await keysOf(base, cookieB)).map((k) => k.id),
      [keyB.id],
      "B's list has only B's key",
    )

    const attempts: [string, string, Record<string, string> | undefined][] = [
      ['page', `/portal/keys/${keyA.id}`, undefined],
      ['edit', `/portal/keys/${keyA.id}`, { _csrf: csrfB, name: 'taken', origins: 'http://b.example' }],
      ['rotate', `/portal/keys/${keyA.id}/rotate`, { _csrf: csrfB, grace: '0' }],
      ['revoke', `/portal/keys/${keyA.id}/revoke`, { _csrf: csrfB, confirm: 'yes' }],
    ]
    for (const [what, path, form] of attempts) {
      const answer = await portalFetch(base, path, { cookie: cookieB, form })
      assert.equal(answer.status, 404, `B ${what}: ${answer.status}`)
      assert.equal(pageCode(answer), 'portal_key_not_found_error', `B ${what}`)
      assert.ok(!answer.text.includes('alpha'), `B ${what}: nothing of A's key shown`)
      // The same answer as for a key that does not exist (but for the ids and the trace id).
      const missing = await portalFetch(base, path.replace(keyA.id, 'key_0000000000000000'), { cookie: cookieB, form })
      assert.equal(missing.status, 404)
      const normalize = (text: string) =>
        text
          .replaceAll(keyA.id, 'ID')
          .replaceAll('key_0000000000000000', 'ID')
          .replace(/trace <code>[^<]*<\/code>/, '')
      assert.equal(normalize(answer.text), normalize(missing.text), `B ${what}: no different from a missing key`)
    }
    const usage = await portalFetch(base, `/portal/keys/${keyA.id}/usage.json`, { cookie: cookieB })
    assert.equal(usage.status, 404)
    assert.equal(jsonError(usage).code, 'portal_key_not_found_error')

    assert.deepEqual(await keysOf(base, cookieA), keysA, "A's keys unchanged")
    assert.equal(await keyPageOf(base, cookieA, keyA.id), pageA, "A's key page unchanged")
    await issueToken({ api: base }, keyA.key, { origin: 'http://a.example' })
    // And A's own usage.json still answers.
    const own = await portalFetch(base, `/portal/keys/${keyA.id}/usage.json`, { cookie: cookieA })
    assert.equal(own.status, 200)
    assert.equal((JSON.parse(own.text) as { key_id: string }).key_id, keyA.id)
  },
)

/** Keys of each type created in the portal, one rotated (its new key too), with a use each so usage rows exist. */
async function makeKeys(base: string, cookie: string): Promise<string[]> {
  const keys = [
    await createKeyWithFetch(base, cookie, { name: 'srv', type: 'server' }),
    await createKeyWithFetch(base, cookie, { name: 'app', type: 'mobile' }),
    await createKeyWithFetch(base, cookie, { name: 'dapp', type: 'web', origins: ['http://dapp.example'] }),
  ]
  const rotated = await portalFetch(base, `/portal/keys/${keys[0].id}/rotate`, {
    cookie,
    form: { _csrf: await csrfOfSession(base, cookie), grace: '3600' },
  })
  assert.equal(rotated.status, 200)
  keys.push(shownKeyIn(rotated.text))
  for (const { key } of keys) await issueToken({ api: base }, key, { origin: 'http://dapp.example' })
  // Usage and last use reach the store in the background (every 2 s): wait until the portal shows both for every key,
  // so the store holds what the checks search.
  await eventually('every key shows its last use and its usage', async () => {
    const listed = await keysOf(base, cookie)
    for (const { id } of keys) {
      if (listed.find((k) => k.id === id)?.lastUsed === 'never') return undefined
      const usage = await portalFetch(base, `/portal/keys/${id}/usage.json`, { cookie })
      const hours = (JSON.parse(usage.text) as { hours: { ok: number }[] }).hours
      if (!hours.some((h) => h.ok > 0)) return undefined
    }
    return true
  })
  return keys.map((k) => k.key)
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

test(
  'no key string in the SQLite store files (with the WAL): only its hash; no session id or setup token either',
  OPTIONS,
  async (t) => {
    const p = await startPlatform(t)
    const base = loopback(p.api)
    // Read before the setup spends it (and removes its file).
    const token = (await readFile(join(p.dataDir, 'portal-setup-token'), 'utf8')).trim()
    const cookie = await setUpWithFetch(base, p.dataDir)
    const keys = await makeKeys(base, cookie)

    const files = (await readdir(p.dataDir)).filter((f) => f.startsWith('store.'))
    assert.ok(files.includes('store.sqlite'), `store files: ${files.join(', ')}`)
    const contents = await Promise.all(files.map(async (f) => ({ file: f, bytes: await readFile(join(p.dataDir, f)) })))
    const all = Buffer.concat(contents.map((c) => c.bytes))
    assert.ok(all.length > 0)
    for (const key of keys) {
      for (const { file, bytes } of contents) {
        assert.equal(bytes.includes(key), false, `${key.slice(0, 8)}… in ${file}`)
        assert.equal(
          bytes.includes(key.slice(key.indexOf('_') + 5)),
          false,
          `the secret part of ${key.slice(0, 8)}… in ${file}`,
        )
        assert.equal(
          bytes.includes(Buffer.from(key.split('_')[1], 'hex')),
          false,
          `${key.slice(0, 8)}… as bytes in ${file}`,
        )
      }
      assert.ok(all.includes(sha256(key)), `the hash of ${key.slice(0, 8)}… is stored`)
    }
    for (const secret of [cookie, token]) assert.equal(all.includes(secret), false, 'no session id or setup token')
  },
)

test(
  'no key string in the PostgreSQL tables (api_keys and every portal table)',
  { ...OPTIONS, skip: PG_SKIP_REASON },
  async (t) => {
    const store = await withPostgresDatabase(t)
    const p = await startPlatform(t, ['--store', store])
    const base = loopback(p.api)
    const cookie = await setUpWithFetch(base, p.dataDir)
    const keys = await makeKeys(base, cookie)
    const client = new pg.Client({ connectionString: store })
    await client.connect()
    onCleanup(t, () => client.end())
    const tables = ['api_keys', 'accounts', 'portal_sessions', 'audit_log', 'key_usage', 'portal_setup']
    const dump: Record<string, string> = {}
    for (const table of tables) {
      const { rows } = await client.query(`SELECT * FROM ${table}`)
      dump[table] = JSON.stringify(rows)
    }
    assert.ok(JSON.parse(dump.api_keys).length >= keys.length, 'the keys are in api_keys')
    assert.ok(JSON.parse(dump.key_usage).length >= 1, 'usage rows were written')
    for (const [table, text] of Object.entries(dump))
      for (const key of keys) {
        assert.ok(!text.includes(key), `${key.slice(0, 8)}… in ${table}`)
        assert.ok(!text.includes(key.slice(key.indexOf('_') + 5)), `the secret part of ${key.slice(0, 8)}… in ${table}`)
      }
    for (const key of keys) assert.ok(dump.api_keys.includes(sha256(key)), 'only the hash')
    for (const text of Object.values(dump)) assert.ok(!text.includes(cookie), 'no session id')
  },
)

test(
  'sign-in throttle: the same refusal for an unknown name and a wrong password; after 10 failures a right password is 429 with Retry-After',
  OPTIONS,
  async (t) => {
    const p = await startPlatform(t)
    const base = loopback(p.api)
    await setUpWithFetch(base, p.dataDir)

    const formError = (html: string) =>
      /<div class="error" role="alert" id="form-error">([\s\S]*?)<\/div>/.exec(html)?.[1]
    const unknown = await signInWithFetch(base, 'nobody-here', 'whatever password')
    const wrong = await signInWithFetch(base, FIRST_ACCOUNT.login, 'not the password')
    assert.equal(unknown.status, 401)
    assert.equal(wrong.status, unknown.status)
    assert.ok(formError(unknown.text), 'the sign-in page shows the refusal')
    assert.equal(formError(wrong.text), formError(unknown.text), 'an unknown name reads like a wrong password')
    assert.equal(unknown.cookie ?? wrong.cookie, undefined)
    const strip = (html: string) => html.replace(/value="[^"]*"/g, '')
    assert.equal(strip(wrong.text), strip(unknown.text), 'the pages differ only by the name typed back')

    for (let failures = 2; failures < 10; failures++) {
      const answer = await signInWithFetch(
        base,
        failures % 2 ? 'nobody-here' : FIRST_ACCOUNT.login,
        `wrong ${failures}`,
      )
      assert.equal(answer.status, 401, `failure ${failures + 1}`)
    }
    const blocked = await signInWithFetch(base, FIRST_ACCOUNT.login, FIRST_ACCOUNT.password)
    assert.equal(blocked.status, 429, 'the 11th attempt, with the right password')
    const retryAfter = Number(blocked.headers.get('retry-after'))
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`)
    assert.equal(blocked.cookie, undefined, 'no session while blocked')
    assert.match(blocked.text, /rate_limit_exceeded_error/)
    // A different name from the same IP is blocked too (the IP's window).
    assert.equal((await signInWithFetch(base, 'someone-else', 'x'.repeat(12))).status, 429)
  },
)

/** Checks the security headers of one portal answer. */
function assertSecurityHeaders(answer: Answer, what: string): void {
  const csp = answer.headers.get('content-security-policy')
  assert.ok(csp, `${what}: a CSP`)
  const directives = new Map(
    csp
      .split(';')
      .map((d) => d.trim())
      .filter(Boolean)
      .map((d) => {
        const [name, ...values] = d.split(/\s+/)
        return [name.toLowerCase(), values] as const
      }),
  )
  assert.deepEqual(directives.get('script-src'), ["'self'"], `${what}: ${csp}`)
  assert.deepEqual(directives.get('object-src'), ["'none'"], `${what}: ${csp}`)
  assert.deepEqual(directives.get('base-uri'), ["'none'"], `${what}: ${csp}`)
  assert.deepEqual(directives.get('frame-ancestors'), ["'none'"], `${what}: ${csp}`)
  assert.ok(directives.has('default-src'), `${what}: default-src`)
  assert.ok(!/unsafe-inline|unsafe-eval|unsafe-hashes|strict-dynamic/.test(csp), `${what}: ${csp}`)
  assert.ok(!directives.has('upgrade-insecure-requests'), `${what}: no upgrade-insecure-requests over plain HTTP`)
  assert.equal(answer.headers.get('x-content-type-options'), 'nosniff', what)
  assert.equal(answer.headers.get('strict-transport-security'), null, `${what}: no HSTS over plain HTTP`)
}

test(
  'security headers on every page (loopback and LAN address): strict CSP, nosniff, no HSTS over plain HTTP; the cookie per address',
  OPTIONS,
  async (t) => {
    // The machine's LAN address, or one added for the test (as root); else the LAN half is reported NOT RUN below.
    const lan = await lanAddressFor(t)
    const p = await startPlatform(t, ['--host', '0.0.0.0'])
    const bases = [
      loopback(p.api),
      ...(lan.address === undefined ? [] : [`http://${lan.address}:${new URL(p.api).port}`]),
    ]
    const first = bases[0]
    // Before the first account: the setup and sign-in pages.
    for (const base of bases)
      for (const path of ['/portal/setup', '/portal/login']) {
        const answer = await portalFetch(base, path)
        assert.equal(answer.status, 200, `${base}${path}`)
        assertSecurityHeaders(answer, `${base}${path}`)
      }
    const cookie = await setUpWithFetch(first, p.dataDir)
    for (const base of bases) {
      const signedIn = await signInWithFetch(base, FIRST_ACCOUNT.login, FIRST_ACCOUNT.password)
      assert.equal(signedIn.status, 303)
      const line = signedIn.headers.getSetCookie().find((l) => l.startsWith(`${sessionCookieName(base)}=`))
      assert.ok(line, `${base}: ${sessionCookieName(base)} set: ${signedIn.headers.getSetCookie().join(' | ')}`)
      assert.match(line, /; HttpOnly/i)
      assert.match(line, /; SameSite=Strict/i)
      assert.match(line, /; Path=\//i)
      assert.doesNotMatch(line, /; Domain=/i)
      if (base === first) assert.match(line, /; Secure/i, 'Secure on loopback')
      else
        assert.doesNotMatch(line, /; Secure/i, 'not Secure on a LAN address over plain HTTP (Chromium would drop it)')
      const s = signedIn.cookie!
      const csrf = await csrfOfSession(base, s)
      const created = await portalFetch(base, '/portal/keys', {
        cookie: s,
        form: { _csrf: csrf, name: 'k', type: 'server' },
      })
      assert.equal(created.status, 200)
      assert.equal(created.headers.get('cache-control'), 'no-store', 'the page showing a key once is never stored')
      const { id } = shownKeyIn(created.text)
      const answers: [string, Answer][] = [
        ['sign-in page', await portalFetch(base, '/portal/login')],
        ['keys page', await portalFetch(base, '/portal/keys', { cookie: s })],
        ['key created', created],
        ['key page', await portalFetch(base, `/portal/keys/${id}`, { cookie: s })],
        [
          'refused form',
          await portalFetch(base, '/portal/keys', { cookie: s, form: { _csrf: csrf, name: 'w', type: 'web' } }),
        ],
        ['not found page', await portalFetch(base, '/portal/keys/key_nope', { cookie: s })],
        ['CSRF refusal', await portalFetch(base, '/portal/keys', { cookie: s, form: { name: 'x', type: 'server' } })],
        ['redirect to sign in', await portalFetch(base, '/portal/keys')],
        [
          'failed sign-in',
          await portalFetch(base, '/portal/login', { form: { login: 'ana', password: 'nope nope nope' } }),
        ],
      ]
      for (const path of NAV_PAGES) {
        const answer = await portalFetch(base, path, { cookie: s })
        assert.equal(answer.status, 200, `${base}${path} is served`)
        answers.push([path, answer])
      }
      for (const [what, answer] of answers) assertSecurityHeaders(answer, `${base} ${what} (${answer.status})`)
      const usage = await portalFetch(base, `/portal/keys/${id}/usage.json`, { cookie: s })
      assert.equal(usage.status, 200)
      assert.equal(usage.headers.get('x-content-type-options'), 'nosniff')
    }
    assert.ok(
      cookieSet(
        await portalFetch(first, '/portal/logout', { cookie, form: { _csrf: await csrfOfSession(first, cookie) } }),
        first,
      ) === undefined,
    )
    if (lan.address === undefined) await t.test('the same on a LAN address', (st) => st.skip(lan.reason))
  },
)
