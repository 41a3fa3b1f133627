import type { Socket } from 'node:net'
import { BadRequestError, RequestHeaderTooLargeError } from './errors.ts'
import { newTraceId } from './plugins/errors.ts'
import { wireError } from './wire-error.ts'

/**
 * An HTTP request too malformed to reach Fastify (bad request line, oversized headers): answered
 * with the standard error object on the raw socket, as Node's HTTP parser leaves no request object.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) return void socket.destroy()
  const antlerError = error.code === 'HPE_HEADER_OVERFLOW' ? RequestHeaderTooLargeError() : BadRequestError({ reason: error.code ?? 'parse_error' })
  const traceId = newTraceId()
  const body = JSON.stringify(wireError(antlerError, traceId))
  const reason = antlerError.status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'
  socket.end(`HTTP/1.1 ${antlerError.status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Trace-Id: ${traceId}\r\nConnection: close\r\n\r\n${body}`)
}
