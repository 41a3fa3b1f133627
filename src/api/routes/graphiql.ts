import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyPluginAsync } from 'fastify'
import { asset, CSS, HTML, JS, packageAssets, REVALIDATED, sendAsset, type PackageFile } from '../static-assets.ts'

/** Where GraphiQL's page, its assets and the GraphQL endpoint the page talks to are. */
export const GRAPHIQL_PATH = '/graphiql'
const ASSETS = `${GRAPHIQL_PATH}/assets`

/** Our own page script and stylesheet (src/api/graphiql/), served at `/graphiql/assets/page.{js,css}`. */
const PAGE_DIR = fileURLToPath(new URL('../graphiql/', import.meta.url))

/**
 * The page's policy: only this origin's scripts (no inline script), styles from this origin plus the inline ones
 * React and CodeMirror set, GraphQL over HTTP and WebSocket to this origin, GraphiQL's fonts and icons as data: URIs.
 */
export const GRAPHIQL_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "font-src 'self' data:",
  "connect-src 'self' ws: wss:",
  "img-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ')

/**
 * The browser builds GraphiQL needs, from the npm packages Antler depends on (no CDN: Antler runs offline):
 * GraphiQL 4's UMD bundle (every dependency inside but React) and React 18's UMD builds, which it finds as the
 * `React` and `ReactDOM` globals. In the order the page loads them.
 */
const VENDOR_FILES: readonly PackageFile[] = [
  { pkg: 'react', file: 'umd/react.production.min.js', type: JS },
  { pkg: 'react-dom', file: 'umd/react-dom.production.min.js', type: JS },
  { pkg: 'graphiql', file: 'graphiql.min.js', type: JS },
  { pkg: 'graphiql', file: 'graphiql.min.css', type: CSS },
]

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** The page: a header with the token field, GraphiQL's mount point, and every asset from this server. */
function pageHtml(scripts: readonly string[], styles: readonly string[]): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    '<title>Antler GraphiQL</title>',
    ...styles.map((href) => `<link rel="stylesheet" href="${escapeHtml(href)}">`),
    ...scripts.map((src) => `<script defer src="${escapeHtml(src)}"></script>`),
    '</head>',
    '<body>',
    '<header class="antler-bar">',
    '<strong class="antler-title">Antler GraphiQL</strong>',
    '<label class="antler-token">',
    '<span>Token</span>',
    '<input id="antler-token" type="password" autocomplete="off" spellcheck="false"',
    ' placeholder="a token from POST /v1/auth/issue (none when Antler runs with --no-auth)">',
    '</label>',
    '</header>',
    '<main id="graphiql" class="antler-graphiql"><p class="antler-loading">Loading GraphiQL…</p></main>',
    '<noscript>GraphiQL needs JavaScript.</noscript>',
    '</body>',
    '</html>',
    '',
  ].join('\n')
}

/**
 * GraphiQL at `/graphiql` (and `/graphiql/`), served entirely by Antler: the page, GraphiQL's and React's browser
 * builds from node_modules under `/graphiql/assets/<package>@<version>/`, and our page script
 * (`/graphiql/assets/page.js`), which queries `POST /graphql` and subscribes over the `/graphql` WebSocket with the
 * token typed in the page's header. Everything is read once, at startup. Public routes: the page holds no data.
 */
export const graphiqlRoutes: FastifyPluginAsync = async (app) => {
  const vendor = await packageAssets(ASSETS, VENDOR_FILES)
  const own = [
    asset(`${ASSETS}/page.js`, JS, REVALIDATED, await readFile(join(PAGE_DIR, 'graphiql-page.js'))),
    asset(`${ASSETS}/page.css`, CSS, REVALIDATED, await readFile(join(PAGE_DIR, 'graphiql-page.css'))),
  ]
  const files = [...vendor, ...own]
  const scripts = files.filter((f) => f.type === JS).map((f) => f.url)
  const styles = files.filter((f) => f.type === CSS).map((f) => f.url)
  const page = asset(GRAPHIQL_PATH, HTML, REVALIDATED, Buffer.from(pageHtml(scripts, styles)))

  // Compressed here, once per file (@fastify/compress would compress the megabyte of GraphiQL on every request).
  const options = { config: { public: true }, schema: { summary: 'GraphiQL', hide: true }, compress: false as const }
  app.get(GRAPHIQL_PATH, options, async (request, reply) => {
    reply.header('Content-Security-Policy', GRAPHIQL_CSP).header('Referrer-Policy', 'no-referrer')
    return sendAsset(page, request, reply)
  })
  for (const file of files) app.get(file.url, options, (request, reply) => sendAsset(file, request, reply))
}
