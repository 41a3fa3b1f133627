import type { FastifyReply, FastifyRequest } from 'fastify'
import { AntlerError } from '../../antelope/index.ts'
import { parsePushGuarantee, type PushService } from '../../push/index.ts'
import {
  BadRequestError,
  InvalidJsonError,
  InvalidPushGuaranteeError,
  MissingBodyError,
  ServiceUnavailableError,
} from '../errors.ts'
import { limitedBody } from './chain-passthrough.ts'

/** Why a guaranteed push waiting at shutdown is answered 503: the chain may still include what it was sent. */
const PUSH_CUT_REASON = 'shutting down before the guarantee was met; the transaction may still be included'

const PUSH_PATHS: ReadonlySet<string> = new Set(['/v1/chain/push_transaction', '/v1/chain/send_transaction'])

/** A push with an `X-Eos-Push-Guarantee` header (the only passthrough call that always needs a token). */
export function isGuaranteedPush(request: FastifyRequest): boolean {
  return (
    request.method === 'POST' &&
    PUSH_PATHS.has(request.url.split('?')[0]) &&
    request.headers['x-eos-push-guarantee'] !== undefined
  )
}

async function readJson(request: FastifyRequest, limit: number): Promise<unknown> {
  const chunks: Buffer[] = []
  for await (const chunk of limitedBody(request.raw, limit)) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString('utf8')
  if (text.trim() === '') throw MissingBodyError()
  try {
    return JSON.parse(text)
  } catch {
    throw InvalidJsonError({ reason: 'the body does not parse as JSON' })
  }
}

/**
 * The passthrough's interceptor for guaranteed pushes: answers `{transaction_id, block_id,
 * block_num, processed}` once the block that satisfies the guarantee is in the store; the chain's
 * own refusals keep nodeos's status and body, as on the plain passthrough.
 */
export function guaranteedPushInterceptor(push: PushService, bodyLimitBytes: number, stopping: AbortSignal) {
  return (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> | undefined => {
    if (!isGuaranteedPush(request)) return undefined
    return (async () => {
      const header = String(request.headers['x-eos-push-guarantee'])
      const guarantee = parsePushGuarantee(header)
      if (!guarantee) throw InvalidPushGuaranteeError({ value: header })
      const body = await readJson(request, bodyLimitBytes)
      // The client going away ends the wait (and its polling).
      const gone = new AbortController()
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) gone.abort()
      })
      try {
        if (stopping.aborted) throw ServiceUnavailableError({ reason: PUSH_CUT_REASON })
        return reply.send(await push.push({ body, guarantee, signal: AbortSignal.any([gone.signal, stopping]) }))
      } catch (error) {
        // The server stops (SIGTERM): the wait ends now, with the answer every request gets while it closes.
        if (stopping.aborted && !gone.signal.aborted) {
          reply.header('connection', 'close')
          throw ServiceUnavailableError({ reason: PUSH_CUT_REASON })
        }
        if (error instanceof AntlerError && error.code === 'push_chain_error') {
          const { status, body: chainBody } = error.details as { status: number; body: unknown }
          reply.failure = error
          // Sent as text: an object would go through the route's 4xx/5xx schema (the standard
          // error object), which a nodeos body does not fit, and come out as unexpected_error.
          const json = typeof chainBody !== 'string'
          return reply
            .code(status)
            .header('content-type', json ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8')
            .send(json ? JSON.stringify(chainBody) : chainBody)
        }
        // The client went away (nobody reads this answer): not a server fault, as in wire-error.ts.
        if (gone.signal.aborted) throw BadRequestError({ reason: 'the client closed the connection before the answer' })
        throw error
      }
    })()
  }
}
