import { existsSync } from 'node:fs'
import { spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import assert from 'node:assert/strict'
import type { Page } from 'playwright-core'
import type { TestPage } from './browser.ts'
import { ANTLER_BIN, envWithoutFlags } from './cli.ts'
import type { Platform } from './platform.ts'

/*
 * The management portal (/portal) driven through its pages in a real browser (test/_helpers/browser.ts), and plain
 * fetch helpers for the checks that need no browser: the session cookie's name on each kind of address, a page or an
 * action replayed with a cookie, the keys a page lists.
 */

export type KeyType = 'server' | 'web' | 'mobile'

/** The first account's credentials the tests use unless told otherwise. */
export const FIRST_ACCOUNT = { login: 'ana', password: 'correct horse battery' } as const

/** The page of a TestPage, or a bare playwright Page. */
const pageOf = (page: TestPage | Page): Page => ('page' in page ? page.page : page)

/** The session cookie's name: `__Host-` on loopback (a secure context), plain on a LAN address over HTTP. */
export function sessionCookieName(base: string): string {
  const host = new URL(base).hostname
  return host === '127.0.0.1' || host === 'localhost' || host === '[::1]' ? '__Host-antler_portal' : 'antler_portal'
}

/** The one-time setup token `antler dev` wrote beside its store. */
export async function setupToken(dataDir: string): Promise<string> {
  return (await readFile(join(dataDir, 'portal-setup-token'), 'utf8')).trim()
}

/**
 * Clicks what submits a form (or follows a link) and waits until the next document of the page has loaded (also when
 * its URL is the same, as for a POST answered with a page).
 */
export async function submitAndWait(page: TestPage | Page, click: () => Promise<unknown>): Promise<void> {
  const p = pageOf(page)
  await Promise.all([p.waitForEvent('framenavigated', { predicate: (frame) => frame === p.mainFrame() }), click()])
  await p.waitForLoadState('load')
}

/** Fills and submits the setup form with the token from the data dir: the first account exists and is signed in. */
export async function setUpFirstAccount(
  page: TestPage | Page,
  base: string,
  dataDir: string,
  account: { login: string; password: string } = FIRST_ACCOUNT,
): Promise<{ login: string; password: string; token: string }> {
  const p = pageOf(page)
  const token = await setupToken(dataDir)
  await p.goto(`${base}/portal/setup`)
  assert.equal(new URL(p.url()).pathname, '/portal/setup', 'the setup page is shown while no account exists')
  await p.fill('#token', token)
  await p.fill('#login', account.login)
  await p.fill('#password', account.password)
  await submitAndWait(p, () => p.click('form[action="/portal/setup"] button[type=submit]'))
  assert.equal(p.url(), `${base}/portal/keys`, 'signed in after the setup')
  assert.equal(await p.locator('.who strong').textContent(), account.login)
  assert.equal(existsSync(join(dataDir, 'portal-setup-token')), false, 'the spent token file is removed')
  return { ...account, token }
}

/** Signs in through the sign-in form and waits for the keys page. */
export async function signIn(page: TestPage | Page, base: string, login: string, password: string): Promise<void> {
  const p = pageOf(page)
  await p.goto(`${base}/portal/login`)
  await p.fill('#login', login)
  await p.fill('#password', password)
  await submitAndWait(p, () => p.click('form[action="/portal/login"] button[type=submit]'))
  assert.equal(p.url(), `${base}/portal/keys`, 'signed in')
  assert.equal(await p.locator('.who strong').textContent(), login)
}

/** Signs out with the header's form and waits for the sign-in page. */
export async function signOut(page: TestPage | Page, base: string): Promise<void> {
  const p = pageOf(page)
  await submitAndWait(p, () => p.click('form[action="/portal/logout"] button'))
  assert.equal(p.url(), `${base}/portal/login`, 'signed out')
}

/** Grants the clipboard to the page's origin (the Copy button writes to it; the test reads it back). */
async function grantClipboard(page: Page): Promise<void> {
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(page.url()).origin })
}

/**
 * On a page that shows a new key once (created or rotated): clicks Copy and answers the key read back from the
 * clipboard (checked equal to the field's value), and the key's id from the "Key details" link.
 */
export async function copyShownKey(page: TestPage | Page): Promise<{ id: string; key: string }> {
  const p = pageOf(page)
  const field = p.locator('input#new-key')
  await field.waitFor()
  const shown = await field.inputValue()
  await grantClipboard(p)
  await p.evaluate(() => navigator.clipboard.writeText('(nothing copied yet)'))
  await p.click('button.copy')
  await p.locator('.copied', { hasText: 'Copied to the clipboard.' }).waitFor()
  const key = await p.evaluate(() => navigator.clipboard.readText())
  assert.equal(key, shown, 'the clipboard holds the key the page shows')
  const href = await p.locator('a', { hasText: 'Key details' }).getAttribute('href')
  const id = /^\/portal\/keys\/([^/]+)$/.exec(href ?? '')?.[1]
  assert.ok(id, `the key's id in the details link ${href}`)
  return { id, key }
}

