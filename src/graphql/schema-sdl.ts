/**
 * The GraphQL schema Antler serves: dfuse's stable core for EOSIO, field for field (docs/API.md, "GraphQL").
 * The alpha token queries are not served. `RAMOp`, `DTrxOp` and `TableOp` lists are always empty: SHiP does not
 * report them per action.
 */
export const SCHEMA_SDL = /* GraphQL */ `
  scalar Int64
  scalar Uint64
  scalar Uint32
  scalar JSON
  scalar Time

  enum COMPARATOR {
    GTE
    GT
    LTE
    LT
    EQ
  }
  enum TRANSACTION_STATUS {
    EXECUTED
    SOFT_FAIL
    HARD_FAIL
    DELAYED
    EXPIRED
    UNKNOWN
  }
  enum UINT64_ENCODING {
    NAME
    DECIMAL
    HEXADECIMAL
    SYMBOL
    SYMBOL_CODE
  }
  enum ACTION_SORT_ORDER {
    EXECUTION
    CREATION
  }
  enum DB_OPERATION {
    INS
    UPD
    REM
  }
  enum RAM_OPERATION {
    CREATE_TABLE
    DEFERRED_TRX_ADD
    DEFERRED_TRX_CANCEL
    DEFERRED_TRX_PUSHED
    DEFERRED_TRX_REMOVED
    DELETEAUTH
    LINKAUTH
    NEWACCOUNT
    PRIMARY_INDEX_ADD
    PRIMARY_INDEX_REMOVE
    PRIMARY_INDEX_UPDATE
    PRIMARY_INDEX_UPDATE_ADD_NEW_PAYER
    PRIMARY_INDEX_UPDATE_REMOVE_OLD_PAYER
    REMOVE_TABLE
    SECONDARY_INDEX_ADD
    SECONDARY_INDEX_REMOVE
    SECONDARY_INDEX_UPDATE_ADD_NEW_PAYER
    SECONDARY_INDEX_UPDATE_REMOVE_OLD_PAYER
    SETABI
    SETCODE
    UNLINKAUTH
    UPDATEAUTH_CREATE
    UPDATEAUTH_UPDATE
  }
  enum DTRX_OPERATION {
    PUSH_CREATE
    CREATE
    MODIFY_CANCEL
    MODIFY_CREATE
    CANCEL
  }
  enum TABLE_OPERATION {
    INS
    REM
  }

  type Query {
    searchTransactionsForward(
      query: String!
      lowBlockNum: Int64
      highBlockNum: Int64
      cursor: String
      limit: Int64 = 100
      irreversibleOnly: Boolean = false
    ): SearchTransactionsForwardResponse!
    searchTransactionsBackward(
      query: String!
      lowBlockNum: Int64
      highBlockNum: Int64
      cursor: String
      limit: Int64 = 100
      irreversibleOnly: Boolean = false
    ): SearchTransactionsBackwardResponse!
    blockIDByTime(time: Time!, comparator: COMPARATOR = LTE): BlockIDResponse!
    blockIDAtAccountCreation(account: String!): BlockIDResponse!
    getAccountHistoryActions(
      account: String!
      contract: String
      limit: Int64 = 100
      cursor: String
    ): AccountHistoryActionsConnection!
    block(id: String, num: Uint32): Block
  }

  type Subscription {
    searchTransactionsForward(
      query: String!
      lowBlockNum: Int64
      highBlockNum: Int64
      cursor: String
      limit: Int64 = 0
      irreversibleOnly: Boolean = false
      liveMarkerInterval: Uint32 = 0
    ): SearchTransactionForwardResponse!
    searchTransactionsBackward(
      query: String!
      lowBlockNum: Int64
      highBlockNum: Int64
      cursor: String
      limit: Int64 = 0
      irreversibleOnly: Boolean = false
    ): SearchTransactionBackwardResponse!
  }

  type SearchTransactionsForwardResponse {
    cursor: String
    results: [SearchTransactionForwardResponse!]
  }
  type SearchTransactionsBackwardResponse {
    cursor: String!
    results: [SearchTransactionBackwardResponse!]
  }
  type SearchTransactionForwardResponse {
    undo: Boolean!
    cursor: String!
    isIrreversible: Boolean!
    irreversibleBlockNum: Uint32!
    block: BlockHeader!
    trace: TransactionTrace
  }
  type SearchTransactionBackwardResponse {
    cursor: String!
    isIrreversible: Boolean!
    irreversibleBlockNum: Uint32!
    block: BlockHeader!
    trace: TransactionTrace
  }

  type BlockIDResponse {
    time: Time!
    num: Uint32!
    id: String!
  }

  type BlockHeader {
    id: String!
    num: Uint32!
    timestamp: Time!
    producer: String!
    confirmed: Uint32!
    previous: String!
    transactionMRoot: String!
    actionMRoot: String!
    scheduleVersion: Uint32!
    newProducers: ProducerSchedule
  }
  type ProducerSchedule {
    version: Uint32!
    producers: [ProducerKey!]!
  }
  type ProducerKey {
    producerName: String!
    blockSigningKey: String!
  }

  type Block {
    id: String!
    num: Uint32!
    dposLIBNum: Uint32!
    irreversible: Boolean!
    header: BlockHeader!
    executedTransactionCount: Uint32!
    transactionTraces(first: Uint32, last: Uint32, before: String, after: String): TransactionTraceConnection!
  }
  type TransactionTraceConnection {
    edges: [TransactionTraceEdge!]!
    pageInfo: PageInfo!
  }
  type TransactionTraceEdge {
    cursor: String!
    node: TransactionTrace!
  }
  type PageInfo {
    startCursor: String!
    endCursor: String!
    hasNextPage: Boolean!
    hasPreviousPage: Boolean!
  }

  type TransactionTrace {
    id: String!
    block: BlockHeader!
    status: TRANSACTION_STATUS!
    receipt: TransactionReceiptHeader!
    elapsed: Int64!
    netUsage: Uint64!
    scheduled: Boolean!
    executedActions: [ActionTrace!]!
    matchingActions: [ActionTrace!]!
    topLevelActions: [ActionTrace]!
    exceptJSON: JSON
  }
  type TransactionReceiptHeader {
    status: TRANSACTION_STATUS!
    cpuUsageMicroSeconds: Uint32!
    netUsageWords: Uint32!
  }

  type ActionTrace {
    seq: Uint64!
    executionIndex: Uint32!
    receipt: ActionReceipt
    receiver: String!
    account: String!
    name: String!
    authorization: [PermissionLevel!]!
    data: JSON
    json: JSON
    hexData: String!
    ramOps: [RAMOp!]!
    dtrxOps: [DTrxOp!]!
    tableOps: [TableOp!]!
    dbOps(code: String, table: String): [DBOp!]!
    console: String!
    contextFree: Boolean!
    elapsed: Int64!
    exceptJSON: JSON
    isNotify: Boolean!
    isMatchingQuery: Boolean!
    createdActions(sort: ACTION_SORT_ORDER = EXECUTION): [ActionTrace]!
    creatorAction: ActionTrace
    closestUnnotifiedAncestorAction: ActionTrace
  }
  type ActionReceipt {
    receiver: String!
    digest: String!
    globalSequence: Uint64!
    codeSequence: Uint64!
    abiSequence: Uint64!
  }
  type PermissionLevel {
    actor: String!
    permission: String!
  }

  type RAMOp {
    operation: RAM_OPERATION!
    payer: String!
    delta: Int64!
    usage: Uint64!
  }
  type DTrxOp {
    operation: DTRX_OPERATION!
    sender: String
    senderID: String
    payer: String
    publishedAt: Time
    delayUntil: Time
    expirationAt: Time
    trxID: String
    transaction: Transaction
  }
  type Transaction {
    expiration: Time!
    refBlockNum: Uint32!
    refBlockPrefix: Uint32!
    maxNetUsageWords: Uint32!
    maxCPUUsageMS: Uint32!
    delaySec: Uint32!
    contextFreeActions: [Action!]!
    actions: [Action!]!
  }
  type Action {
    account: String!
    name: String!
    authorization: [PermissionLevel]!
    json: JSON
    data: JSON
    hexData: String!
  }
  type TableOp {
    operation: TABLE_OPERATION!
    table: TableOpKey!
  }
  type TableOpKey {
    code: String!
    table: String!
    scope(encoding: UINT64_ENCODING = NAME): String!
  }
  type DBOp {
    operation: DB_OPERATION!
    oldPayer: String
    newPayer: String
    key: DBOpKey!
    oldData: String
    newData: String
    oldJSON: DecodedObject!
    newJSON: DecodedObject!
  }
  type DBOpKey {
    code: String!
    table: String!
    scope(encoding: UINT64_ENCODING = NAME): String!
    key(encoding: UINT64_ENCODING = NAME): String!
  }
  type DecodedObject {
    object: JSON
    error: String
  }

  type AccountHistoryActionsConnection {
    edges: [SimpleActionTraceEdge!]!
    pageInfo: PageInfo!
  }
  type SimpleActionTraceEdge {
    cursor: String!
    node: SimpleActionTrace!
  }
  type SimpleActionTrace {
    blockNum: Uint64!
    blockID: String!
    blockTime: Time!
    trxID: String!
    seq: Uint64!
    executionIndex: Uint32!
    receipt: ActionReceipt
    receiver: String!
    account: String!
    name: String!
    authorization: [PermissionLevel!]!
    data: JSON
    json: JSON
    hexData: String!
    console: String!
    contextFree: Boolean!
    isNotify: Boolean!
  }
`
