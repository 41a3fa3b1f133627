import type { BlockRef } from '../antelope/index.ts'
import type { ApiKeyLimits } from './portal-types.ts'

export type {
  AccountRecord,
  ApiKeyLimits,
  ApiKeyPatch,
  AuditEntry,
  KeyUsageRecord,
  SessionRecord,
} from './portal-types.ts'

/** What happened to a block in the canonical chain, in the order consumers must see it. */
export type StepType = 'new' | 'undo' | 'redo' | 'irreversible'

/** One entry of the step log: streams and cursors replay it from any position. */
export interface Step {
  /** Strictly increasing position in the log. */
  readonly seq: number
  readonly type: StepType
  readonly blockNum: number
  readonly blockId: string
}

/**
 * What a step's block held, for streams: for `new`, `redo` and `irreversible` steps the stored block;
 * for `undo` (and for an apply step of a block since forked out) what the block held when it was
 * undone, kept for a documented retention.
 */
export interface StepPayload {
  readonly step: Step
  readonly block: BlockRecord
  /** Trace records of the block, by position in the block (facts without a trace, such as cancelations, after them). */
  readonly transactions: readonly TransactionRecord[]
  /** Executed actions, in execution (global sequence) order. */
  readonly actions: readonly ActionRecord[]
  /** The contract rows the block changed, with the versions they replaced. */
  readonly rowChanges: readonly RowChange[]
}

export interface PermissionLevel {
  readonly actor: string
  readonly permission: string
}

export interface BlockRecord {
  readonly num: number
  readonly id: string
  readonly previous: string
  /** Block time, JS milliseconds. */
  readonly timestampMs: number
  readonly producer: string
  readonly transactionCount: number
  readonly actionCount: number
  /** The rest of the signed header; absent on blocks stored before schema version 5. */
  readonly header?: BlockHeaderDetails
}

/** A block header's fields beyond number, id, previous, time and producer (JSON-safe: bytes as hex). */
export interface BlockHeaderDetails {
  readonly confirmed: number
  readonly transactionMroot: string
  readonly actionMroot: string
  readonly scheduleVersion: number
  /** The legacy `new_producers` schedule, as nodeos renders it; null when absent. */
  readonly newProducers: {
    readonly version: number
    readonly producers: readonly { readonly producerName: string; readonly blockSigningKey: string }[]
  } | null
  readonly headerExtensions: readonly { readonly type: number; readonly data: string }[]
  /**
   * Savanna blocks only: the header's `action_mroot` field, which in Savanna holds the finality
   * tree root (`actionMroot` then holds the real action root from SHiP's `finality_data`, or '').
   */
  readonly finalityMroot?: string
}

export interface TransactionRecord {
  readonly id: string
  readonly blockNum: number
  /**
   * Position of the trace in the block (0 = onblock). Negative for a fact recorded about the
   * transaction in this block without a trace of its own (a cancelation).
   */
  readonly blockIndex: number
  /** SHiP's 0 executed, 1 soft_fail, 2 hard_fail, 3 delayed, 4 expired; and 5 canceled (by `canceldelay`). */
  readonly status: number
  readonly cpuUsageUs: number
  readonly netUsageWords: number
  readonly scheduled: boolean
  /**
   * What the trace (or the creating block) said beyond the status; absent on records stored before schema version 5.
   */
  readonly details?: TransactionDetails
}

/** The header of a signed transaction (SHiP's `partial_transaction`), JSON-safe. */
export interface TransactionHeader {
  /** Seconds since the epoch. */
  readonly expiration: number
  readonly refBlockNum: number
  readonly refBlockPrefix: number
  readonly maxNetUsageWords: number
  readonly maxCpuUsageMs: number
  readonly delaySec: number
  readonly transactionExtensions: readonly { readonly type: number; readonly data: string }[]
  /** Packed signatures (type byte first), hex; rendered to `SIG_…` when shown. */
  readonly signatures: readonly string[]
  readonly contextFreeData: readonly string[]
}

/** An action as it ran: its place in the transaction's call tree, its receiver and the call itself. */
export interface ActionCall {
  readonly actionOrdinal: number
  readonly creatorActionOrdinal: number
  readonly receiver: string
  readonly account: string
  readonly name: string
  readonly authorization: readonly PermissionLevel[]
}

/** An action a failed transaction ran without a receipt (the store keeps only executed actions as ActionRecords). */
export interface UnreceiptedAction extends ActionCall {
  /** Hex. */
  readonly data: string
  readonly trace: ActionTraceDetails
}

