import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { HyperionRouteOptions } from './index.ts'

/** POST /v1/trace_api/get_block (docs/HYPERION.md). */
export const traceApiRoutes: FastifyPluginAsyncTypebox<HyperionRouteOptions> = async () => {}
