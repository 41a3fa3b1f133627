import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { HyperionBadRequestError, TraceApiBlocks } from '../../hyperion/index.ts'
import type { HyperionRouteOptions } from './index.ts'

const GetBlockBody = Type.Object({
  block_num: Type.Optional(Type.Integer({ minimum: -(2 ** 32), maximum: 2 ** 32 - 1 })),
  block_id: Type.Optional(Type.String({ minLength: 64, maxLength: 64, pattern: '^[0-9a-fA-F]{64}$' })),
})

/** POST /v1/trace_api/get_block (docs/HYPERION.md). */
export const traceApiRoutes: FastifyPluginAsyncTypebox<HyperionRouteOptions> = async (app, { hyperion }) => {
  const blocks = new TraceApiBlocks(hyperion.store)
  app.post(
    '/v1/trace_api/get_block',
    {
      schema: {
        summary: "A block's transactions and action traces as nodeos's trace_api_plugin (negative block_num: the head)",
        tags: ['hyperion'],
        body: GetBlockBody,
      },
    },
    async (request) => {
      if (request.body.block_num === undefined && request.body.block_id === undefined)
        throw HyperionBadRequestError('block_num or block_id is required')
      return blocks.answer(request.body)
    },
  )
}
