// Screenshots of the management portal for docs/portal/: runs `antler dev` in a temporary directory, sets up the first
// account, creates a few keys, makes some API calls so usage shows, then saves full-page screenshots of each page in
// light and dark (1280 px wide) as docs/portal/<page>-<light|dark>.png. A page this build does not serve (404) is
// skipped. Run: node --import tsx scripts/portal-screenshots.ts (needs Chromium, as the browser tests do).
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { launchBrowser, type TestPage } from '../test/_helpers/browser.ts'
import { stopChild } from '../test/_helpers/child.ts'
import { devArgs } from '../test/_helpers/platform.ts'
import { copyShownKey, createKey, setUpFirstAccount, submitAndWait } from '../test/_helpers/portal.ts'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const OUT = join(ROOT, 'docs/portal')
const WIDTH = 1280
const SCHEMES = ['light', 'dark'] as const
type Scheme = (typeof SCHEMES)[number]

process.env.ANTLER_FROM_SOURCE ??= '1'

/** `antler dev` in `dataDir`; resolves with its API's base URL once ready. */
async function startAntler(dataDir: string) {
  const child = spawn(process.execPath, [join(ROOT, 'bin/antler.js'), ...devArgs(dataDir)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  const api = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line within 60 s: ${stderr}`)), 60_000)
    child.stdout.on('data', (d) => {
      stdout += d
      const line = stdout.split('\n').find((l) => l.startsWith('antler ready '))
      if (!line) return
      clearTimeout(timer)
      resolve((JSON.parse(line.slice('antler ready '.length)) as { api: string }).api)
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`antler exited ${code}: ${stderr}`))
    })
  })
  return { child, api }
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) })
  return { status: response.status, body: (await response.json()) as { token?: string } }
}

/** Some calls with a key: successes, a few 4xx, and (web keys) refusals from an origin it does not list. */
async function useKey(api: string, key: string, calls: number, origin?: string): Promise<void> {
  const headers: Record<string, string> = origin ? { origin } : {}
  const { body } = await post(`${api}/v1/auth/issue`, { api_key: key }, headers)
  if (!body.token) throw new Error(`no token for ${key.slice(0, 8)}…: ${JSON.stringify(body)}`)
  const auth = { ...headers, authorization: `Bearer ${body.token}` }
  for (let i = 0; i < calls; i++) await post(`${api}/v1/chain/get_info`, {}, auth)
  for (let i = 0; i < Math.ceil(calls / 5); i++)
    await post(`${api}/v1/chain/get_account`, { account_name: 'no.such.acct' }, auth)
  if (origin)
    for (let i = 0; i < 2; i++) await post(`${api}/v1/auth/issue`, { api_key: key }, { origin: 'http://x.test' })
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'antler-screenshots-'))
  const { child, api } = await startAntler(dataDir)
  const browser = await launchBrowser({ timeoutMs: 30_000 })
  const saved: string[] = []
  try {
    await mkdir(OUT, { recursive: true })
    const pages = new Map<Scheme, TestPage>()
    for (const scheme of SCHEMES)
      pages.set(scheme, await browser.newPage({ colorScheme: scheme, viewport: { width: WIDTH, height: 800 } }))
    const shoot = async (scheme: Scheme, name: string) => {
      const page = pages.get(scheme)!.page
      await page.waitForLoadState('load')
      const file = join(OUT, `${name}-${scheme}.png`)
      await page.screenshot({ path: file, fullPage: true })
      saved.push(file)
    }
    const visit = async (scheme: Scheme, path: string, name: string) => {
      const page = pages.get(scheme)!.page
      const response = await page.goto(`${api}${path}`)
      if (response?.status() === 404) return void process.stdout.write(`${path}: 404, skipped\n`)
      if (path.startsWith('/portal/keys/')) await page.locator('#usage-chart .uplot').waitFor()
      await shoot(scheme, name)
    }

    // Before the first account: the setup and sign-in pages.
    for (const scheme of SCHEMES) {
      await visit(scheme, '/portal/setup', 'setup')
      await visit(scheme, '/portal/login', 'sign-in')
    }
    const light = pages.get('light')!
    await setUpFirstAccount(light, api, dataDir)
    const keys = [
      await createKey(light, api, { name: 'indexer backend', type: 'server' }),
      await createKey(light, api, { name: 'wallet app', type: 'mobile' }),
      await createKey(light, api, { name: 'dapp.example', type: 'web', origins: ['https://dapp.example'] }),
    ]
    await useKey(api, keys[0].key, 40)
    await useKey(api, keys[1].key, 15)
    await useKey(api, keys[2].key, 25, 'https://dapp.example')
    // One key rotated with a grace, one revoked, so the list shows every state.
    await light.page.goto(`${api}/portal/keys/${keys[1].id}`)
    await light.page.check('input[name=grace][value="3600"]')
    await submitAndWait(light, () => light.page.click('form[action$="/rotate"] button[type=submit]'))
    await copyShownKey(light)
    const spare = await createKey(light, api, { name: 'old test key', type: 'server' })
    await light.page.goto(`${api}/portal/keys/${spare.id}`)
    light.page.once('dialog', (dialog) => void dialog.accept())
    await light.page.check('input[name=confirm]')
    await submitAndWait(light, () => light.page.click('form[action$="/revoke"] button[type=submit]'))
    // Usage reaches the store every 2 s.
    await new Promise((resolve) => setTimeout(resolve, 2_500))

    const dark = pages.get('dark')!
    await dark.page.goto(`${api}/portal/login`)
    await dark.context.addCookies(await light.context.cookies(api))
    for (const scheme of SCHEMES) {
      await visit(scheme, '/portal/keys', 'keys')
      await visit(scheme, `/portal/keys/${keys[0].id}`, 'key')
      for (const [path, name] of [
        ['/portal/usage', 'usage'],
        ['/portal/webhooks', 'webhooks'],
        ['/portal/audit', 'audit'],
      ])
        await visit(scheme, path, name)
      await createKey(pages.get(scheme)!, api, { name: `ci deploy (${scheme})`, type: 'server' })
      await shoot(scheme, 'key-created')
    }
  } finally {
    await browser.close()
    await stopChild(child)
    await rm(dataDir, { recursive: true, force: true })
  }
  for (const file of saved) process.stdout.write(`${file.slice(ROOT.length)}\n`)
}

await main()
