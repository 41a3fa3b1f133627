import { STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import { newTraceId, type AntlerError } from '../antelope/index.ts'
import { BadRequestError, RequestHeaderTooLargeError, WsUpgradeFailedError } from './errors.ts'
import { wireError } from './wire-error.ts'

/** Answers the standard error object on a raw socket (no Fastify reply exists) and closes it. */
function answerOnSocket(socket: Duplex, error: AntlerError, headers: Record<string, string> = {}): void {
  if (!socket.writable) return void socket.destroy()
  const traceId = newTraceId()
  const body = JSON.stringify(wireError(error, traceId))
  const lines = Object.entries({
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    'X-Trace-Id': traceId,
    Connection: 'close',
    ...headers,
  }).map(([name, value]) => `${name}: ${value}\r\n`)
  socket.once('finish', () => socket.destroy())
  socket.end(`HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}\r\n${lines.join('')}\r\n${body}`)
}

/**
 * An HTTP request too malformed to reach Fastify (bad request line, oversized headers): answered
 * with the standard error object on the raw socket, as Node's HTTP parser leaves no request object.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Duplex): void {
  answerOnSocket(
    socket,
    error.code === 'HPE_HEADER_OVERFLOW'
      ? RequestHeaderTooLargeError()
      : BadRequestError({ reason: error.code ?? 'parse_error' }),
  )
}

/**
 * A WebSocket handshake `ws` refuses after the route admitted it (bad Sec-WebSocket-Key or
 * -Version, an Upgrade other than websocket, a malformed subprotocol list): dfuse's
 * `ws_upgrade_failed_error` in the standard error object instead of ws's text/html answer (ws's
 * `wsClientError` event hands the socket over).
 */
export function wsClientErrorHandler(error: Error, socket: Duplex): void {
  answerOnSocket(socket, WsUpgradeFailedError({ reason: error.message }), { 'Sec-WebSocket-Version': '13, 8' })
}
