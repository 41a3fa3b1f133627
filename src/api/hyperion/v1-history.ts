import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { HyperionRouteOptions } from './index.ts'

/** POST /v1/history/get_actions, get_transaction (docs/HYPERION.md). */
export const v1HistoryRoutes: FastifyPluginAsyncTypebox<HyperionRouteOptions> = async () => {}
