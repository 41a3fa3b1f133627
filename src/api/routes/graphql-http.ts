import type { FastifyReply, FastifyRequest } from 'fastify'
import { refusedKeyId } from '../../auth/index.ts'
import {
  answerDocuments,
  countRequest,
  GraphqlRequestError,
  usageOutcome,
  type GraphqlRuntime,
  type GraphqlWireError,
} from '../../graphql/index.ts'
import { rateHeaders, tokenForAdmission } from '../plugins/auth.ts'

/** The body of every GraphQL-over-HTTP answer (always HTTP 200, as dfuse answered). */
export interface GraphqlHttpAnswer {
  readonly data: unknown
  readonly errors?: readonly GraphqlWireError[]
}

const notOverHttp = (kind: string) => `a ${kind} runs over the WebSocket /graphql or gRPC, not over HTTP`

/**
 * One GraphQL request over HTTP (`POST` body or `GET` query string), on the runtime's execution layer: the token
 * admitted (each request counts against the key's limits, `X-RateLimit-*` headers), the request prepared (a query
 * only), executed; every error in the GraphQL wire shape with the response's `X-Trace-Id` as its trace id. Counted
 * once in the key's usage by its real outcome (the REST usage hook is told not to count it again).
 */
export async function answerGraphqlHttp(
  runtime: GraphqlRuntime,
  request: FastifyRequest,
  reply: FastifyReply,
  params: unknown,
): Promise<GraphqlHttpAnswer> {
  request.usageCounted = true
  const traceId = String(request.id)
  let keyId: string | undefined
  const refused = (errors: readonly GraphqlWireError[]): GraphqlHttpAnswer => {
    countRequest(runtime.usage, keyId, usageOutcome(errors), 0)
    return { data: null, errors }
  }
  try {
    const admitted = await runtime.admit(tokenForAdmission(request), {
      ip: request.ip,
      origin: request.headers.origin,
    })
    keyId = admitted.keyId
    if (admitted.rate) rateHeaders(reply, admitted.rate)
  } catch (error) {
    keyId = refusedKeyId(error)
    return refused([runtime.wireError(error, traceId)])
  }
  let operation
  try {
    operation = runtime.prepare(params, ['query'], notOverHttp)
  } catch (error) {
    if (!(error instanceof GraphqlRequestError)) throw error
    return refused(error.errors.map((e) => runtime.wireError(e, traceId)))
  }
  const result = await runtime.execute(operation, runtime.context({ traceId }))
  const errors = (result.errors ?? []).map((e) => runtime.wireError(e, traceId))
  countRequest(runtime.usage, keyId, usageOutcome(errors), answerDocuments(result))
  return { data: result.data ?? null, ...(errors.length ? { errors } : {}) }
}
