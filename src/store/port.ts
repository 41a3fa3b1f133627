import type { BlockRef } from '../antelope/index.ts'
import type { HistoryPageReader } from './history-pages.ts'
import type { SearchExpr, SearchMatch, SearchRange } from './search/query.ts'
import type {
  AccountPermission,
  ActionRecord,
  ApiKeyRecord,
  BlockBatch,
  BlockRecord,
  RowChange,
  SecretName,
  Step,
  StepPayload,
  StorePosition,
  TransactionHistory,
  TransactionRecord,
  AccountRecord,
  ApiKeyPatch,
  AuditEntry,
  DeliveryAdvance,
  KeyUsageRecord,
  SessionRecord,
  WebhookAttemptRecord,
  WebhookPatch,
  WebhookRecord,
} from './types.ts'

/**
 * The indexer's side of the store. Every method is atomic: a crash at any instant leaves the
 * store as it was before the call or after it, never between.
 */
export interface StoreWriter {
  /** The last applied block and LIB; undefined for an empty store. */
  position(): Promise<StorePosition | undefined>
  /** Applied blocks above LIB, oldest first (what a SHiP reader sends as `have_positions`). */
  reversibleBlocks(): Promise<BlockRef[]>
  /**
   * Applies every effect of the block on top of the current head, records it as a `new` step and
   * moves LIB (recording `irreversible` steps); refuses a block that does not link to the head.
   */
  applyBlock(batch: BlockBatch, lib: number): Promise<void>
  /** `applyBlock` for consecutive blocks in one atomic write (catching up far below head). */
  applyBlocks(batches: readonly BlockBatch[], lib: number): Promise<void>
  /** Removes every effect of blocks at and above `blockNum`, recording an `undo` step for each, newest first. */
  undoFrom(blockNum: number): Promise<void>
  /** The chain id the store's blocks belong to (chain-id.ts); undefined until the indexer records one. */
  chainId(): Promise<string | undefined>
  /** Records `chainId` unless the store has one already (the first recorded stays); answers the recorded one. */
  recordChainId(chainId: string): Promise<string>
}

/** Reads of contract state at any height. "Not found" is `undefined` or `[]`, never a throw. */
export interface StateReader {
  /** Rows of one (code, table, scope) as of `blockNum`, in primary-key order. */
  tableRows(args: {
    code: string
    table: string
    scope: string
    blockNum: number
  }): Promise<{ primaryKey: bigint; payer: string; value: Uint8Array; blockNum: number }[]>
  /** Rows of many scopes of one (code, table) as of `blockNum`, in one read: by scope, then primary key. */
  tableRowsOfScopes(args: {
    code: string
    table: string
    scopes: readonly string[]
    blockNum: number
  }): Promise<{ scope: string; primaryKey: bigint; payer: string; value: Uint8Array; blockNum: number }[]>
  /** One row by primary key as of `blockNum`. */
  tableRow(args: {
    code: string
    table: string
    scope: string
    primaryKey: bigint
    blockNum: number
  }): Promise<{ payer: string; value: Uint8Array; blockNum: number } | undefined>
  /** Scopes of a table holding rows as of `blockNum`. */
  scopes(args: { code: string; table: string; blockNum: number }): Promise<string[]>
  /** The binary ABI of an account as of `blockNum`, with the block that set it. */
  abi(args: { account: string; blockNum: number }): Promise<{ abi: Uint8Array; blockNum: number } | undefined>
  /** Accounts (with permission) whose authority holds `publicKey` as of `blockNum`. */
  keyAccounts(args: { publicKey: string; blockNum: number }): Promise<{ account: string; permission: string }[]>
  /**
   * The permission links of `account` in force at `blockNum`, by contract then action (byte order
   * in both adapters); `action` '' is the contract-wide link, and an unlinked action is absent.
   */
  permissionLinks(args: {
    account: string
    blockNum: number
  }): Promise<{ contract: string; action: string; permission: string; blockNum: number }[]>
  /** The permissions of `account` in force at `blockNum`, by name (byte order); removed ones are absent. */
  permissions(args: { account: string; blockNum: number }): Promise<AccountPermission[]>
  /**
   * Token balances of `account` at head: the present rows of every contract's table named `accounts` in its scope, by
   * contract then primary key, at most `limit` (the token-holdings index, holdings-sql.ts).
   */
  tokenHoldings(args: {
    account: string
    limit: number
  }): Promise<{ code: string; primaryKey: bigint; payer: string; value: Uint8Array; blockNum: number }[]>
  /** Accounts having a permission at head whose authority lists `account` (any of its permissions), by name. */
  controlledAccounts(args: { account: string; limit: number }): Promise<string[]>
  /**
   * Permission links in force at head over every account, newest first (then account, contract, action), each
   * filter optional; `action` '' is a contract-wide link.
   */
  linksAtHead(args: {
    account?: string
    code?: string
    action?: string
    permission?: string
    limit: number
  }): Promise<{ account: string; contract: string; action: string; permission: string; blockNum: number }[]>
}

