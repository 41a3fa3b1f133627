import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { networkInterfaces } from 'node:os'
import type { TestContext } from 'node:test'
import { promisify } from 'node:util'
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core'
import { onCleanup, within } from './cleanup.ts'

/*
 * Real headless Chromium for browser tests: Debian's `chromium` package driven by playwright-core (no browser
 * download). `.ci/run` installs it and sets ANTLER_TEST_CHROMIUM; elsewhere `apt-get install chromium`.
 *
 * Measured on Chromium 156 (Debian 12) with playwright-core 1.65, against plain-HTTP servers on 127.0.0.1 and on the
 * machine's LAN address (test/e2e/browser-harness.test.ts holds the ones the portal depends on):
 * - http://127.0.0.1:PORT is a secure context: the clipboard API works once granted, Secure and __Host- cookies are
 *   stored and sent, and requests carry Sec-Fetch-Site (`none` for a typed navigation, `same-origin` for a fetch).
 * - http://<lan>:PORT is not: `window.isSecureContext` is false, `navigator.clipboard` is undefined,
 *   `grantPermissions` throws "Permission can't be granted in current context", Set-Cookie with Secure (so every
 *   __Host- cookie) is dropped, and no Sec-Fetch-* header is sent at all (also not from a secure page to it).
 * - launched with `--unsafely-treat-insecure-origin-as-secure=http://<lan>:PORT` (`insecureOriginsAsSecure` below;
 *   playwright's own --user-data-dir satisfies the flag): that origin is a secure context, the clipboard works,
 *   Secure cookies are kept and Sec-Fetch-Site is sent, but a __Host- cookie is still dropped.
 * - An inline script under `script-src 'self'` gives one `securitypolicyviolation` event (effectiveDirective
 *   `script-src-elem`, blockedURI `inline`) and one console error ("Executing inline script violates the following
 *   Content Security Policy directive…"): both are collected, the event in `cspViolations`, the message in `console`.
 *   A request the CSP blocks is never made, so it is in `cspViolations` and not in `requests`.
 */

/** The Chromium the tests drive. */
export const CHROMIUM_PATH = process.env.ANTLER_TEST_CHROMIUM ?? '/usr/bin/chromium'

/** The default limit of each page action and navigation. */
export const BROWSER_TIMEOUT_MS = 15_000
const LAUNCH_TIMEOUT_MS = 30_000
const CLOSE_TIMEOUT_MS = 15_000

/**
 * node:test's `skip` for a browser test: false when Chromium is there; else the reason, unless CI is set or
 * ANTLER_TEST_CHROMIUM names the executable (then the test runs and fails loudly at launch).
 */
export const skipWithoutBrowser: string | false =
  existsSync(CHROMIUM_PATH) || process.env.CI || process.env.ANTLER_TEST_CHROMIUM
    ? false
    : `no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set ANTLER_TEST_CHROMIUM; .ci/run installs it)`

/** The machine's first non-internal IPv4 address, or undefined when it has none. */
export function lanAddress(): string | undefined {
  for (const addresses of Object.values(networkInterfaces())) {
    const found = addresses?.find((address) => address.family === 'IPv4' && !address.internal)
    if (found) return found.address
  }
  return undefined
}

const run = promisify(execFile)
const IP_TIMEOUT_MS = 10_000

/** Runs `ip …` (iproute2); answers its error output when it fails, undefined when it worked. */
async function ip(args: readonly string[]): Promise<string | undefined> {
  try {
    await run('ip', args, { timeout: IP_TIMEOUT_MS })
    return undefined
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim()
    return `ip ${args.join(' ')}: ${stderr || (error as Error).message}`
  }
}

/**
 * Adds an address of this machine on an interface of the test's own, removed after the test: a `dummy` interface, or
 * where the kernel has no dummy driver (some VMs) a `bridge` with no port, which holds a local address the same way.
 * Root only. Answers the address, or why it could not.
 */
