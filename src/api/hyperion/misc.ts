import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { HYPERION_API_VERSION, HYPERION_LIMITS, healthEntries, hyperionChainName } from '../../hyperion/index.ts'
import type { HyperionRouteOptions } from './index.ts'
import { withEnvelope } from './envelope.ts'

/**
 * What Antler indexes, in Hyperion's `features` names: every action and every table delta of every contract (no
 * whitelist), streams of both, and no full-text memo index or resource statistics.
 */
const FEATURES = {
  streaming: { enable: true, traces: true, deltas: true },
  tables: { proposals: true, accounts: true, voters: true },
  index_deltas: true,
  index_transfer_memo: false,
  index_all_deltas: true,
  deferred_trx: true,
  failed_trx: false,
  resource_limits: false,
  resource_usage: false,
}

/** `/v2/health`, `/v2/explorer_metadata`, `/v2/get_filters` (docs/HYPERION.md). */
export const miscRoutes: FastifyPluginAsyncTypebox<HyperionRouteOptions> = async (app, { hyperion }) => {
  app.get(
    '/v2/health',
    {
      schema: {
        summary: "Hyperion's health: the chain node, the store and the state-history feed, the features and limits",
        tags: ['hyperion'],
      },
    },
    async (request) => ({
      version: HYPERION_API_VERSION,
      version_hash: '',
      server: 'antler',
      host: request.hostname,
      health: await healthEntries(hyperion),
      features: FEATURES,
      limits: HYPERION_LIMITS,
      pruning: { auto_pruning_enabled: false, max_retained_blocks: 0 },
    }),
  )

  app.get(
    '/v2/explorer_metadata',
    {
      schema: {
        summary: "What Hyperion's explorer boots from: the provider, the chain id, the last indexed block",
        tags: ['hyperion'],
        response: {
          200: withEnvelope(
            {
              provider: Type.String(),
              provider_url: Type.String(),
              chain_name: Type.String(),
              chain_id: Type.String(),
              custom_core_token: Type.String(),
              theme: Type.String(),
              oracle: Type.Null(),
              oracle_price_historgram: Type.Null(),
            },
            { additionalProperties: false },
          ),
        },
      },
    },
    async () => {
      const chainId = (await hyperion.store.chainId()) ?? ''
      return {
        provider: 'Antler',
        provider_url: '',
        chain_name: hyperionChainName(chainId),
        chain_id: chainId,
        custom_core_token: '',
        theme: '',
        oracle: null,
        // Hyperion's spelling.
        oracle_price_historgram: null,
      }
    },
  )

  app.get(
    '/v2/get_filters',
    {
      schema: {
        summary: 'Which actions and deltas are indexed: all of them (Antler has no whitelist or blacklist)',
        tags: ['hyperion'],
      },
    },
    async () => ({
      isWhitelisted: false,
      excludes: { actions: [], deltas: [] },
      includes: { actions: [], deltas: [] },
    }),
  )
}
