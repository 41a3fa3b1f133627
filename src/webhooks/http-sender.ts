import { performance } from 'node:perf_hooks'
import { rootCertificates } from 'node:tls'
import { Agent, type Dispatcher } from 'undici'
import type { ResolvedAddress } from './target-check.ts'

/** Why an attempt failed. `dns` and `blocked_ip` are the target check's refusals, recorded as attempts too. */
export type DeliveryError =
  'timeout' | 'refused' | 'reset' | 'dns' | 'blocked_ip' | 'tls' | 'http_status' | 'redirect' | 'network'

/** What one attempt came to. */
export interface DeliveryOutcome {
  /** The receiver answered 2xx. */
  readonly ok: boolean
  /** The response's status; null when none arrived. */
  readonly status: number | null
  readonly durationMs: number
  /** Null when ok. A 3xx is `redirect` (never followed), another non-2xx `http_status`. */
  readonly error: DeliveryError | null
  /** The response body, at most `MAX_RESPONSE_BODY_CHARS` characters; null when no response arrived. */
  readonly responseBody: string | null
  /** The response's `Retry-After` (seconds or an HTTP date), in ms from now. */
  readonly retryAfterMs?: number
  /** The transport error's message, for the attempt log (no response, or a body cut short). */
  readonly errorMessage?: string
}

/** One attempt to deliver one message. */
export interface DeliveryRequest {
  /** The target, already checked (`checkTargetUrl`). */
  readonly url: URL
  /** The address `resolveTarget` checked: the connection goes there and nowhere else. */
  readonly target: ResolvedAddress
  /** The message's own headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`, …). */
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** Bound on the whole attempt: connect, request, response and body. */
  readonly timeoutMs: number
  /** Ends the attempt early (shutdown): the outcome is `network`. */
  readonly signal?: AbortSignal
}

export interface HttpSenderOptions {
  /** Connections kept per target address and port. Default 4. */
  readonly maxConnectionsPerOrigin?: number
  /** Extra trusted CA certificates (PEM), added to the system's; for private CAs and tests. */
  readonly ca?: string | readonly string[]
}

export interface HttpSender {
  send(request: DeliveryRequest): Promise<DeliveryOutcome>
  /** Closes the kept-alive connections; waits for attempts in flight. */
  close(): Promise<void>
}

/** Response bodies are kept up to this many characters; the rest is not read. */
export const MAX_RESPONSE_BODY_CHARS = 20_000

const USER_AGENT = 'Antler-Webhooks/1'

/**
 * The HTTP side of deliveries: one undici Agent (keep-alive, bounded connections per origin) for the process. Each
 * attempt goes to the origin of the checked address (`https://203.0.113.7:443`) with `Host` set to the URL's host;
 * undici takes the TLS server name from `Host`, so HTTPS still verifies the certificate for the URL's hostname. No
 * DNS lookup happens here. Redirects are never followed.
 */
export function createHttpSender(options: HttpSenderOptions = {}): HttpSender {
  // `ca` replaces Node's bundled roots, so they are passed along.
  const ca = options.ca === undefined ? undefined : [...rootCertificates, ...[options.ca].flat()]
  const agent = new Agent({
    connections: options.maxConnectionsPerOrigin ?? 4,
    pipelining: 1,
    allowH2: false,
    keepAliveTimeout: 4_000,
    keepAliveMaxTimeout: 60_000,
    connect: ca === undefined ? {} : { ca },
  })
  return {
    send: (request) => sendDelivery(agent, request),
    close: () => agent.close(),
  }
}

/** The origin of the checked address, with the URL's scheme and port. */
function addressOrigin(url: URL, target: ResolvedAddress): string {
  const host = target.family === 6 ? `[${target.address}]` : target.address
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port)
  return `${url.protocol}//${host}:${port}`
}

function requestHeaders(request: DeliveryRequest): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': USER_AGENT }
  for (const [name, value] of Object.entries(request.headers)) {
    // The connection's own headers are ours to set.
    if (!['host', 'content-length', 'transfer-encoding', 'connection'].includes(name.toLowerCase())) {
      headers[name] = value
    }
  }
  headers.host = request.url.host
  return headers
}

