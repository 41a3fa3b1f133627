import { test } from 'node:test'
import assert from 'node:assert/strict'
import vm from 'node:vm'
import ts from 'typescript'
import { APIClient } from '@wharfkit/antelope'
import { startPlatform, issueToken, type Platform } from '../_helpers/platform.ts'
import { pushActions, waitIndexed } from '../_helpers/push.ts'

// GraphiQL at /graphiql on a real `antler dev`: the page and its policy headers, every script and stylesheet it
// loads served by Antler itself (same origin, a JavaScript or CSS type, real content), no URL to another host in
// the page or its script; then the page script run against the platform with browser stand-ins: its fetcher
// queries `POST /graphql` with the token typed in the page's field and subscribes over the `/graphql` WebSocket.

/** What the page's Content-Security-Policy must say, directive by directive. */
const POLICY: Record<string, string> = {
  'default-src': "'self'",
  'script-src': "'self'",
  'style-src': "'self' 'unsafe-inline'",
  'connect-src': "'self' ws: wss:",
  'img-src': "'self' data:",
  'object-src': "'none'",
  'base-uri': "'none'",
  'frame-ancestors': "'none'",
}
/** Smallest size of a served asset: our own stylesheet is the smallest, React's UMD build is 10 KB. */
const MIN_ASSET_BYTES = 300
/** A URL with a scheme and a host (`https://…`, `ws://…`) or protocol-relative (`//cdn.example/…`). */
const OTHER_HOST = /\b[a-z][a-z0-9+.-]*:\/\/[^\s'"`]+|(?<![:\w/])\/\/[a-z0-9-]+(?:\.[a-z0-9-]+)+/gi

function directives(csp: string | null): Map<string, string> {
  return new Map(
    (csp ?? '')
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((words) => words[0])
      .map(([name, ...values]) => [name, values.join(' ')]),
  )
}

/** Every `<script>` and `<link>` tag of the page, with the URL it loads (`inline`: a script's own text). */
function pageAssets(html: string): { tag: string; kind: 'script' | 'style'; url?: string; inline: string }[] {
  const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)].map((m) => ({
    tag: m[0],
    kind: 'script' as const,
    url: /\bsrc="([^"]*)"/i.exec(m[1])?.[1],
    inline: m[2].trim(),
  }))
  const links = [...html.matchAll(/<link\b[^>]*>/gi)].map((m) => ({
    tag: m[0],
    kind: 'style' as const,
    url: /\bhref="([^"]*)"/i.exec(m[0])?.[1],
    inline: '',
  }))
  return [...scripts, ...links]
}

/** The string literals of a script (its comments and code left out), by the TypeScript parser. */
function stringLiterals(script: string): string[] {
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) found.push(node.text)
    ts.forEachChild(node, visit)
  }
  visit(ts.createSourceFile('page.js', script, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS))
  return found
}

async function get(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(15_000) })
  return { status: response.status, headers: response.headers, body: await response.text() }
}

