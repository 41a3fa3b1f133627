import Fastify, { type FastifyInstance, type FastifyError } from 'fastify'
import { createWharfkitDecoder } from '../antelope/index.ts'
import type { Chain } from './chain/chain.ts'
import { chainAbiOf } from './chain/boot.ts'
import type { PackedTransactionInput } from './chain/intake.ts'
import { ChainError, chainErrors, nodeosErrorBody } from './errors.ts'
import type { StoredBlock } from './storage/block-log.ts'
import type { TransactionTrace } from './chain/traces.ts'
import { accountRoutes } from './chain-api/account-routes.ts'
import { blockRoutes } from './chain-api/block-routes.ts'
import { controlRoutes } from './chain-api/control-routes.ts'
import { asBody, type ChainRouteContext } from './chain-api/request.ts'
import { tableRoutes } from './chain-api/table-routes.ts'
import { transactionRoutes } from './chain-api/transaction-routes.ts'

export const MAX_BODY_BYTES = 1024 * 1024

/** What the HTTP layer needs from the producer: transactions go through it (block-time 0 produces at once). */
export interface ChainApiDeps {
  readonly chain: Chain
  /** Told of unexpected failures (answered 500 with a fixed message). */
  readonly onError?: (error: unknown) => void
  /** Pushes a signed transaction and answers once it is in a block (or the pending block). */
  push(input: PackedTransactionInput): {
    trace: TransactionTrace
    block: StoredBlock | undefined
    blockNum: number
    blockSlot: number
  }
  produce(blocks: number): StoredBlock
  fork(depth: number, drop: readonly string[]): unknown
}

/**
 * The devchain's nodeos-compatible HTTP API: the `/v1/chain` endpoints (one module per group in
 * chain-api/), nodeos's error bodies, and the devchain's own `/v1/devchain` controls.
 */
export async function buildChainApi(deps: ChainApiDeps): Promise<FastifyInstance> {
  const { chain } = deps
  const app = Fastify({ bodyLimit: MAX_BODY_BYTES, logger: false })

  // nodeos takes any content type (wharfkit and curl often send none or text/plain): parse it all as JSON.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body)
    if (text.trim() === '') return done(null, undefined)
    try {
      done(null, JSON.parse(text))
    } catch (error) {
      done(chainErrors.parse(`unable to parse the request body as JSON: ${(error as Error).message}`), undefined)
    }
  })

  app.setErrorHandler((error: FastifyError | Error, _req, reply) => {
    let chainError: ChainError
    if (error instanceof ChainError) chainError = error
    else if ((error as FastifyError).code === 'FST_ERR_CTP_BODY_TOO_LARGE')
      chainError = chainErrors.payloadTooLarge(`the body is larger than ${MAX_BODY_BYTES} bytes`)
    else if ((error as FastifyError).statusCode && (error as FastifyError).statusCode! < 500)
      chainError = chainErrors.badRequest(error.message)
    else {
      deps.onError?.(error)
      chainError = new ChainError({
        chainCode: 0,
        chainName: 'exception',
        what: 'unspecified',
        message: 'internal error',
      })
    }
    reply.status(chainError.status).send(nodeosErrorBody(chainError))
  })
  app.setNotFoundHandler((req, reply) => {
    const e = chainErrors.notFound(`no endpoint ${req.url}`)
    reply.status(404).send(nodeosErrorBody(e))
  })

  const context: ChainRouteContext = {
    chain,
    route: (path, handler) => {
      app.route({ method: ['GET', 'POST'], url: path, handler: async (req) => handler(asBody(req.body)) })
    },
    abiOf: (account) => chainAbiOf(chain, account),
    decoder: createWharfkitDecoder(),
  }
  blockRoutes(context)
  accountRoutes(context)
  tableRoutes(context)
  transactionRoutes(context, (input) => deps.push(input))
  controlRoutes(app, deps)

  return app
}
