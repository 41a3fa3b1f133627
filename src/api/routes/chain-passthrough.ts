import { Transform, Readable } from 'node:stream'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { Pool, type Dispatcher } from 'undici'
import { AntlerError } from '../../antelope/index.ts'
import {
  ChainTimeoutError,
  ChainUnavailableError,
  ClientClosedError,
  RequestTooLargeError,
  UnsupportedContentEncodingError,
} from '../errors.ts'
import { errorResponses } from '../schemas.ts'

/** What the passthrough needs to know. */
export interface ChainPassthroughOptions {
  /** The chain API (nodeos or the devchain), without a trailing slash; undefined: the passthrough answers 502. */
  readonly chainApi: string | undefined
  /** Time for the chain to answer (headers), ms. */
  readonly timeoutMs: number
  /** Largest body forwarded, bytes (a setcode transaction carries the whole wasm). */
  readonly bodyLimitBytes: number
  /** `--open-chain-api`: the passthrough without a token (a guaranteed push still needs one). */
  readonly open: boolean
  /** On an open passthrough, the requests that still need a token. */
  readonly tokenWhen?: (request: FastifyRequest) => boolean
  /** Answers a request the passthrough should not forward as is (a guaranteed push); undefined: forward. */
  readonly intercept?: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> | undefined
}

/** Request headers worth forwarding to nodeos; everything else (our JWT, cookies, hop-by-hop) stays here. */
const FORWARDED_REQUEST_HEADERS = ['content-type', 'accept', 'user-agent']

/** A request body stream that fails with `request_too_large_error` past `limit` bytes. */
export function limitedBody(source: NodeJS.ReadableStream, limit: number): Readable {
  let seen = 0
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length
      if (seen > limit) done(RequestTooLargeError({ limitBytes: limit }))
      else done(null, chunk)
    },
  })
  source.on('error', (error) => counter.destroy(error))
  return source.pipe(counter)
}

/**
 * Counts a request body's bytes as they are read. When the chain hangs up before reading it all
 * (nodeos closes the connection on a body over its own, smaller limit), `overLimit()` reads and
 * drops the rest, never buffering it, to tell whether the whole body was over our limit.
 */
function bodyMeter(source: Readable, limit: number): { overLimit(): Promise<boolean> } {
  let received = 0
  source.on('data', (chunk: Buffer) => (received += chunk.length))
  return {
    overLimit: () =>
      new Promise((resolve) => {
        const settle = () => {
          source.off('data', check).off('end', settle).off('close', settle).off('error', settle)
          source.pause()
          resolve(received > limit)
        }
        const check = () => {
          if (received > limit) settle()
        }
        if (received > limit || source.readableEnded || source.destroyed) return settle()
        // Off the stream the chain stopped reading, whose backpressure would pause the source for good.
        source.unpipe()
        source.on('data', check).once('end', settle).once('close', settle).once('error', settle)
        source.resume()
      }),
  }
}

/** The chain path of a request: the chain API's own path, then the request's path and query less our `token`. */
function upstreamPath(basePath: string, requestUrl: string): string {
  if (!requestUrl.includes('token')) return `${basePath}${requestUrl}`
  const url = new URL(requestUrl, 'http://x')
  url.searchParams.delete('token')
  return `${basePath}${url.pathname}${url.search}`
}

/** Undici's codes for a chain that took longer than the time-out to answer. */
const TIMEOUT_CODES: ReadonlySet<string> = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
])

/** The error a failed upstream call stands for: time-out, refused connection, or our own (body too large). */
function upstreamError(error: unknown, timeoutMs: number): AntlerError {
  if (error instanceof AntlerError) return error
  const e = error as { code?: string; message?: string; cause?: { code?: string; message?: string } }
  if (e.cause instanceof AntlerError) return e.cause
  if (e.code !== undefined && TIMEOUT_CODES.has(e.code)) return ChainTimeoutError({ timeoutMs })
  return ChainUnavailableError({ reason: e.cause?.code ?? e.code ?? e.cause?.message ?? e.message ?? String(error) })
}