/** Sends one delivery through `dispatcher`; never throws (a failure is an outcome). */
export async function sendDelivery(dispatcher: Dispatcher, request: DeliveryRequest): Promise<DeliveryOutcome> {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  const deadline = AbortSignal.timeout(request.timeoutMs)
  const signal = request.signal === undefined ? deadline : AbortSignal.any([deadline, request.signal])
  let status: number | null = null
  try {
    const response = await dispatcher.request({
      origin: addressOrigin(request.url, request.target),
      path: `${request.url.pathname}${request.url.search}`,
      method: 'POST',
      headers: requestHeaders(request),
      body: request.body,
      signal,
      headersTimeout: request.timeoutMs,
      bodyTimeout: request.timeoutMs,
    })
    status = response.statusCode
    const retryAfterMs = parseRetryAfter(response.headers['retry-after'])
    const responseBody = await readCapped(response.body, MAX_RESPONSE_BODY_CHARS)
    const error: DeliveryError | null =
      status >= 200 && status < 300 ? null : status >= 300 && status < 400 ? 'redirect' : 'http_status'
    return {
      ok: error === null,
      status,
      durationMs: elapsed(),
      error,
      responseBody,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    }
  } catch (error) {
    const kind = deadline.aborted ? 'timeout' : request.signal?.aborted ? 'network' : classifyError(error)
    const message = error instanceof Error ? error.message : String(error)
    return { ok: false, status, durationMs: elapsed(), error: kind, responseBody: null, errorMessage: message }
  }
}

/** Reads at most `limit` characters of a body, then drops the connection rather than read the rest. */
async function readCapped(body: Dispatcher.ResponseData['body'], limit: number): Promise<string> {
  const decoder = new TextDecoder('utf-8')
  let text = ''
  for await (const chunk of body as AsyncIterable<Buffer>) {
    text += decoder.decode(chunk, { stream: true })
    if (text.length >= limit) {
      body.destroy()
      return cutAt(text, limit)
    }
  }
  return cutAt(text + decoder.decode(), limit)
}

/** The first `limit` UTF-16 units, without a lone high surrogate at the end. */
function cutAt(text: string, limit: number): string {
  if (text.length <= limit) return text
  const cut = text.slice(0, limit)
  const last = cut.charCodeAt(cut.length - 1)
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut
}

/** `Retry-After` as ms from now: delta-seconds or an HTTP date (a past date is 0); undefined when absent or bad. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim()
  if (text === undefined || text === '') return undefined
  if (/^\d+$/.test(text)) return Number(text) * 1000
  // HTTP dates (IMF-fixdate, RFC 850, asctime) start with a day name; Date.parse alone would take `1.5` as a date.
  if (!/^[A-Za-z]{3}/.test(text)) return undefined
  // HTTP dates are GMT; asctime's form does not say so, and Date.parse would read it as local time.
  const at = Date.parse(/GMT$/i.test(text) ? text : `${text} GMT`)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/** Every `code` along an error's causes (and an AggregateError's errors). */
function errorCodes(error: unknown, depth = 0): string[] {
  if (typeof error !== 'object' || error === null || depth > 5) return []
  const own = 'code' in error && typeof error.code === 'string' ? [error.code] : []
  const inner = error instanceof AggregateError ? error.errors : []
  const cause = 'cause' in error ? [error.cause] : []
  return [...own, ...[...inner, ...cause].flatMap((next) => errorCodes(next, depth + 1))]
}

const TLS_CODE = /^ERR_(TLS|SSL)_|CERT|SIGNED|UNABLE_TO_/

/** A transport failure's kind, from Node's and undici's error codes. */
export function classifyError(error: unknown): DeliveryError {
  const codes = errorCodes(error)
  const has = (...wanted: string[]) => codes.some((code) => wanted.includes(code))
  if (has('ECONNREFUSED')) return 'refused'
  if (has('UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT')) return 'timeout'
  if (codes.some((code) => TLS_CODE.test(code))) return 'tls'
  if (has('ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'ECONNABORTED')) return 'reset'
  if (has('ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL')) return 'dns'
  return 'network'
}