/** Creates a key with the keys page's form; answers its id and the key string copied from the clipboard. */
export async function createKey(
  page: TestPage | Page,
  base: string,
  spec: { name: string; type: KeyType; origins?: readonly string[] },
): Promise<{ id: string; key: string }> {
  const p = pageOf(page)
  await p.goto(`${base}/portal/keys`)
  const form = p.locator('form[action="/portal/keys"]')
  await form.locator('#name').fill(spec.name)
  await form.locator(`input[name=type][value=${spec.type}]`).check()
  await form.locator('#origins').fill((spec.origins ?? []).join('\n'))
  await submitAndWait(p, () => form.locator('button[type=submit]').click())
  const heading = await p.locator('h1').textContent()
  if (heading !== 'Key created')
    assert.fail(
      `the key was not created: ${await p
        .locator('#form-error')
        .textContent()
        .catch(() => heading)}`,
    )
  const created = await copyShownKey(p)
  assert.ok(created.key.startsWith(`${spec.type}_`), `a ${spec.type} key: ${created.key.slice(0, 8)}…`)
  return created
}

/** `antler accounts create --login NAME` on the platform's data dir (password on stdin); answers the account id. */
export async function createAccountWithCli(
  platform: Pick<Platform, 'dataDir'>,
  login: string,
  password: string,
  extraArgs: string[] = [],
): Promise<string> {
  const child = spawn(
    process.execPath,
    [ANTLER_BIN, 'accounts', 'create', '--login', login, '--data-dir', platform.dataDir, ...extraArgs],
    { env: envWithoutFlags({ ANTLER_FROM_SOURCE: '1' }), stdio: ['pipe', 'pipe', 'pipe'] },
  )
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject)
    child.once('close', (exitCode) => resolve(exitCode))
    child.stdin.end(`${password}\n`)
  }).finally(() => clearTimeout(timer))
  if (code !== 0) throw new Error(`antler accounts create exited ${code}: ${stderr}`)
  const id = /created account (acc_[0-9a-f]+)/.exec(stdout)?.[1]
  if (!id) throw new Error(`antler accounts create said: ${stdout}`)
  return id
}

/** The session cookie's value the browser context holds for `base` (undefined when signed out). */
export async function sessionCookieValue(page: TestPage | Page, base: string): Promise<string | undefined> {
  const cookies = await pageOf(page).context().cookies(base)
  return cookies.find((c) => c.name === sessionCookieName(base))?.value
}

/** The CSRF token of the page's forms (every signed-in page's header has one). */
export async function csrfOf(page: TestPage | Page): Promise<string> {
  const value = await pageOf(page).locator('input[name=_csrf]').first().getAttribute('value')
  assert.ok(value, 'a CSRF token in the page')
  return value
}

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
}

/**
 * A request to the portal the way a script would make it (no redirect followed): with the session cookie when given,
 * a form body when given, and extra headers.
 */
export async function portalFetch(
  base: string,
  path: string,
  options: { cookie?: string; form?: Record<string, string>; headers?: Record<string, string>; method?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers }
  if (options.cookie !== undefined) headers.cookie = `${sessionCookieName(base)}=${options.cookie}`
  let body: string | undefined
  if (options.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded'
    body = new URLSearchParams(options.form).toString()
  }
  const response = await fetch(`${base}${path}`, {
    method: options.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(15_000),
  })
  return { status: response.status, headers: response.headers, text: await response.text() }
}

/** A key row of the keys page, as text. */
export interface ListedKey {
  readonly id: string
  readonly name: string
  readonly type: string
  readonly prefix: string
  readonly lastUsed: string
  readonly state: string
  readonly stateClass: string
}

const decode = (html: string): string =>
  html
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .trim()

/** The keys a keys page (its HTML) lists, parsed from its table. */
export function listedKeys(html: string): ListedKey[] {
  const rows = [...html.matchAll(/<tr data-key-id="([^"]+)">([\s\S]*?)<\/tr>/g)]
  return rows.map(([, id, row]) => {
    const cells = [...row.matchAll(/<td([^>]*)>([\s\S]*?)<\/td>/g)]
    const stateClass = /state-([a-z]+)/.exec(cells[5]?.[1] ?? '')?.[1] ?? ''
    return {
      id,
      name: decode(cells[0]?.[2] ?? ''),
      type: decode(cells[1]?.[2] ?? ''),
      prefix: decode(cells[2]?.[2] ?? ''),
      lastUsed: decode(cells[4]?.[2] ?? ''),
      state: decode(cells[5]?.[2] ?? ''),
      stateClass,
    }
  })
}