async function addTestLanAddress(t: TestContext): Promise<{ address: string } | { reason: string }> {
  if (process.getuid?.() !== 0) return { reason: `not root (uid ${process.getuid?.()}): cannot add an interface` }
  // One interface per test process (≤ 15 characters), its /32 address from the pid: parallel test files never clash.
  const name = `antler${process.pid}`
  const address = `10.213.${(process.pid >> 8) & 255}.${process.pid & 255}`
  const tried: string[] = []
  for (const kind of ['dummy', 'bridge']) {
    const failed = await ip(['link', 'add', name, 'type', kind])
    if (failed) {
      tried.push(failed)
      continue
    }
    onCleanup(t, async () => {
      const left = await ip(['link', 'del', name])
      if (left) throw new Error(`the test's interface is left: ${left}`)
    })
    const configured =
      (await ip(['addr', 'add', `${address}/32`, 'dev', name])) ?? (await ip(['link', 'set', name, 'up']))
    if (configured) return { reason: configured }
    return { address }
  }
  return { reason: tried.join('; ') }
}

/**
 * A non-internal IPv4 address for a test's LAN checks (a server bound to 0.0.0.0 answers on it): the machine's own,
 * else one added for the test (`addTestLanAddress`; always so with ANTLER_TEST_LAN=own). Without either, `reason` says
 * the LAN checks are NOT RUN and why, for the test's skip; with ANTLER_TEST_LAN=required (.ci/run, which runs as root)
 * or CI set, that is an error instead. ANTLER_TEST_LAN takes both, comma-separated.
 */
export async function lanAddressFor(
  t: TestContext,
): Promise<{ address: string } | { address?: never; reason: string }> {
  const modes = (process.env.ANTLER_TEST_LAN ?? '').split(',')
  const own = modes.includes('own')
  const existing = own ? undefined : lanAddress()
  if (existing) return { address: existing }
  const added = await addTestLanAddress(t)
  if ('address' in added) {
    t.diagnostic(`LAN checks on ${added.address}, an address added for this test`)
    return added
  }
  const reason = `LAN checks NOT RUN: no non-internal IPv4 address${own ? ' (ANTLER_TEST_LAN=own)' : ''} and none could be added (${added.reason})`
  if (process.env.CI || modes.includes('required')) throw new Error(reason)
  return { reason }
}

export interface LaunchOptions {
  /** Origins (`http://host:port`) Chromium treats as secure contexts (clipboard, Secure cookies) over plain HTTP. */
  readonly insecureOriginsAsSecure?: readonly string[]
  /** The default limit of each action and navigation of the pages (15 s). */
  readonly timeoutMs?: number
  readonly launchTimeoutMs?: number
}

/** A console message of type error or warning. */
export interface ConsoleEntry {
  readonly type: 'error' | 'warning'
  readonly text: string
  /** The script or document that logged it ('' when Chromium gives none). */
  readonly url: string
}

/** What a `securitypolicyviolation` event said. */
export interface CspViolation {
  readonly effectiveDirective: string
  /** `inline`, `eval`, or the URL that was blocked. */
  readonly blockedURI: string
  readonly disposition: string
  readonly documentURI: string
  readonly sourceFile: string
  readonly lineNumber: number
  readonly sample: string
}

/** A page in its own browser context (own cookies, permissions), with what it did collected as it happens. */
export interface TestPage {
  readonly page: Page
  readonly context: BrowserContext
  readonly console: ConsoleEntry[]
  /** Uncaught exceptions in the page, as their messages. */
  readonly pageErrors: string[]
  readonly cspViolations: CspViolation[]
  /** Every request the context made (documents, subresources, fetches, workers), as URLs, in order. */
  readonly requests: string[]
  /** The requests whose origin is not `origin`. */
  requestsOutside(origin: string): string[]
  /** Waits until every violation the frames have dispatched so far is in `cspViolations`. */
  settle(): Promise<void>
  /** Grants clipboard access to the page's current origin, then reads the clipboard in the page. */
  readClipboard(): Promise<string>
  /** Grants clipboard access to the page's current origin, then writes `text` from the page. */
  writeClipboard(text: string): Promise<void>
  close(): Promise<void>
}

export interface TestBrowser {
  readonly browser: Browser
  newPage(options?: BrowserContextOptions): Promise<TestPage>
  close(): Promise<void>
}