/** How `blockByTime` compares block times with the asked time. */
export type TimeComparator = 'gt' | 'gte' | 'lt' | 'lte' | 'eq'

export interface BlockReader {
  blockByNum(num: number): Promise<BlockRecord | undefined>
  blockById(id: string): Promise<BlockRecord | undefined>
  /**
   * The block closest to `timeMs` on the comparator's side (`gt`/`gte`: the first after, `lt`/`lte`: the last before).
   */
  blockByTime(args: { timeMs: number; comparator: TimeComparator }): Promise<BlockRecord | undefined>
  /** Transactions whose id starts with `prefix` (lowercase hex), at most `limit`, by id. */
  transactionsByIdPrefix(prefix: string, limit: number): Promise<TransactionRecord[]>
  transaction(id: string): Promise<TransactionRecord | undefined>
  /** The actions of a transaction (its latest inclusion), in execution order. */
  actionsOfTransaction(id: string): Promise<ActionRecord[]>
  /**
   * Every record of a transaction id (delayed, executed, canceled, expired…) in block order, and the blocks it was
   * forked out of.
   */
  transactionHistory(id: string): Promise<TransactionHistory>
  /**
   * The contract rows a block changed, with the versions they replaced. SHiP reports row changes
   * per block, not per action: this is the finest grain the chain gives.
   */
  rowChanges(blockNum: number): Promise<RowChange[]>
}

/** The actions of one transaction's execution (its span of global sequences in one block). */
export interface ExecutionActions {
  readonly trxId: string
  readonly blockNum: number
  readonly actions: readonly ActionRecord[]
  /** The transaction's record of this execution (status, usage, details), read in the same statement. */
  readonly transaction: TransactionRecord
}

/**
 * Reads of many transactions and blocks at once, for a page of search results' lifecycles: each is
 * a fixed number of statements (a round trip or two on PostgreSQL) whatever the number asked, and
 * answers as the single reads do: an unknown id has an empty history and no actions, an unknown
 * block no row changes; `blocksByNums` and `actionReceiversOfBlocks` leave unknown blocks out.
 */
export interface BatchReader {
  /** `transactionHistory` of each id (an id the store never saw: empty records and forkedOut). */
  transactionHistories(ids: readonly string[]): Promise<Map<string, TransactionHistory>>
  /** `actionsOfTransaction` of each id (its latest inclusion), in execution order. */
  actionsOfTransactions(ids: readonly string[]): Promise<Map<string, ActionRecord[]>>
  /**
   * For each stored action of `seqs`, the transaction execution holding it: its id, block and
   * every action of that execution in execution order (one object per execution, however many of
   * `seqs` it holds); unknown sequences are left out. A page of search matches gets its
   * transactions without an id lookup.
   */
  executionsOfActions(seqs: readonly number[]): Promise<Map<number, ExecutionActions>>
  /** `blockByNum` of each number. */
  blocksByNums(nums: readonly number[]): Promise<Map<number, BlockRecord>>
  /** `rowChanges` of each block, in the same order. */
  rowChangesOfBlocks(nums: readonly number[]): Promise<Map<number, RowChange[]>>
  /**
   * The receiver and transaction id of each action of each block, in execution order, without the rest of the action
   * (attributing row changes needs only these).
   */
  actionReceiversOfBlocks(nums: readonly number[]): Promise<Map<number, { trxId: string; receiver: string }[]>>
  /** `abi` of each (account, block), in the order asked; a version asked many times is one object. */
  abisAt(
    requests: readonly { account: string; blockNum: number }[],
  ): Promise<({ abi: Uint8Array; blockNum: number } | undefined)[]>
}

