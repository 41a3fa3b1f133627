import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  launchBrowser,
  lanAddress,
  skipWithoutBrowser,
  type LaunchOptions,
  type TestBrowser,
} from '../_helpers/browser.ts'
import { onCleanup } from '../_helpers/cleanup.ts'

/*
 * The browser harness (test/_helpers/browser.ts) against real headless Chromium and a small node:http site, on
 * 127.0.0.1 and on the machine's LAN address when it has one: a CSP violation is reported exactly once and a clean
 * page reports none; a request to another origin is in the request list; an uncaught exception is a page error; the
 * clipboard round-trips on loopback and, launched with the LAN origin treated as secure, on the LAN address; and
 * without that flag the LAN origin over plain HTTP is no secure context (no clipboard, no Secure cookie).
 */

const OPTIONS = { timeout: 60_000, skip: skipWithoutBrowser }
const CSP = "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
const COPIED = 'copied from the page'

const html = (body: string): string => `<!doctype html><html><head><title>t</title></head><body>${body}</body></html>`

const PAGES: Record<string, { type: string; body: string; csp?: boolean; cookies?: string[] }> = {
  '/inline': { type: 'text/html', csp: true, body: html('<p>x</p><script>document.title = "inline ran"</script>') },
  '/clean': { type: 'text/html', csp: true, body: html('<p>x</p><script src="/clean.js"></script>') },
  '/clean.js': { type: 'text/javascript', body: 'document.title = "clean ran"' },
  '/throws': { type: 'text/html', csp: true, body: html('<script src="/throws.js"></script>') },
  '/throws.js': { type: 'text/javascript', body: 'throw new Error("thrown on purpose")' },
  '/copy': {
    type: 'text/html',
    csp: true,
    body: html('<button id="copy">copy</button><script src="/copy.js"></script>'),
  },
  '/copy.js': {
    type: 'text/javascript',
    body: `document.getElementById('copy').addEventListener('click', () => navigator.clipboard.writeText(${JSON.stringify(COPIED)}))`,
  },
  '/cookies': {
    type: 'text/html',
    body: html('<p>cookies</p>'),
    cookies: ['plain=1; Path=/', 'sec=1; Secure; Path=/'],
  },
  '/pixel.png': { type: 'image/gif', body: 'GIF89a' },
}

/** A site on `host`, port 0, closed after the test; `/image?src=URL` is a page (no CSP) showing that image. */
async function startSite(t: TestContext, host: string): Promise<string> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://site')
    if (url.pathname === '/image') {
      response.writeHead(200, { 'content-type': 'text/html' })
      return void response.end(html(`<img src="${url.searchParams.get('src')}" alt="">`))
    }
    const page = PAGES[url.pathname]
    if (!page) return void response.writeHead(url.pathname === '/favicon.ico' ? 204 : 404).end()
    response.writeHead(200, {
      'content-type': page.type,
      ...(page.csp ? { 'content-security-policy': CSP } : {}),
      ...(page.cookies ? { 'set-cookie': page.cookies } : {}),
    })
    response.end(page.body)
  })
  server.keepAliveTimeout = 1_000
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, host, resolve))
  onCleanup(t, () => new Promise<void>((resolve) => server.close(() => resolve())).then(() => undefined))
  onCleanup(t, () => server.closeAllConnections())
  return `http://${host}:${(server.address() as AddressInfo).port}`
}

/** The sites: loopback, and the LAN address when the machine has one. */
async function startSites(t: TestContext): Promise<string[]> {
  const lan = lanAddress()
  if (lan === undefined) t.diagnostic('no non-internal IPv4 address: the LAN cases are not run')
  return [await startSite(t, '127.0.0.1'), ...(lan === undefined ? [] : [await startSite(t, lan)])]
}

async function browserFor(t: TestContext, options?: LaunchOptions): Promise<TestBrowser> {
  const browser = await launchBrowser(options)
  onCleanup(t, () => browser.close())
  return browser
}