test('GraphiQL is served entirely by Antler, and its page script talks to /graphql', async (t) => {
  const p = await startPlatform(t)
  const page = await get(`${p.api}/graphiql`)
  const assets = pageAssets(page.body)
  const pageScriptUrl = assets.find((a) => a.url?.endsWith('/page.js'))?.url

  await t.test('GET /graphiql answers the page with its policy headers', async () => {
    assert.equal(page.status, 200, page.body)
    assert.match(page.headers.get('content-type') ?? '', /^text\/html\b/)
    const csp = directives(page.headers.get('content-security-policy'))
    for (const [name, value] of Object.entries(POLICY)) assert.equal(csp.get(name), value, `CSP ${name}`)
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff')
    assert.match(page.body, /id="antler-token"/, 'the token field')
    assert.equal((await get(`${p.api}/graphiql/`)).body, page.body, '/graphiql/ answers the same page')
  })

  await t.test('every script and stylesheet is a same-origin asset with its type and real content', async () => {
    assert.ok(assets.filter((a) => a.kind === 'script').length >= 4, 'React, ReactDOM, GraphiQL and the page')
    assert.ok(assets.filter((a) => a.kind === 'style').length >= 2, "GraphiQL's and the page's stylesheets")
    assert.ok(pageScriptUrl, 'the page script')
    for (const { tag, kind, url, inline } of assets) {
      assert.equal(inline, '', `an inline script: ${tag}`)
      assert.ok(url, `${tag} loads nothing`)
      assert.doesNotMatch(url, /^[a-z][a-z0-9+.-]*:|^\/\//i, `${url} names a scheme or a host`)
      assert.equal(new URL(url, `${p.api}/graphiql`).origin, p.api, `${url} is on another origin`)
      const answer = await get(new URL(url, `${p.api}/graphiql`).href)
      assert.equal(answer.status, 200, `${url}: ${answer.body.slice(0, 200)}`)
      const type = answer.headers.get('content-type') ?? ''
      if (kind === 'script') assert.match(type, /^(text|application)\/javascript\b/, `${url}: ${type}`)
      else assert.match(type, /^text\/css\b/, `${url}: ${type}`)
      assert.ok(answer.body.length >= MIN_ASSET_BYTES, `${url} is ${answer.body.length} bytes`)
      assert.equal(answer.headers.get('x-content-type-options'), 'nosniff', url)
      assert.ok(answer.headers.get('cache-control'), `${url} has no Cache-Control`)
    }
  })

  await t.test('no URL of the page or of its script points to another host', async () => {
    const script = await get(`${p.api}${pageScriptUrl}`)
    assert.ok(stringLiterals(script.body).includes('/graphql'), 'the page script names the /graphql endpoint')
    assert.deepEqual(page.body.match(OTHER_HOST) ?? [], [], 'URLs to another host in the page')
    assert.deepEqual(script.body.match(OTHER_HOST) ?? [], [], 'URLs to another host in the page script')
  })

  await t.test('package assets are cached for good, compressed once, and revalidated by ETag', async () => {
    const graphiql = assets.find((a) => /\/graphiql@[^/]+\/graphiql\.min\.js$/.test(a.url ?? ''))?.url
    assert.ok(graphiql, `no versioned graphiql.min.js among ${assets.map((a) => a.url).join(' ')}`)
    const plain = await get(`${p.api}${graphiql}`, { 'accept-encoding': 'identity' })
    assert.match(plain.headers.get('cache-control') ?? '', /\bimmutable\b/)
    assert.equal(plain.headers.get('content-encoding'), null)
    assert.ok(plain.body.length > 100_000, `graphiql.min.js is ${plain.body.length} bytes`)
    for (const encoding of ['br', 'gzip']) {
      const packed = await get(`${p.api}${graphiql}`, { 'accept-encoding': encoding })
      assert.equal(packed.headers.get('content-encoding'), encoding)
      assert.equal(packed.body, plain.body, `the ${encoding} body decodes to the file`)
    }
    const etag = plain.headers.get('etag')
    assert.ok(etag)
    assert.equal((await get(`${p.api}${graphiql}`, { 'if-none-match': etag })).status, 304)
    assert.equal((await get(`${p.api}${pageScriptUrl}`)).headers.get('cache-control'), 'no-cache')
  })

  await t.test("the page script's fetcher queries and subscribes with the token of the page's field", async () => {
    const script = (await get(`${p.api}${pageScriptUrl}`)).body
    const page = runPageScript(script, p)
    const token = await issueToken(p, p.apiKey)
    const chain = new APIClient({ url: p.chainApi })
    const action = {
      account: 'eosio.token',
      name: 'transfer',
      actor: 'alice',
      data: { from: 'alice', to: 'bob', quantity: '0.0001 EOS', memo: 'graphiql' },
    }
    const pushed = await pushActions(chain, [action])
    await waitIndexed(p.api, pushed.blockNum)

    // No token yet: the query is refused as a GraphQL error.
    const refused = (await page.fetcher()({ query: '{ block(num: 1) { id } }' })) as GraphqlAnswer
    assert.equal(refused.errors?.[0]?.extensions?.code, 'Unauthenticated', JSON.stringify(refused))

    page.typeToken(token)
    assert.equal(page.storage.get('antler.graphiql.token'), token, 'the token is kept in sessionStorage')
    const defaultQuery = page.lastProps().defaultQuery as string
    assert.match(defaultQuery, /searchTransactionsForward\(query: "receiver:eosio.token"/)
    const answer = (await page.fetcher()({ query: defaultQuery })) as GraphqlAnswer
    assert.equal(answer.errors, undefined, JSON.stringify(answer.errors))
    const results = answer.data?.searchTransactionsForward?.results ?? []
    assert.ok(results.length > 0, 'the default query finds transactions')
    const accounts = results.flatMap((r) => r.trace.matchingActions.map((a) => a.account))
    assert.ok(accounts.length > 0 && accounts.every((a) => a === 'eosio.token'), JSON.stringify(results))

    const live = `subscription { searchTransactionsForward(query: "receiver:eosio.token", lowBlockNum: ${pushed.blockNum},
      limit: 1) { trace { id } } }`
    const frames = await collect(page.fetcher()({ query: live }) as Observable)
    assert.equal(frames.length, 1, JSON.stringify(frames))
    assert.equal(frames[0].data?.searchTransactionsForward?.trace.id, pushed.id, JSON.stringify(frames))

    const broken = await collect(
      page.fetcher()({ query: 'subscription { searchTransactionsForward(query: ":") { cursor } }' }),
    )
    assert.ok(broken[0]?.errors?.length, `a refused search is an error result: ${JSON.stringify(broken)}`)
  })
})

interface GraphqlAnswer {
  data?: {
    searchTransactionsForward?: {
      results?: { trace: { id: string; matchingActions: { account: string }[] } }[]
      trace: { id: string }
    }
  }
  errors?: { message: string; extensions?: { code?: string } }[]
}
type Observable = {
  subscribe(sink: { next(v: unknown): void; error(e: unknown): void; complete(): void }): { unsubscribe(): void }
}
type Fetcher = (params: { query: string; operationName?: string }, options?: object) => unknown

/** The values a subscription sends until it completes (a failure rejects); at most 15 s. */
function collect(observable: Observable | unknown): Promise<GraphqlAnswer[]> {
  return new Promise((resolve, reject) => {
    const values: GraphqlAnswer[] = []
    const timer = setTimeout(() => (subscription.unsubscribe(), reject(new Error('no completion'))), 15_000)
    const subscription = (observable as Observable).subscribe({
      next: (value) => values.push(value as GraphqlAnswer),
      error: (error) => (clearTimeout(timer), reject(error)),
      complete: () => (clearTimeout(timer), resolve(values)),
    })
  })
}

/**
 * Runs the page script in a sandbox standing in for the browser: the DOM elements it reads, sessionStorage,
 * `location` on the platform, `fetch` and `WebSocket` (Node's own) and React, ReactDOM and GraphiQL stand-ins that
 * record the props GraphiQL is rendered with.
 */
function runPageScript(script: string, p: Platform) {
  const storage = new Map<string, string>()
  const rendered: Record<string, unknown>[] = []
  const listeners = new Map<string, () => void>()
  const input = { value: '', addEventListener: (event: string, listener: () => void) => listeners.set(event, listener) }
  const container = { textContent: '' }
  // GraphiQL's UMD build sets the global to the component, its helpers as properties (createFetcher, Logo…).
  const graphiql = Object.assign(() => null, { createFetcher: () => undefined })
  const sandbox: Record<string, unknown> = {
    document: { getElementById: (id: string) => ({ graphiql: container, 'antler-token': input })[id] },
    sessionStorage: {
      getItem: (key: string) => storage.get(key) ?? null,
      setItem: (key: string, value: string) => storage.set(key, value),
      removeItem: (key: string) => storage.delete(key),
    },
    location: { protocol: 'http:', host: new URL(p.api).host },
    fetch: (url: string, init: RequestInit) => fetch(new URL(url, p.api), init),
    WebSocket: globalThis.WebSocket,
    React: {
      createElement: (type: unknown, props: Record<string, unknown>) => {
        assert.equal(type, graphiql, 'GraphiQL is rendered as the UMD global, the component itself')
        return props
      },
    },
    ReactDOM: { createRoot: () => ({ render: (props: Record<string, unknown>) => rendered.push(props) }) },
    GraphiQL: graphiql,
  }
  sandbox.window = sandbox
  vm.runInNewContext(script, sandbox, { filename: 'graphiql-page.js' })
  assert.equal(container.textContent, '', 'the page script found its libraries')
  const lastProps = () => rendered[rendered.length - 1]
  return {
    storage,
    lastProps,
    fetcher: () => lastProps().fetcher as Fetcher,
    typeToken(token: string) {
      input.value = token
      listeners.get('change')?.()
    },
  }
}