/** Search over the postings of every stored action (search/terms.ts; docs/ARCHITECTURE.md, Search postings). */
export interface SearchReader {
  /** Matching actions in global-sequence order (or reverse), reading the lists only as far as the answer needs. */
  searchActions(args: { query: SearchExpr } & SearchRange): Promise<SearchMatch[]>
  /** Actions by global sequence, in the order asked; unknown ones are left out. */
  actionsBySeq(seqs: readonly number[]): Promise<ActionRecord[]>
  /**
   * The global sequence of the first action in a block at or after `blockNum` (undefined past the last one): block
   * ranges → sequence ranges.
   */
  firstSeqFromBlock(blockNum: number): Promise<number | undefined>
}

export interface StepReader {
  /** Steps after `seq` (exclusive), oldest first, at most `limit`. */
  stepsAfter(seq: number, limit: number): Promise<Step[]>
  /** The steps of one block id, oldest first: where a cursor naming that block resumes. */
  stepsOfBlock(blockId: string): Promise<Step[]>
  /** LIB as the log stood just before step `seq`: the last irreversible step's block before it (none: undefined). */
  libBeforeStep(seq: number): Promise<number | undefined>
  /**
   * What each step's block held, one entry per step, in order (StepPayload), read as one consistent
   * state with a fixed number of statements per call (a live hub reads ~500 steps at a time): the
   * stored block when its id is stored, else what it held when a fork undid it, kept until LIB is
   * FORKED_RETENTION_BLOCKS past it (block-content.ts); `undefined` once that is pruned.
   */
  stepPayloads(steps: readonly Step[]): Promise<(StepPayload | undefined)[]>
}

/** What one consistent read sees: the position, contract state and blocks. */
export type SnapshotReader = StateReader &
  Pick<BlockReader, 'blockByNum' | 'blockById' | 'blockByTime'> & { position(): Promise<StorePosition | undefined> }

/** Reads that must not mix two states of the store (an API answer racing a fork). */
export interface SnapshotSource {
  /**
   * Runs `read` on one snapshot: a write committed meanwhile (a block, an undo) is seen by all of
   * its reads or by none. `read` must await nothing but the reader's methods (on SQLite the
   * snapshot is a read transaction on the shared connection, held while `read` runs).
   */
  snapshot<T>(read: (reader: SnapshotReader) => Promise<T>): Promise<T>
}

/** Self-checks for `antler verify`. */
export interface StoreVerifier {
  /** Gaps, duplicates, broken block links and orphaned records, one sentence each; [] when clean. */
  integrityFindings(): Promise<string[]>
}

