import { defineError, type NoDetails } from '../error-definition.ts'

interface HistoryGap {
  needed: number
  available: number
  /** null for an empty store (`needed` is then its start block). */
  storeHead: number | null
  /** Where the gap was seen: the node's status at connect, or a block past the next one. */
  source: 'status' | 'results'
}

function historyGapMessage({ needed, available, storeHead, source }: HistoryGap): string {
  const seen = source === 'status' ? 'the node reports its retained history starting at' : 'the node skipped to'
  const olderNode = `a node whose state history still holds block ${needed}`
  return storeHead === null
    ? `ship: history gap: the store is empty and starts at block ${needed}, but ${seen} block ${available}. ` +
        `Start this fresh store at the node's history with --start-block ${available}, or connect --ship to ` +
        olderNode
    : `ship: history gap: the store's head is block ${storeHead} and needs block ${needed} next, but ${seen} block ` +
        `${available}. Connect --ship to ${olderNode} (a node with older history), or index into a fresh store ` +
        `with --start-block ${available}`
}

/**
 * The node serves another history than the store holds: another chain id, or a block at or below the store's LIB
 * (irreversible, so never undone) that differs from the node's.
 */
interface HistoryMismatch {
  /** `chain_id`: the node's chain id is not the one the store recorded; `block`: an irreversible block differs. */
  kind: 'chain_id' | 'block'
  /** The block that differs (`block`), or the store's head (`chain_id`; null for a store holding no block). */
  blockNum: number | null
  /** The store's block id at `blockNum` (`block`) or the store's chain id (`chain_id`). */
  storeId: string
  /** The node's block id at `blockNum` (`block`) or the node's chain id (`chain_id`). */
  nodeId: string
  /** The store's LIB (null for a store holding no block). */
  storeLib: number | null
}

function historyMismatchMessage({ kind, blockNum, storeId, nodeId, storeLib }: HistoryMismatch): string {
  const what =
    kind === 'chain_id'
      ? `the node's chain id is ${nodeId} but the store holds chain ${storeId}` +
        (blockNum === null ? '' : ` up to block ${blockNum}`)
      : `the node's block ${blockNum} is ${nodeId} but the store's block ${blockNum} is ${storeId}, at or below ` +
        `the store's LIB ${storeLib} (irreversible: it is never undone)`
  return (
    `ship: another history: ${what}. The store was filled from another chain (another devchain, a reset testnet, ` +
    `a wrong snapshot); no irreversible block was undone. Index into a fresh store (another --store database, or ` +
    `another --data-dir for sqlite), or connect --ship to a node of the store's chain`
  )
}

/** The codes of the store, the SHiP reader and the chain primitives: CLI and indexer only, no API client sees them. */
export const INGEST_ERRORS = {
  store_block_does_not_link_error: defineError<{ blockNum: number; previous: string; head: number; headId: string }>({
    status: 500,
    message: (d) => `store: block ${d.blockNum} (previous ${d.previous}) does not link to head ${d.head} (${d.headId})`,
  }),
  store_irreversible_undo_error: defineError<{ blockNum: number; lib: number }>({
    status: 500,
    message: (d) => `store: cannot undo block ${d.blockNum} at or below LIB ${d.lib}`,
  }),
  store_api_key_exists_error: defineError<{ id: string }>({
    status: 409,
    message: (d) => `store: an API key with id ${JSON.stringify(d.id)} or the same key string is already stored`,
  }),
  store_account_exists_error: defineError<{ id: string; login: string }>({
    status: 409,
    message: (d) =>
      `store: a portal account with id ${JSON.stringify(d.id)} or sign-in name ${JSON.stringify(d.login)} is already stored`,
  }),
  store_read_only_error: defineError<{ method: string }>({
    status: 500,
    message: (d) => `store: ${d.method}() refused: this store was opened read-only`,
  }),
  store_not_found_error: defineError<{ store: string; reason: string }>({
    status: 500,
    message: (d) => `store: ${d.store} ${d.reason}; run antler dev, serve or index first`,
  }),
  store_schema_version_error: defineError<{ store: string; found: string; expected: number; upgradable: boolean }>({
    status: 500,
    message: (d) =>
      `store: ${d.store} has schema version ${d.found}, this build reads ${d.expected}; ` +
      (d.upgradable
        ? 'open it once with antler dev, serve or index to upgrade it'
        : 'run the antler build that wrote it, or index into a new store'),
  }),
  ship_protocol_error: defineError<{ types?: string[] }, { reason: string; types?: readonly string[] }>({
    status: 502,
    message: (a) => `ship: ${a.reason}`,
    details: (a) => (a.types ? { types: [...a.types] } : {}),
  }),
  ship_history_gap_error: defineError<HistoryGap>({ status: 502, message: historyGapMessage }),
  ship_history_mismatch_error: defineError<HistoryMismatch>({ status: 502, message: historyMismatchMessage }),
  ship_unavailable_error: defineError<{ url: string; attempts: number }>({
    status: 503,
    retryable: true,
    message: (d) => `ship: ${d.url} unreachable after ${d.attempts} attempts`,
  }),
  ship_reader_closed_error: defineError<NoDetails>({ status: 500, message: () => 'ship: reader closed' }),
  binary_decode_error: defineError<{ offset: number }, { reason: string; offset: number }>({
    status: 400,
    message: (a) => `${a.reason} at byte ${a.offset}`,
    details: (a) => ({ offset: a.offset }),
  }),
  invalid_chain_value_error: defineError<{ kind: string; value: string; reason: string }>({
    status: 400,
    message: (d) => `invalid ${d.kind} ${JSON.stringify(d.value)}: ${d.reason}`,
  }),
} as const
