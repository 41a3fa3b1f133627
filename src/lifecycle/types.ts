/**
 * The transaction lifecycle as the wire carries it (docs/API.md, `GET /v0/transactions/:id`):
 * snake_case, the shape `@dfuse/client`'s `TransactionLifecycle` type reads.
 */

import type { ActionRecord, BlockRecord, StorePosition } from '../store/index.ts'

/** dfuse's documented statuses plus `forked_out` (the transaction's only block was forked out). */
export type TransactionStatus =
  'pending' | 'delayed' | 'canceled' | 'expired' | 'executed' | 'soft_fail' | 'hard_fail' | 'forked_out'

export interface WirePermissionLevel {
  readonly actor: string
  readonly permission: string
}

export interface WireAction {
  readonly account: string
  readonly name: string
  readonly authorization: readonly WirePermissionLevel[]
  /** Decoded with the ABI in force at the block; absent when there is none or decoding failed. */
  readonly data?: unknown
  readonly hex_data: string
}

export interface WireSignedTransaction {
  readonly expiration: string
  readonly ref_block_num: number
  readonly ref_block_prefix: number
  readonly max_net_usage_words: number
  readonly max_cpu_usage_ms: number
  readonly delay_sec: number
  readonly context_free_actions: readonly WireAction[]
  readonly actions: readonly WireAction[]
  readonly transaction_extensions: readonly unknown[]
  readonly signatures: readonly string[]
  readonly context_free_data: readonly string[]
}

export interface WireActionTrace {
  readonly receipt: {
    readonly receiver: string
    readonly act_digest: string
    readonly global_sequence: string
    readonly recv_sequence: string
    readonly auth_sequence: readonly (readonly [string, string])[]
    readonly code_sequence: number
    readonly abi_sequence: number
  } | null
  readonly receiver: string
  readonly act: WireAction
  readonly context_free: boolean
  readonly elapsed: number
  readonly console: string
  readonly trx_id: string
  readonly block_num: number
  readonly block_time: string
  readonly producer_block_id: string
  readonly account_ram_deltas: readonly { readonly account: string; readonly delta: string }[]
  readonly except: unknown
  readonly action_ordinal: number
  readonly creator_action_ordinal: number
  readonly return_value: string
  readonly inline_traces: readonly WireActionTrace[]
}

export interface WireTransactionTrace {
  readonly id: string
  readonly block_num: number
  readonly block_time: string
  readonly producer_block_id: string
  readonly receipt: { readonly status: string; readonly cpu_usage_us: number; readonly net_usage_words: number }
  readonly elapsed: number
  readonly net_usage: number
  readonly scheduled: boolean
  readonly action_traces: readonly WireActionTrace[]
  readonly failed_dtrx_trace: unknown
  readonly except: unknown
}

export interface WireBlockHeader {
  readonly timestamp: string
  readonly producer: string
  readonly confirmed: number
  readonly previous: string
  readonly transaction_mroot: string
  readonly action_mroot: string
  readonly schedule_version: number
  readonly new_producers: unknown
  readonly header_extensions: readonly unknown[]
}

export interface WireDTrxOp {
  readonly op: string
  readonly action_idx: number
  readonly sender: string
  readonly sender_id: string
  readonly payer: string
  readonly published_at: string
  readonly delay_until: string
  readonly expiration_at: string
  readonly trx_id: string
  readonly trx?: unknown
}

export interface WireExtDTrxOp extends WireDTrxOp {
  readonly src_trx_id: string
  readonly block_num: number
  readonly block_id: string
  readonly block_time: string
}

export interface WireDbOp {
  readonly op: 'INS' | 'UPD' | 'REM'
  readonly action_idx: number
  readonly account: string
  readonly table: string
  readonly scope: string
  readonly key: string
  readonly old: { readonly payer?: string; readonly hex?: string }
  readonly new: { readonly payer?: string; readonly hex?: string }
}

export interface WireRamOp {
  readonly op: string
  readonly family: string
  readonly action: string
  readonly action_idx: number
  readonly payer: string
  readonly delta: number
  readonly usage: number
}

export interface TransactionLifecycle {
  readonly transaction_status: TransactionStatus
  readonly id: string
  readonly transaction: WireSignedTransaction | null
  readonly execution_trace: WireTransactionTrace | null
  readonly execution_block_header: WireBlockHeader | null
  readonly creation_tree: readonly (readonly [number, number, number])[]
  readonly dtrxops: readonly WireDTrxOp[]
  readonly dbops: readonly WireDbOp[]
  readonly ramops: readonly WireRamOp[]
  readonly tableops: readonly unknown[]
  readonly pub_keys: readonly string[]
  readonly created_by: WireExtDTrxOp | null
  readonly canceled_by: WireExtDTrxOp | null
  readonly execution_irreversible: boolean
  readonly creation_irreversible: boolean
  readonly cancelation_irreversible: boolean
  readonly dtrx_creation_irreversible: boolean
  readonly dtrx_cancelation_irreversible: boolean
}

/** Reads a caller of `lifecycles` made already (a search page): used instead of reading them again. */
export interface KnownReads {
  /** `actionsOfTransaction` of some of the ids. */
  readonly actions?: ReadonlyMap<string, readonly ActionRecord[]>
  /** Stored blocks by number (or their read, still running: it is awaited with the histories). */
  readonly blocks?: ReadonlyMap<number, BlockRecord> | Promise<ReadonlyMap<number, BlockRecord>>
  /** The store's position, read by the caller for the same answer (its LIB sets the irreversibility flags). */
  readonly position?: StorePosition
}

/** Lifecycles from the store, each read in one snapshot. */
export interface LifecycleService {
  /** The lifecycle of one transaction id (64 lowercase hex); undefined when the store never saw it. */
  lifecycle(id: string): Promise<TransactionLifecycle | undefined>
  /**
   * Lifecycles of many ids at once (search results), in a fixed number of batch reads; unknown ids are absent from the
   * map.
   */
  lifecycles(ids: readonly string[], known?: KnownReads): Promise<Map<string, TransactionLifecycle>>
  /** A lifecycle's JSON (JSON.stringify's): a final lifecycle's, kept since it was cached, is not serialized again. */
  json(lifecycle: TransactionLifecycle): string
  /** Whether this lifecycle object was found final (final-cache.ts): it never changes. */
  isFinal(lifecycle: TransactionLifecycle): boolean
  /** Its cache of final lifecycles (final-cache.ts), if any: for figures and tests. */
  readonly finalCache?: {
    readonly size: number
    readonly jsonChars: number
    readonly hits: number
    readonly misses: number
  }
}
