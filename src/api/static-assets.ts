import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { basename, dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { brotliCompress, constants as zlib, gzip } from 'node:zlib'
import type { FastifyReply, FastifyRequest } from 'fastify'

// Files a page needs (our own scripts and stylesheets, browser builds from npm packages), read once at startup and
// served from memory with an ETag and Brotli/gzip made once per file: GraphiQL and the portal (no CDN, no build step).

export const JS = 'text/javascript; charset=utf-8'
export const CSS = 'text/css; charset=utf-8'
export const HTML = 'text/html; charset=utf-8'

/** A package file's URL holds the package's version: a new version is a new URL, so it may be cached for good. */
export const VERSIONED = 'public, max-age=31536000, immutable'
/** Pages and our own assets change with Antler: the browser revalidates them (ETag) on every load. */
export const REVALIDATED = 'no-cache'

/** A file of an npm package that a page loads. */
export interface PackageFile {
  readonly pkg: string
  readonly file: string
  readonly type: string
}

type Encoding = 'br' | 'gzip'

/** One file served from memory, with its ETag and its compressed forms (made on first demand, then kept). */
export interface Asset {
  readonly url: string
  readonly type: string
  readonly cacheControl: string
  readonly body: Buffer
  readonly etag: string
  readonly encoded: Map<Encoding, Promise<Buffer>>
}

const brotli = promisify(brotliCompress)
const gzipped = promisify(gzip)

export function asset(url: string, type: string, cacheControl: string, body: Buffer): Asset {
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

export async function sendAsset(file: Asset, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  reply.header('Cache-Control', file.cacheControl).header('ETag', file.etag).header('Vary', 'Accept-Encoding')
  reply.header('X-Content-Type-Options', 'nosniff')
  if (notModified(request, file.etag)) return reply.code(304).send()
  reply.type(file.type)
  const encoding = file.body.length >= 1024 ? acceptedEncoding(request.headers['accept-encoding']) : undefined
  if (encoding) return reply.header('Content-Encoding', encoding).send(await encode(file, encoding))
  return reply.send(file.body)
}

/** Package files, read from the installed packages, served under `base/<package>@<version>/<file name>`. */
export async function packageAssets(base: string, files: readonly PackageFile[]): Promise<Asset[]> {
  const require = createRequire(import.meta.url)
  return Promise.all(
    files.map(async ({ pkg, file, type }) => {
      const manifest = require.resolve(`${pkg}/package.json`)
      const { version } = JSON.parse(await readFile(manifest, 'utf8')) as { version: string }
      const text = await readFile(join(dirname(manifest), file), 'utf8')
      // The source maps are not shipped: no comment sends the browser's developer tools after them.
      const body = Buffer.from(text.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'))
      return asset(`${base}/${pkg}@${version}/${basename(file)}`, type, VERSIONED, body)
    }),
  )
}