test(
  'an inline script under a strict CSP is one violation; a clean page under the same CSP has none',
  OPTIONS,
  async (t) => {
    const browser = await browserFor(t)
    for (const origin of await startSites(t)) {
      const inline = await browser.newPage()
      await inline.page.goto(`${origin}/inline`)
      await inline.settle()
      assert.equal(await inline.page.title(), 't', `${origin}: the inline script did not run`)
      assert.deepEqual(
        inline.cspViolations.map(({ effectiveDirective, blockedURI, disposition }) => ({
          effectiveDirective,
          blockedURI,
          disposition,
        })),
        [{ effectiveDirective: 'script-src-elem', blockedURI: 'inline', disposition: 'enforce' }],
        origin,
      )
      assert.equal(inline.cspViolations[0].documentURI, `${origin}/inline`)
      assert.deepEqual(
        inline.console.map(({ type, text }) => ({ type, csp: text.includes('Content Security Policy') })),
        [{ type: 'error', csp: true }],
        origin,
      )

      const clean = await browser.newPage()
      await clean.page.goto(`${origin}/clean`)
      await clean.settle()
      assert.equal(await clean.page.title(), 'clean ran', origin)
      assert.deepEqual([clean.cspViolations, clean.console, clean.pageErrors], [[], [], []], origin)
      assert.deepEqual(clean.requestsOutside(origin), [], origin)
      await Promise.all([inline.close(), clean.close()])
    }
  },
)

test(
  'a request to another origin is in the request list; an uncaught exception is a page error',
  OPTIONS,
  async (t) => {
    const [site, other] = [await startSite(t, '127.0.0.1'), await startSite(t, '127.0.0.1')]
    const browser = await browserFor(t)
    const page = await browser.newPage()
    const image = `${other}/pixel.png`
    await page.page.goto(`${site}/image?src=${encodeURIComponent(image)}`)
    await page.page.locator('img').evaluate((img: HTMLImageElement) => img.decode().catch(() => undefined))
    assert.ok(page.requests.includes(image), `${image} in ${JSON.stringify(page.requests)}`)
    assert.deepEqual(page.requestsOutside(site), [image])

    const throws = await browser.newPage()
    await throws.page.goto(`${site}/throws`)
    await throws.settle()
    assert.deepEqual(throws.pageErrors, ['thrown on purpose'])
    assert.deepEqual(throws.cspViolations, [])
  },
)

test('the clipboard round-trips on loopback and on the LAN address treated as secure', OPTIONS, async (t) => {
  const sites = await startSites(t)
  const browser = await browserFor(t, { insecureOriginsAsSecure: sites.slice(1) })
  for (const origin of sites) {
    const page = await browser.newPage()
    await page.page.goto(`${origin}/copy`)
    assert.equal(await page.page.evaluate(() => window.isSecureContext), true, origin)
    const written = `written by the harness at ${origin}`
    await page.writeClipboard(written)
    assert.equal(await page.readClipboard(), written, origin)
    await page.page.click('#copy')
    assert.equal(await page.readClipboard(), COPIED, origin)
    assert.deepEqual([page.cspViolations, page.console, page.pageErrors], [[], [], []], origin)
    await page.close()
  }
})

test(
  'the LAN address over plain HTTP, not treated as secure, has no clipboard and drops a Secure cookie',
  OPTIONS,
  async (t) => {
    const lan = lanAddress()
    if (lan === undefined) return void t.skip('no non-internal IPv4 address')
    const origin = await startSite(t, lan)
    const browser = await browserFor(t)
    const page = await browser.newPage()
    await page.page.goto(`${origin}/cookies`)
    assert.equal(await page.page.evaluate(() => window.isSecureContext), false)
    assert.equal(await page.page.evaluate(() => typeof navigator.clipboard), 'undefined')
    await assert.rejects(page.readClipboard(), /cannot grant the clipboard/)
    assert.deepEqual(
      (await page.context.cookies()).map(({ name }) => name),
      ['plain'],
    )
  },
)
