import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { HyperionRouteOptions } from './index.ts'

/** /v2/history/get_actions, get_transaction, check_transaction, get_creator, get_created_accounts (docs/HYPERION.md). */
export const historyActionRoutes: FastifyPluginAsyncTypebox<HyperionRouteOptions> = async () => {}
