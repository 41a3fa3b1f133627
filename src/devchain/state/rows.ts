/**
 * Chain state rows, in the shape of the SHiP state tables (docs/ARCHITECTURE.md, "SHiP wire facts") plus the
 * devchain's internal bookkeeping tables (names starting with `_`, never sent in deltas).
 * Rows are immutable values: a change always stores a new object.
 */

export interface Authority {
  readonly threshold: number
  readonly keys: readonly { readonly key: string; readonly weight: number }[]
  readonly accounts: readonly {
    readonly permission: { readonly actor: string; readonly permission: string }
    readonly weight: number
  }[]
  readonly waits: readonly { readonly wait_sec: number; readonly weight: number }[]
}

export interface AccountRow {
  readonly name: string
  /** block_timestamp_type slot */
  readonly creationSlot: number
  /** binary abi_def, empty when none */
  readonly abi: Uint8Array
}

export interface AccountMetadataRow {
  readonly name: string
  readonly privileged: boolean
  /** time_point µs */
  readonly lastCodeUpdateUs: bigint
  readonly codeHash: string | undefined
}

export interface CodeRow {
  readonly codeHash: string
  readonly code: Uint8Array
}

export interface ContractTableRow {
  readonly code: string
  readonly scope: string
  readonly table: string
  readonly payer: string
}

export interface ContractRowRow {
  readonly code: string
  readonly scope: string
  readonly table: string
  readonly primaryKey: bigint
  readonly payer: string
  readonly value: Uint8Array
}

export interface PermissionRow {
  readonly owner: string
  readonly name: string
  readonly parent: string
  readonly lastUpdatedUs: bigint
  readonly auth: Authority
}

export interface PermissionLinkRow {
  readonly account: string
  readonly code: string
  readonly messageType: string
  readonly requiredPermission: string
}

export interface GeneratedTransactionRow {
  readonly sender: string
  /** uint128 as a decimal string */
  readonly senderId: string
  readonly payer: string
  readonly trxId: string
  readonly packedTrx: Uint8Array
  /** µs since epoch: not executable before this */
  readonly delayUntilUs: bigint
  /** µs since epoch: expires after this */
  readonly expirationUs: bigint
}

export interface ResourceLimitsRow {
  readonly owner: string
  readonly netWeight: bigint
  readonly cpuWeight: bigint
  readonly ramBytes: bigint
}

export interface ResourceUsageRow {
  readonly owner: string
  readonly ramUsage: bigint
}

/** Per-account counters of action receipts (nodeos keeps them in account_metadata_object). */
export interface AccountSequenceRow {
  readonly recvSequence: bigint
  readonly authSequence: bigint
  readonly codeSequence: number
  readonly abiSequence: number
}

/** A transaction id seen recently, kept until it expires, to refuse duplicates. */
export interface RecentTransactionRow {
  readonly expirationSec: number
}

export interface CounterRow {
  readonly value: bigint
}

/** Every table the state holds, by name. */
export interface StateTables {
  account: AccountRow
  account_metadata: AccountMetadataRow
  code: CodeRow
  contract_table: ContractTableRow
  contract_row: ContractRowRow
  permission: PermissionRow
  permission_link: PermissionLinkRow
  generated_transaction: GeneratedTransactionRow
  resource_limits: ResourceLimitsRow
  resource_usage: ResourceUsageRow
  _account_sequence: AccountSequenceRow
  _recent_transaction: RecentTransactionRow
  _counter: CounterRow
}

export type TableName = keyof StateTables

/** SHiP table order for deltas (nodeos create_deltas.cpp); internal tables are never sent. */
export const SHIP_TABLE_ORDER: readonly TableName[] = [
  'account',
  'account_metadata',
  'code',
  'contract_table',
  'contract_row',
  'generated_transaction',
  'permission',
  'permission_link',
  'resource_limits',
  'resource_usage',
]
