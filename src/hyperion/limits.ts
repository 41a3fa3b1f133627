/**
 * The largest page each Hyperion route serves (Hyperion's reference configuration and its code's fallbacks), shown
 * by `/v2/health` under `limits`; a larger `limit` is refused with a 400 or capped as Hyperion does, route by route
 * (docs/HYPERION.md).
 */
export const HYPERION_LIMITS = {
  get_actions: 1000,
  get_voters: 100,
  get_links: 1000,
  get_deltas: 1000,
  get_trx_actions: 200,
  get_tokens: 100,
  get_key_accounts: 1000,
  get_blocks: 1000,
  get_proposals: 100,
  get_created_accounts: 1000,
} as const

/**
 * The chain's short name where Hyperion has one (`/v2/explorer_metadata`'s `chain_name`, the stream's `handshake`
 * `chain`): Antler is told no name, so the chain id's first 8 digits.
 */
export const hyperionChainName = (chainId: string): string => chainId.slice(0, 8)

/** The version of Hyperion's API Antler answers like (`/v2/health`'s `version`; docs/HYPERION.md). */
export const HYPERION_API_VERSION = '4.0.7'
