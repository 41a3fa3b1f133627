import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { HyperionRouteOptions } from './index.ts'

/** /v2/state/* and POST /v1/history/get_key_accounts, get_controlled_accounts (docs/HYPERION.md). */
export const stateRoutes: FastifyPluginAsyncTypebox<HyperionRouteOptions> = async () => {}
