import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { HyperionRouteOptions } from './index.ts'

/** /v2/history/get_deltas, get_table_state, get_abi_snapshot, get_block, get_blocks, get_schedule (docs/HYPERION.md). */
export const historyTableRoutes: FastifyPluginAsyncTypebox<HyperionRouteOptions> = async () => {}
