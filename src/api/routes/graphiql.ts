import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { brotliCompress, constants as zlib, gzip } from 'node:zlib'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'

/** Where GraphiQL's page, its assets and the GraphQL endpoint the page talks to are. */
export const GRAPHIQL_PATH = '/graphiql'
const ASSETS = `${GRAPHIQL_PATH}/assets`

/** Our own page script and stylesheet (src/api/graphiql/), served at `/graphiql/assets/page.{js,css}`. */
const PAGE_DIR = fileURLToPath(new URL('../graphiql/', import.meta.url))

const JS = 'text/javascript; charset=utf-8'
const CSS = 'text/css; charset=utf-8'
const HTML = 'text/html; charset=utf-8'

/** A package file's URL holds the package's version: a new version is a new URL, so it may be cached for good. */
const VERSIONED = 'public, max-age=31536000, immutable'
/** The page and our own assets change with Antler: the browser revalidates them (ETag) on every load. */
const REVALIDATED = 'no-cache'

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
const VENDOR_FILES: readonly { pkg: string; file: string; type: string }[] = [
  { pkg: 'react', file: 'umd/react.production.min.js', type: JS },
  { pkg: 'react-dom', file: 'umd/react-dom.production.min.js', type: JS },
  { pkg: 'graphiql', file: 'graphiql.min.js', type: JS },
  { pkg: 'graphiql', file: 'graphiql.min.css', type: CSS },
]

type Encoding = 'br' | 'gzip'

/** One file served from memory, with its ETag and its compressed forms (made on first demand, then kept). */
interface Asset {
  readonly url: string
  readonly type: string
  readonly cacheControl: string
  readonly body: Buffer
  readonly etag: string
  readonly encoded: Map<Encoding, Promise<Buffer>>
}

const brotli = promisify(brotliCompress)
const gzipped = promisify(gzip)

function asset(url: string, type: string, cacheControl: string, body: Buffer): Asset {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`
  return { url, type, cacheControl, body, etag, encoded: new Map() }
}

function encode(file: Asset, encoding: Encoding): Promise<Buffer> {
  let encoded = file.encoded.get(encoding)
  if (!encoded) {
    encoded =
      encoding === 'br'
        ? brotli(file.body, {
            params: { [zlib.BROTLI_PARAM_QUALITY]: 9, [zlib.BROTLI_PARAM_SIZE_HINT]: file.body.length },
          })
        : gzipped(file.body, { level: 9 })
    // A failure is not kept: the next request tries again.
    encoded.catch(() => file.encoded.delete(encoding))
    file.encoded.set(encoding, encoded)
  }
  return encoded
}

/** The compression the client accepts, Brotli first; undefined for none (or `identity` only). */
export function acceptedEncoding(header: string | undefined): Encoding | undefined {
  const weights = new Map<string, number>()
  for (const part of (header ?? '').toLowerCase().split(',')) {
    const [name, ...params] = part.split(';').map((p) => p.trim())
    if (!name) continue
    const q = params.find((p) => p.startsWith('q='))
    weights.set(name, q === undefined ? 1 : Number(q.slice(2)) || 0)
  }
  const accepts = (name: string) => (weights.get(name) ?? weights.get('*') ?? 0) > 0
  if (accepts('br')) return 'br'
  if (accepts('gzip')) return 'gzip'
  return undefined
}

/** Whether the request's If-None-Match names the ETag (a list, `*`, or weak forms). */
function notModified(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match']
  if (!header) return false
  return header.split(',').some((tag) => {
    const t = tag.trim()
    return t === '*' || t === etag || t === `W/${etag}`
  })
}

async function sendAsset(file: Asset, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  reply.header('Cache-Control', file.cacheControl).header('ETag', file.etag).header('Vary', 'Accept-Encoding')
  reply.header('X-Content-Type-Options', 'nosniff')
  if (notModified(request, file.etag)) return reply.code(304).send()
  reply.type(file.type)
  const encoding = file.body.length >= 1024 ? acceptedEncoding(request.headers['accept-encoding']) : undefined
  if (encoding) return reply.header('Content-Encoding', encoding).send(await encode(file, encoding))
  return reply.send(file.body)
}

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

/** The vendor files, read from the installed packages (each package's version in its URL). */
async function vendorAssets(): Promise<Asset[]> {
  const require = createRequire(import.meta.url)
  return Promise.all(
    VENDOR_FILES.map(async ({ pkg, file, type }) => {
      const manifest = require.resolve(`${pkg}/package.json`)
      const { version } = JSON.parse(await readFile(manifest, 'utf8')) as { version: string }
      const text = await readFile(join(dirname(manifest), file), 'utf8')
      // The source maps are not shipped: no comment sends the browser's developer tools after them.
      const body = Buffer.from(text.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'))
      return asset(`${ASSETS}/${pkg}@${version}/${basename(file)}`, type, VERSIONED, body)
    }),
  )
}

/**
 * GraphiQL at `/graphiql` (and `/graphiql/`), served entirely by Antler: the page, GraphiQL's and React's browser
 * builds from node_modules under `/graphiql/assets/<package>@<version>/`, and our page script
 * (`/graphiql/assets/page.js`), which queries `POST /graphql` and subscribes over the `/graphql` WebSocket with the
 * token typed in the page's header. Everything is read once, at startup. Public routes: the page holds no data.
 */
export const graphiqlRoutes: FastifyPluginAsync = async (app) => {
  const vendor = await vendorAssets()
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
