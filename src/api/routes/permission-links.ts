import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { readPermissionLinks } from '../../state/index.ts'
import type { SnapshotSource } from '../../store/index.ts'
import { errorResponses } from '../schemas.ts'
import { checkBlockNum, nameParam, P } from './state-params.ts'

/** `GET /v0/state/permission_links`: the links an account's permissions hold at any height (token needed). */
export const permissionLinksRoutes: FastifyPluginAsyncTypebox<{ store: SnapshotSource }> = async (app, opts) => {
  app.addHook('preValidation', async (request) => checkBlockNum(request.query))
  app.get(
    '/v0/state/permission_links',
    {
      schema: {
        summary: 'Permission links (linkauth) of an account at any height',
        querystring: Type.Object({ account: P.name, block_num: P.blockNum }),
        response: {
          200: Type.Object({
            up_to_block_id: Type.Optional(Type.String()),
            up_to_block_num: Type.Optional(Type.Integer()),
            last_irreversible_block_id: Type.String(),
            last_irreversible_block_num: Type.Integer(),
            linked_permissions: Type.Array(Type.Object({ contract: Type.String(), action: Type.String({ description: "'' links every action of the contract" }), permission_name: Type.String() })),
          }),
          ...errorResponses,
        },
      },
    },
    async (request) => readPermissionLinks(opts.store, { account: nameParam('account', request.query.account), blockNum: request.query.block_num }),
  )
}