/** The creation of a deferred transaction, from the block's `generated_transaction` row. */
export interface DeferredCreation {
  /** '' for a transaction pushed with a delay; else the contract that scheduled it. */
  readonly sender: string
  /** uint128 as a decimal string. */
  readonly senderId: string
  readonly payer: string
  /** The packed transaction, hex. */
  readonly packedTrx: string
  /**
   * The action that created it: the transaction itself (ordinal 0) for a delayed push; for a contract, the first action
   * of the block run by the sender.
   */
  readonly createdBy: { readonly trxId: string; readonly actionOrdinal: number } | undefined
}

export interface TransactionDetails {
  readonly elapsedUs: number
  readonly netUsage: number
  readonly except: string | undefined
  readonly header: TransactionHeader | undefined
  readonly unreceipted: readonly UnreceiptedAction[]
  /** The failed deferred transaction an `onerror` handled: its id, status and exception. */
  readonly failedDtrx: { readonly id: string; readonly status: number; readonly except: string | undefined } | undefined
  /** Set on the record of the block that created this deferred transaction. */
  readonly deferred: DeferredCreation | undefined
}

/** What a trace says of an executed action beyond its effects (JSON-safe). */
export interface ActionTraceDetails {
  readonly elapsedUs: number
  readonly console: string
  readonly contextFree: boolean
  readonly except: string | undefined
  readonly authSequence: readonly (readonly [string, string])[]
  readonly codeSequence: number
  readonly abiSequence: number
}

export interface ActionRecord extends ActionCall {
  /**
   * The chain's global action sequence: a number across the port (search postings, cursors and
   * `actionsBySeq` use the same type); a safe integer for 285 years at a million actions a second.
   */
  readonly globalSequence: number
  readonly blockNum: number
  readonly trxId: string
  readonly data: Uint8Array
  readonly returnValue: Uint8Array
  readonly actDigest: string
  readonly recvSequence: bigint
  /** RAM usage changes this action caused, per account (bytes; negative = released). */
  readonly ramDeltas: readonly { readonly account: string; readonly delta: bigint }[]
  /** Elapsed time, console and receipt sequences; absent on actions stored before schema version 5. */
  readonly trace?: ActionTraceDetails
  /** `field:value` search terms (search/terms.ts), set by ingest with the ABI in force; not stored with the action. */
  readonly searchTerms?: readonly string[]
}

/** A transaction status the chain does not report as a trace: a delayed transaction canceled by `canceldelay`. */
export const TRANSACTION_CANCELED = 5

/**
 * Everything the store knows of one transaction id: every record in block order, and the blocks it was forked out of.
 */
export interface TransactionHistory {
  readonly records: readonly TransactionRecord[]
  readonly forkedOut: readonly { readonly blockNum: number; readonly blockId: string }[]
}

/** A contract row change of one block, with the version it replaced (undefined when the row was new). */
export interface RowChange {
  readonly code: string
  readonly table: string
  readonly scope: string
  readonly primaryKey: bigint
  readonly payer: string
  /** Undefined when the block removed the row. */
  readonly value: Uint8Array | undefined
  readonly old: { readonly payer: string; readonly value: Uint8Array | undefined } | undefined
}

/** A contract row as a block left it: `value` undefined when the block removed it. */
export interface RowChangeRecord {
  readonly code: string
  readonly scope: string
  readonly table: string
  readonly primaryKey: bigint
  readonly payer: string
  readonly value: Uint8Array | undefined
}

/** An account's binary ABI as a block set it (empty = cleared). */
export interface AbiChangeRecord {
  readonly account: string
  readonly abi: Uint8Array
}

/** A permission's authority and place in the tree (SHiP's `permission` row, without `last_updated` and waits). */
export interface PermissionAuthority {
  readonly name: string
  readonly parent: string
  readonly threshold: number
  readonly keys: readonly { readonly key: string; readonly weight: number }[]
  readonly accounts: readonly { readonly permission: PermissionLevel; readonly weight: number }[]
}

/** A permission as a block left it; `removed` when deleted. */
export interface PermissionChangeRecord extends PermissionAuthority {
  readonly owner: string
  readonly removed: boolean
}

/** A permission of an account as the block that last set it wrote it. */
export interface AccountPermission extends PermissionAuthority {
  /** The block that set this version. */
  readonly blockNum: number
}

/** A permission link as a block left it; `requiredPermission` undefined when unlinked. */
export interface LinkChangeRecord {
  readonly account: string
  readonly code: string
  readonly messageType: string
  readonly requiredPermission: string | undefined
}

/** Every effect of one block: the unit of an atomic store write. */
export interface BlockBatch {
  readonly block: BlockRecord
  readonly transactions: readonly TransactionRecord[]
  readonly actions: readonly ActionRecord[]
  readonly rows: readonly RowChangeRecord[]
  readonly abis: readonly AbiChangeRecord[]
  readonly permissions: readonly PermissionChangeRecord[]
  readonly links: readonly LinkChangeRecord[]
}

