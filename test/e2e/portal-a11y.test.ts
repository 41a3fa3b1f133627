import { test } from 'node:test'
import assert from 'node:assert/strict'
import { launchBrowser, skipWithoutBrowser } from '../_helpers/browser.ts'
import { startPlatform } from '../_helpers/platform.ts'
import { createKey, setUpFirstAccount } from '../_helpers/portal.ts'

/** Every visible form control without a label (none of: a <label>, aria-label, aria-labelledby), by id or name. */
const UNLABELLED = () =>
  [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
    .filter((e) => {
      const control = e as HTMLInputElement
      return !control.labels?.length && !control.getAttribute('aria-label') && !control.getAttribute('aria-labelledby')
    })
    .map((e) => e.id || e.getAttribute('name') || e.outerHTML.slice(0, 60))

test(
  'portal pages: every control labelled, keyboard reachable from a skip link, light and dark themes',
  { timeout: 180_000, skip: skipWithoutBrowser },
  async (t) => {
    const p = await startPlatform(t)
    const base = p.api
    const browser = await launchBrowser()
    t.after(() => browser.close())
    const opened = await browser.newPage()
    const page = opened.page
    await setUpFirstAccount(opened, base, p.dataDir)
    const { id } = await createKey(opened, base, { name: 'a11y', type: 'web', origins: ['http://dapp.example'] })

    for (const path of ['/portal/keys', `/portal/keys/${id}`, '/portal/usage', '/portal/webhooks', '/portal/audit']) {
      await page.goto(`${base}${path}`)
      assert.deepEqual(await page.evaluate(UNLABELLED), [], `${path}: every control has a label`)
      // The first Tab reaches the skip link; following it puts focus on the main content.
      await page.keyboard.press('Tab')
      assert.equal(await page.evaluate(() => document.activeElement?.className), 'skip', `${path}: skip link first`)
      await page.keyboard.press('Enter')
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'main', `${path}: focus moves to main`)
    }

    // The create form works from the keyboard alone: focus the name, type, Tab to the type radios, submit with Enter.
    await page.goto(`${base}/portal/keys`)
    await page.focus('#name')
    await page.keyboard.type('typed')
    await page.keyboard.press('Enter')
    await page.waitForSelector('#new-key')
    assert.match(await page.inputValue('#new-key'), /^server_[0-9a-f]{64}$/)

    // The theme follows the system, and the toggle overrides it (remembered in the browser).
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor)
    await page.emulateMedia({ colorScheme: 'light' })
    await page.goto(`${base}/portal/keys`)
    const light = await background()
    await page.emulateMedia({ colorScheme: 'dark' })
    const dark = await background()
    assert.notEqual(light, dark, 'dark when the system is dark')
    await page.click('#theme-toggle')
    assert.equal(await background(), light, 'the toggle switches to light')
    await page.reload()
    assert.equal(await background(), light, 'and the choice is kept')
    await opened.settle()
    assert.deepEqual([opened.cspViolations, opened.console, opened.pageErrors], [[], [], []])
  },
)
