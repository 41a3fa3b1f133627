import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { HyperionRouteOptions } from './index.ts'

/** /v2/health, /v2/explorer_metadata, /v2/get_filters (docs/HYPERION.md). */
export const miscRoutes: FastifyPluginAsyncTypebox<HyperionRouteOptions> = async () => {}