/** Where the store stands: the last applied block and the chain's LIB as last seen. */
export interface StorePosition {
  readonly head: BlockRef
  readonly lib: number
}

/** The kinds of API key (the key string starts with `<type>_`). */
export type ApiKeyType = 'mobile' | 'web' | 'server'

/** An API key as stored. The key string itself is never stored: only its SHA-256 (hex). */
export interface ApiKeyRecord {
  /** Public id, chosen by the caller (the auth layer), unique. */
  readonly id: string
  readonly name: string
  readonly type: ApiKeyType
  /** Allowed browser origins (web keys), [] otherwise. */
  readonly origins: readonly string[]
  readonly createdAtMs: number
  /**
   * Set once revoked: the time from which the key and its tokens are refused (later than now while a rotated key's
   * grace period runs).
   */
  readonly revokedAtMs?: number
  /** The portal account that owns the key; absent for keys made by `antler keys create`. */
  readonly accountId?: string
  /** What the portal shows of the key string: its type and first 4 hex digits (`web_abcd`). */
  readonly prefix?: string
  /** When a token was last issued for it (kept at most once a minute). */
  readonly lastUsedAtMs?: number
  /** Limits of this key that differ from its type's defaults. */
  readonly limits?: ApiKeyLimits
}

/** Names of the server secrets every store holds (32 random bytes each, created with the schema). */
export type SecretName = 'jwt_signing_key' | 'cursor_key'

/** Every secret a store holds, in the order they are created. */
export const SECRET_NAMES: readonly SecretName[] = ['jwt_signing_key', 'cursor_key']

/** Which blocks a webhook subscription is sent: as they are applied (with undo on forks), or once irreversible. */
export type WebhookFinality = 'reversible' | 'irreversible'

/** A webhook subscription as stored (the `webhooks` table; webhooks-sql.ts maps it). */
export interface WebhookRecord {
  /** `wh_…`, chosen by the caller, unique. */
  readonly id: string
  /** The API key id that owns it ('' with `--no-auth`). */
  readonly ownerKeyId: string
  readonly url: string
  readonly query: string
  readonly finality: WebhookFinality
  /** `whsec_…`: the current signing secret. */
  readonly secret: string
  /** The secret before the last rotation, which also signs until `untilMs`. */
  readonly previousSecret?: { readonly secret: string; readonly untilMs: number }
  readonly paused: boolean
  /** Set when deliveries stopped for good (a 410, or failures for too long). */
  readonly disabled?: { readonly reason: string; readonly atMs: number }
  /** The last acknowledged message's cursor; '' before the first. */
  readonly cursor: string
  /** Where delivery began when `cursor` is ''. */
  readonly startBlock: number
  /** The first failure of the current run of failures (cleared by a 2xx). */
  readonly failingSinceMs?: number
  readonly createdAtMs: number
  readonly updatedAtMs: number
}

/**
 * The fields `updateWebhook` may change: a field left out (or undefined) is kept, `null` clears an optional one.
 */
export interface WebhookPatch {
  readonly url?: string
  readonly query?: string
  readonly finality?: WebhookFinality
  readonly secret?: string
  readonly previousSecret?: NonNullable<WebhookRecord['previousSecret']> | null
  readonly paused?: boolean
  readonly disabled?: NonNullable<WebhookRecord['disabled']> | null
  readonly cursor?: string
  readonly startBlock?: number
  readonly failingSinceMs?: number | null
}

/** One delivery attempt of one message to a subscription (the attempts log). */
/** A delivered message's cursor advance (recordWebhookDelivery): to `cursor`, if the stored one is `expectCursor`. */
export interface DeliveryAdvance {
  readonly cursor: string
  readonly expectCursor: string
  /** The subscription's new updatedAtMs. */
  readonly nowMs: number
}

export interface WebhookAttemptRecord {
  readonly webhookId: string
  readonly messageId: string
  /** 1 for the first try of a message. */
  readonly attempt: number
  readonly atMs: number
  /** The HTTP status; null when no response came. */
  readonly status: number | null
  readonly durationMs: number
  /** What failed: 'timeout' | 'refused' | 'blocked_ip' | 'http_status' | 'dns' | …; null on a 2xx. */
  readonly error: string | null
  /** At most 20,000 characters (the caller cuts). */
  readonly responseBody: string | null
  /** Where the message follows (the subscription's cursor before it, or `block:<n>`; '' for a test message). */
  readonly afterPosition: string
}