const BINDING = '__antlerCspViolation'

/**
 * Runs in every frame before its scripts: forwards each violation to Node, keeping the binding calls' promises so
 * `settle` can wait for them. The window's capture listener sees the event before the page's own listeners.
 */
function forwardCspViolations(binding: string): void {
  const scope = window as unknown as Record<string, unknown>
  const pending: Promise<unknown>[] = []
  scope[`${binding}Pending`] = pending
  window.addEventListener(
    'securitypolicyviolation',
    (event) => {
      const forward = scope[binding] as (violation: CspViolation) => Promise<unknown>
      pending.push(
        forward({
          effectiveDirective: event.effectiveDirective,
          blockedURI: event.blockedURI,
          disposition: event.disposition,
          documentURI: event.documentURI,
          sourceFile: event.sourceFile,
          lineNumber: event.lineNumber,
          sample: event.sample,
        }),
      )
    },
    true,
  )
}

/** Launches headless Chromium; close it after the test (`onCleanup(t, () => browser.close())`). */
export async function launchBrowser(options: LaunchOptions = {}): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM_PATH))
    throw new Error(`no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set ANTLER_TEST_CHROMIUM)`)
  const timeout = options.timeoutMs ?? BROWSER_TIMEOUT_MS
  const args = ['--no-sandbox']
  if (options.insecureOriginsAsSecure?.length)
    args.push(`--unsafely-treat-insecure-origin-as-secure=${options.insecureOriginsAsSecure.join(',')}`)
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args,
    timeout: options.launchTimeoutMs ?? LAUNCH_TIMEOUT_MS,
  })
  return {
    browser,
    newPage: (contextOptions) => openPage(browser, timeout, contextOptions),
    close: () => within(browser.close(), CLOSE_TIMEOUT_MS, 'closing Chromium'),
  }
}

async function openPage(browser: Browser, timeout: number, options: BrowserContextOptions = {}): Promise<TestPage> {
  const context = await browser.newContext(options)
  context.setDefaultTimeout(timeout)
  context.setDefaultNavigationTimeout(timeout)
  const consoleEntries: ConsoleEntry[] = []
  const pageErrors: string[] = []
  const cspViolations: CspViolation[] = []
  const requests: string[] = []
  context.on('request', (request) => void requests.push(request.url()))
  await context.exposeBinding(BINDING, (_source, violation: CspViolation) => void cspViolations.push(violation))
  await context.addInitScript(forwardCspViolations, BINDING)
  const page = await context.newPage()
  page.on('console', (message) => {
    const type = message.type()
    if (type === 'error' || type === 'warning')
      consoleEntries.push({ type, text: message.text(), url: message.location().url })
  })
  page.on('pageerror', (error) => void pageErrors.push(error.message))

  const grantClipboard = async (): Promise<void> => {
    const origin = new URL(page.url()).origin
    try {
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin })
    } catch (error) {
      throw new Error(
        `cannot grant the clipboard to ${origin}: not a secure context? (launchBrowser({ insecureOriginsAsSecure }))`,
        { cause: error },
      )
    }
  }
  return {
    page,
    context,
    console: consoleEntries,
    pageErrors,
    cspViolations,
    requests,
    requestsOutside: (origin) => requests.filter((url) => !URL.canParse(url) || new URL(url).origin !== origin),
    async settle() {
      // A violation event is dispatched in a task of its own: let one pass, then wait for the binding calls.
      for (const frame of page.frames()) {
        await frame
          .evaluate(async (binding) => {
            await new Promise((resolve) => setTimeout(resolve, 0))
            const scope = window as unknown as Record<string, Promise<unknown>[] | undefined>
            await Promise.all(scope[`${binding}Pending`] ?? [])
          }, BINDING)
          .catch((error: unknown) => {
            if (!frame.isDetached()) throw error
          })
      }
    },
    async readClipboard() {
      await grantClipboard()
      return page.evaluate(() => navigator.clipboard.readText())
    },
    async writeClipboard(text) {
      await grantClipboard()
      await page.evaluate((value) => navigator.clipboard.writeText(value), text)
    },
    close: () => context.close(),
  }
}