/** API keys and server secrets, shared by every process on one store (`antler keys` writes while the API runs). */
export interface KeyStore {
  /**
   * Stores a new key under the SHA-256 hex of its string; throws an AntlerError `store_api_key_exists_error` if the id
   * or the hash is taken.
   */
  insertApiKey(args: { record: ApiKeyRecord; keyHash: string }): Promise<void>
  /** The key whose string hashes to `keyHash` (revoked ones too, with revokedAtMs); undefined when unknown. */
  apiKeyByHash(keyHash: string): Promise<ApiKeyRecord | undefined>
  /** The key with this id; undefined when unknown. */
  apiKeyById(id: string): Promise<ApiKeyRecord | undefined>
  /** Every key, oldest first (by creation time, then id). */
  apiKeys(): Promise<ApiKeyRecord[]>
  /**
   * Marks the key revoked from `atMs` (which may be later than now: a rotated key's grace); false when no such key;
   * a second revoke keeps the earlier time and answers true.
   */
  revokeApiKey(args: { id: string; atMs: number }): Promise<boolean>
  /**
   * Ids of every key revoked at or before `nowMs` (the API refreshes its revocation set with this each second: one
   * indexed read).
   */
  revokedApiKeyIds(nowMs: number): Promise<string[]>
  /** An account's keys, oldest first (revoked ones too). */
  apiKeysOf(accountId: string): Promise<ApiKeyRecord[]>
  /** Changes a key's name, origins or limits; answers the new record, undefined when no such key. */
  updateApiKey(id: string, patch: ApiKeyPatch): Promise<ApiKeyRecord | undefined>
  /** Sets `lastUsedAtMs` of these keys (a batch, written every few seconds by the API). */
  touchApiKeys(used: readonly { readonly id: string; readonly atMs: number }[]): Promise<void>
  /**
   * A server secret: 32 random bytes created with the schema (insert-if-absent, so concurrent first opens agree),
   * identical for every process on the store.
   */
  secret(name: SecretName): Promise<Uint8Array>
}

/**
 * Webhook subscriptions, their delivery attempts and the one delivery lease, written by the API (any replica: on
 * PostgreSQL a read-only store writes these too; on SQLite a read-only connection cannot) and by the dispatcher.
 */
export interface WebhookStore {
  /**
   * Stores a subscription; throws an AntlerError `store_webhook_exists_error` if the id is taken. With `limit`, stores
   * it only while its owner has fewer than `limit` subscriptions, counted and inserted atomically (concurrent inserts
   * of one owner, from any process, take turns): false, nothing stored, when the owner is at the limit.
   */
  insertWebhook(record: WebhookRecord, limit?: number): Promise<boolean>
  webhook(id: string): Promise<WebhookRecord | undefined>
  /** An owner's subscriptions, oldest first (created_at, then id). */
  webhooksOf(ownerKeyId: string): Promise<WebhookRecord[]>
  /** How many subscriptions an owner has (the per-key limit). */
  webhookCount(ownerKeyId: string): Promise<number>
  /** Every subscription that is neither paused nor disabled (the dispatcher's work list), oldest first. */
  activeWebhooks(): Promise<WebhookRecord[]>
  /**
   * Changes the named fields (any of url, query, finality, secret, previousSecret (null clears), paused, disabled
   * (null clears), cursor, startBlock, failingSinceMs (null clears)); sets updatedAtMs = nowMs; answers the new
   * record, undefined when no such id. When `expectCursor` is given, changes nothing and answers undefined unless
   * the stored cursor equals it (a compare-and-set: two dispatchers never both advance one cursor).
   */
  updateWebhook(
    id: string,
    patch: WebhookPatch,
    nowMs: number,
    expectCursor?: string,
  ): Promise<WebhookRecord | undefined>
  /** Deletes the subscription and its attempts; false when no such id. */
  deleteWebhook(id: string): Promise<boolean>
  insertWebhookAttempt(attempt: WebhookAttemptRecord): Promise<void>
  /**
   * A delivered message, in one write: its attempt logged, and the subscription's cursor advanced to `cursor` (and
   * failingSinceMs cleared) only if it still is `expectCursor` (compare-and-set). Answers the new record, undefined
   * when the cursor had moved (the attempt is logged either way).
   */
  recordWebhookDelivery(attempt: WebhookAttemptRecord, advance: DeliveryAdvance): Promise<WebhookRecord | undefined>
  /**
   * A subscription's attempts, newest first (atMs desc, then attempt desc), at most `limit`, older than `beforeMs`
   * when given (paging).
   */
  webhookAttempts(webhookId: string, options: { limit: number; beforeMs?: number }): Promise<WebhookAttemptRecord[]>
  /** The latest attempt of one message of a subscription (a resend starts from it); undefined when none is kept. */
  lastWebhookAttempt(webhookId: string, messageId: string): Promise<WebhookAttemptRecord | undefined>
  /** Deletes attempts older than `beforeMs` (retention); answers how many. */
  pruneWebhookAttempts(beforeMs: number): Promise<number>
  /**
   * Takes or renews the one delivery lease: true when `holder` now holds it until `untilMs` (it was free, expired at
   * `nowMs`, or already `holder`'s); false when another holder's lease is still valid. One atomic statement on both
   * adapters (webhooks-sql.ts).
   */
  claimWebhookLease(holder: string, nowMs: number, untilMs: number): Promise<boolean>
  /** Gives the lease up if `holder` holds it. */
  releaseWebhookLease(holder: string): Promise<void>
}