/** Most connections kept open to the chain API; more concurrent calls wait for one. */
const CHAIN_CONNECTIONS = 64

/**
 * The chain API's connections, kept alive and reused: a fresh connection per call (fetch's default agent under
 * load) cost more than the call itself. `timeoutMs` bounds the wait for the answer's headers and each pause in its
 * body.
 */
function chainPool(chainApi: string, timeoutMs: number): { pool: Pool; basePath: string } {
  const url = new URL(chainApi)
  return {
    pool: new Pool(url.origin, { connections: CHAIN_CONNECTIONS, headersTimeout: timeoutMs, bodyTimeout: timeoutMs }),
    basePath: url.pathname.replace(/\/+$/, ''),
  }
}

/**
 * `/v1/chain/*`: forwarded to the chain API with nodeos's status and body kept, both bodies
 * streamed (never buffered whole), time-outs and unreachable chains answered with the standard
 * error object.
 */
export const chainPassthroughRoutes: FastifyPluginAsync<ChainPassthroughOptions> = async (app, opts) => {
  // Bodies are streamed through as they come: no parsing, whatever the Content-Type.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload))
  const chain = opts.chainApi === undefined ? undefined : chainPool(opts.chainApi, opts.timeoutMs)
  if (chain) app.addHook('onClose', () => chain.pool.close())
  app.route({
    method: ['GET', 'POST'],
    url: '/v1/chain/*',
    config: { public: opts.open, tokenWhen: opts.tokenWhen },
    bodyLimit: opts.bodyLimitBytes,
    // The body is read from the request as sent: @fastify/compress inflating it too would be a second reader.
    decompress: false,
    schema: {
      summary: 'Passthrough to the chain API (nodeos /v1/chain)',
      hide: false,
      response: { '2xx': {}, ...errorResponses },
    },
    async handler(request, reply) {
      const encoding = request.headers['content-encoding']
      if (request.method === 'POST' && encoding !== undefined && encoding !== 'identity')
        throw UnsupportedContentEncodingError({ contentEncoding: encoding })
      const intercepted = opts.intercept?.(request, reply)
      if (intercepted) return intercepted
      if (!chain) throw ChainUnavailableError({ reason: 'no chain API is configured (--chain-api)' })
      const declared = Number(request.headers['content-length'] ?? 0)
      if (declared > opts.bodyLimitBytes) throw RequestTooLargeError({ limitBytes: opts.bodyLimitBytes })
      const headers: Record<string, string> = {}
      for (const name of FORWARDED_REQUEST_HEADERS) {
        const value = request.headers[name]
        if (typeof value === 'string') headers[name] = value
      }
      const hasBody = request.method === 'POST' && (declared > 0 || request.headers['transfer-encoding'] !== undefined)
      const requestBody = hasBody ? limitedBody(request.raw, opts.bodyLimitBytes) : undefined
      const meter = hasBody ? bodyMeter(request.raw, opts.bodyLimitBytes) : undefined
      let response: Dispatcher.ResponseData
      try {
        response = await chain.pool.request({
          path: upstreamPath(chain.basePath, request.url),
          method: request.method as Dispatcher.HttpMethod,
          headers,
          body: requestBody,
        })
      } catch (error) {
        if (request.raw.readableAborted) throw ClientClosedError()
        const failure = upstreamError(error, opts.timeoutMs)
        if (failure.code !== 'request_too_large_error' && (await meter?.overLimit()))
          throw RequestTooLargeError({ limitBytes: opts.bodyLimitBytes })
        throw failure
      }
      reply.code(response.statusCode)
      const type = response.headers['content-type']
      if (type) reply.header('content-type', type)
      const { body } = response
      if (response.statusCode === 204 || response.statusCode === 304 || request.method === 'HEAD') {
        await body.dump()
        return reply.send('')
      }
      body.on('error', (error) => request.log.warn({ reason: error.message }, 'chain answer cut'))
      return reply.send(body)
    },
  })
}
