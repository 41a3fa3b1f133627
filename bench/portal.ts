import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { inProcesses, startDev } from './children.ts'
import { f1, held, timeIt, type Figures } from './timing.ts'

/** Issue 28's bar: an account's keys (200 of them) and its usage page load in under 2 s. */
const BAR_MS = 2_000
const PASSWORD = 'bench-portal-password'

/** A signed-in portal session: its cookie header and CSRF token. */
interface Session {
  readonly cookie: string
  readonly csrf: string
}

async function form(url: string, fields: Record<string, string>, cookie = ''): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams(fields).toString(),
    signal: AbortSignal.timeout(30_000),
  })
}

/** Sets up the first account with the setup token `antler dev` wrote, and answers its session. */
async function setUp(api: string, dataDir: string): Promise<Session> {
  const token = readFileSync(join(dataDir, 'portal-setup-token'), 'utf8').trim()
  const answer = await form(`${api}/portal/setup`, { token, login: 'bench', password: PASSWORD })
  if (answer.status !== 303) throw new Error(`portal setup: HTTP ${answer.status}`)
  const cookie = answer.headers.getSetCookie()[0].split(';')[0]
  const page = await (await fetch(`${api}/portal/keys`, { headers: { cookie } })).text()
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page)?.[1]
  if (!csrf) throw new Error('portal: no CSRF token on the keys page')
  return { cookie, csrf }
}

/** A page loaded `rounds` times, one at a time: its latency percentiles (ms). */
function timeLoads(url: string, cookie: string, rounds: number) {
  return timeIt(rounds, async () => {
    const response = await fetch(url, { headers: { cookie }, signal: AbortSignal.timeout(30_000) })
    await response.arrayBuffer()
    if (response.status !== 200) throw new Error(`${url}: HTTP ${response.status}`)
  })
}

/**
 * `npm run bench -- --only portal`: one `antler dev`, an account with `keys` server keys each used a few times (so
 * usage rows exist), then `rounds` loads each of `/portal/keys` and `/portal/usage` from this process, one at a time,
 * next to `/healthz` (the limit: the cheapest route, loaded alike in the same run).
 */
export async function benchPortal(options: { keys: number; rounds: number }): Promise<Figures> {
  return inProcesses('portal', 'failures', async ({ dir, children, figures }) => {
    const api = (await startDev(children, dir, 'dev')).ready.api
    const session = await setUp(api, join(dir, 'dev'))
    for (let i = 0; i < options.keys; i++) {
      const fields = { _csrf: session.csrf, name: `key ${i}`, type: 'server' }
      const created = await form(`${api}/portal/keys`, fields, session.cookie)
      const key = /id="new-key" readonly value="([^"]+)"/.exec(await created.text())?.[1]
      if (!key) throw new Error(`portal: key ${i} was not created (HTTP ${created.status})`)
      if (i % 10 === 0) await fetch(`${api}/v1/auth/issue`, { method: 'POST', body: JSON.stringify({ api_key: key }) })
    }
    // Usage is written every 2 s.
    await new Promise((resolve) => setTimeout(resolve, 2_500))
    const limit = await timeLoads(`${api}/healthz`, '', options.rounds)
    for (const page of ['keys', 'usage']) {
      const loads = await timeLoads(`${api}/portal/${page}`, session.cookie, options.rounds)
      figures[`/portal/${page} with ${options.keys} keys`] =
        `p50 ${f1(loads.p50)} ms, p99 ${f1(loads.p99)} ms over ${options.rounds} loads ` +
        `(/healthz alike: p50 ${f1(limit.p50)} ms); bar p99 < ${BAR_MS} ms: ${held(loads.p99 < BAR_MS)}`
    }
  })
}