/**
 * Portal accounts, sessions, the audit log, per-key usage and the one-time setup token, written by the API (any
 * replica, like webhooks: on PostgreSQL a read-only store writes these too) and by `antler accounts`.
 */
export interface PortalStore {
  /** Throws an AntlerError `store_account_exists_error` when the id or the login is taken. */
  insertAccount(record: AccountRecord): Promise<void>
  accountById(id: string): Promise<AccountRecord | undefined>
  /** By sign-in name (lower case). */
  accountByLogin(login: string): Promise<AccountRecord | undefined>
  /** Every account, oldest first. */
  accounts(): Promise<AccountRecord[]>
  accountCount(): Promise<number>
  /** Disables (atMs) or re-enables (null) an account; false when no such id. Disabling also deletes its sessions. */
  setAccountDisabled(id: string, atMs: number | null): Promise<boolean>
  /** Replaces an account's password hash; false when no such id. */
  setAccountPassword(id: string, passwordHash: string): Promise<boolean>

  insertSession(record: SessionRecord): Promise<void>
  /** The session stored under this hash, if it has not expired at `nowMs`. */
  session(idHash: string, nowMs: number): Promise<SessionRecord | undefined>
  deleteSession(idHash: string): Promise<void>
  /** Deletes expired sessions; answers how many. */
  pruneSessions(nowMs: number): Promise<number>

  appendAudit(entry: AuditEntry): Promise<void>
  /** An account's audit entries (or every entry when accountId is undefined), newest first, below `beforeSeq`. */
  auditEntries(options: { accountId?: string; limit: number; beforeSeq?: number }): Promise<AuditEntry[]>

  /** Adds these counts to the stored ones (one row per key and hour; rows are summed, never replaced). */
  addKeyUsage(rows: readonly KeyUsageRecord[]): Promise<void>
  /** The hourly rows of these keys from `sinceMs` on, in one read, by key then hour. */
  keyUsage(keyIds: readonly string[], sinceMs: number): Promise<KeyUsageRecord[]>

  /**
   * Keeps the hash of a new setup token (replacing an unused one); the token lets the first account be created once.
   */
  putSetupToken(tokenHash: string, nowMs: number): Promise<void>
  /** Spends the setup token with this hash: true once (atomically), false when unknown or already used. */
  useSetupToken(tokenHash: string, nowMs: number): Promise<boolean>
  /** Whether an unused setup token is kept. */
  hasSetupToken(): Promise<boolean>
}

/** A store: the writer and every reader, over one database. */
export interface Store
  extends
    StoreWriter,
    StateReader,
    BlockReader,
    BatchReader,
    SearchReader,
    StepReader,
    StoreVerifier,
    KeyStore,
    WebhookStore,
    PortalStore,
    HistoryPageReader,
    SnapshotSource {
  /**
   * Calls `onSteps` whenever another process commits steps (PostgreSQL: LISTEN `antler_steps`), until the returned
   * stop is called; `onError` once if the listening connection fails. Absent where the store cannot tell (SQLite:
   * readers poll).
   */
  listenForSteps?(onSteps: () => void, onError: (error: unknown) => void): Promise<() => Promise<void>>
  close(): Promise<void>
}
