import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { HyperionBadRequestError, V1GetActions, v1GetTransaction } from '../../hyperion/index.ts'
import type { HyperionRouteOptions } from './index.ts'

const INT32_MAX = 2_147_483_647

const GetActionsBody = Type.Object({
  account_name: Type.String({ minLength: 1, maxLength: 13, pattern: '^[.1-5a-z]{0,12}[.1-5a-j]?$' }),
  /** -1 (the default) is the end of the account's history; other negative positions are refused. */
  pos: Type.Optional(Type.Integer({ minimum: -1, maximum: INT32_MAX })),
  offset: Type.Optional(Type.Integer({ minimum: -INT32_MAX - 1, maximum: INT32_MAX })),
})

/**
 * Hyperion's extensions of v1 get_actions, refused: they change which list is numbered or its order (docs/HYPERION.md).
 * Its `hex_data` is accepted and changes nothing: every action carries `hex_data` here, as on nodeos.
 */
const HYPERION_EXTENSIONS = ['filter', 'sort', 'after', 'before', 'parent'] as const

const GetTransactionBody = Type.Object({
  id: Type.String({ minLength: 64, maxLength: 64, pattern: '^[0-9a-fA-F]{64}$' }),
  block_num_hint: Type.Optional(Type.Integer({ minimum: 0, maximum: 2 ** 32 - 1 })),
  traces: Type.Optional(Type.Boolean()),
})

/**
 * POST /v1/history/get_actions and get_transaction with nodeos's history_plugin semantics and shapes (what eosjs and
 * wharfkit's typed `v1.history` decode), not Hyperion's; without Hyperion's envelope, as nodeos (docs/HYPERION.md).
 */
export const v1HistoryRoutes: FastifyPluginAsyncTypebox<HyperionRouteOptions> = async (app, { hyperion }) => {
  const getActions = new V1GetActions(hyperion.store)

  app.post(
    '/v1/history/get_actions',
    {
      config: { envelope: false },
      schema: {
        summary: "An account's action traces, numbered and paged by pos/offset as nodeos's history_plugin",
        tags: ['hyperion'],
        body: GetActionsBody,
      },
    },
    async (request) => {
      const body = request.body as Record<string, unknown>
      const extension = HYPERION_EXTENSIONS.find((key) => body[key] !== undefined)
      if (extension)
        throw HyperionBadRequestError(
          `${extension} is not supported by /v1/history/get_actions (nodeos's paging); use /v2/history/get_actions`,
        )
      return getActions.answer(request.body)
    },
  )

  app.post(
    '/v1/history/get_transaction',
    {
      config: { envelope: false },
      schema: {
        summary: "A transaction with its receipt, signed transaction and action traces, as nodeos's history_plugin",
        tags: ['hyperion'],
        body: GetTransactionBody,
      },
    },
    async (request, reply) => {
      const answer = await v1GetTransaction(
        { lifecycle: hyperion.lifecycle, lib: async () => (await hyperion.store.position())?.lib ?? 0 },
        request.body,
      )
      if ('notFound' in answer) return reply.code(404).send(answer.notFound)
      return answer.found
    },
  )
}