/** The keys the account behind `cookie` has, read from its keys page. */
export async function keysOf(base: string, cookie: string): Promise<ListedKey[]> {
  const answer = await portalFetch(base, '/portal/keys', { cookie })
  assert.equal(answer.status, 200, `the keys page with the session: ${answer.status}`)
  return listedKeys(answer.text)
}

/** The usage table of a key page (its HTML): window → counts. */
export function usageTable(
  html: string,
): Record<string, { ok: number; clientErrors: number; authFailures: number; rateLimited: number; documents: number }> {
  const table = /<table class="usage">([\s\S]*?)<\/table>/.exec(html)?.[1] ?? ''
  const out: ReturnType<typeof usageTable> = {}
  for (const [, window, cells] of table.matchAll(/<tr><th scope="row">([^<]*)<\/th>([\s\S]*?)<\/tr>/g)) {
    const [ok, clientErrors, authFailures, rateLimited, documents] = [...cells.matchAll(/<td>(\d+)<\/td>/g)].map((m) =>
      Number(m[1]),
    )
    out[decode(window)] = { ok, clientErrors, authFailures, rateLimited, documents }
  }
  return out
}

/** Polls `check` until it answers a value (not undefined), or fails after `ms` with the last reason. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  ms = 12_000,
  everyMs = 250,
): Promise<T> {
  const deadline = Date.now() + ms
  let last: unknown
  for (;;) {
    try {
      const value = await check()
      if (value !== undefined) return value
    } catch (error) {
      last = error
    }
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${ms} ms${last ? `: ${(last as Error).message ?? last}` : ''}`, {
        cause: last,
      })
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}

/** The session cookie a portal answer sets for `base` (undefined when it sets none, or clears it). */
export function cookieSet(answer: Pick<Answer, 'headers'>, base: string): string | undefined {
  const name = sessionCookieName(base)
  for (const line of answer.headers.getSetCookie()) {
    const [pair] = line.split(';')
    const at = pair.indexOf('=')
    if (pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim() || undefined
  }
  return undefined
}

/** The CSRF token in a signed-in page's HTML. */
export function csrfIn(html: string): string {
  const token = /name="_csrf" value="([^"]+)"/.exec(html)?.[1]
  assert.ok(token, 'a CSRF token in the page')
  return token
}

/** The setup form posted with fetch (no browser): answers the new session's cookie. */
export async function setUpWithFetch(
  base: string,
  dataDir: string,
  account: { login: string; password: string } = FIRST_ACCOUNT,
): Promise<string> {
  const answer = await portalFetch(base, '/portal/setup', { form: { token: await setupToken(dataDir), ...account } })
  assert.equal(answer.status, 303, `setup: ${answer.status} ${answer.text.slice(0, 300)}`)
  const cookie = cookieSet(answer, base)
  assert.ok(cookie, 'setup signs in')
  return cookie
}

/** The sign-in form posted with fetch: the answer, and the session cookie when it signed in. */
export async function signInWithFetch(
  base: string,
  login: string,
  password: string,
): Promise<Answer & { cookie?: string }> {
  const answer = await portalFetch(base, '/portal/login', { form: { login, password } })
  return { ...answer, cookie: cookieSet(answer, base) }
}

/** The session's CSRF token, read from its keys page. */
export async function csrfOfSession(base: string, cookie: string): Promise<string> {
  const answer = await portalFetch(base, '/portal/keys', { cookie })
  assert.equal(answer.status, 200, `the keys page with the session: ${answer.status}`)
  return csrfIn(answer.text)
}

/** The key a "shown once" page (created or rotated) holds, and its id from the details link. */
export function shownKeyIn(html: string): { id: string; key: string } {
  const key = /<input id="new-key" readonly value="([^"]+)"/.exec(html)?.[1]
  const id = /<a href="\/portal\/keys\/([^"/]+)">Key details<\/a>/.exec(html)?.[1]
  assert.ok(key && id, `a key shown once in ${html.slice(0, 200)}`)
  return { id, key }
}

/** Creates a key with the keys page's form posted by fetch (same origin, the session's CSRF token). */
export async function createKeyWithFetch(
  base: string,
  cookie: string,
  spec: { name: string; type: KeyType; origins?: readonly string[] },
): Promise<{ id: string; key: string }> {
  const answer = await portalFetch(base, '/portal/keys', {
    cookie,
    form: {
      _csrf: await csrfOfSession(base, cookie),
      name: spec.name,
      type: spec.type,
      origins: (spec.origins ?? []).join('\n'),
    },
  })
  assert.equal(answer.status, 200, `create ${spec.name}: ${answer.status}`)
  return shownKeyIn(answer.text)
}
