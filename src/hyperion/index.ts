export { HyperionBadRequestError, HyperionNotFoundError } from './errors.ts'
export type { HyperionServices } from './services.ts'
export { hyperionTime } from './time.ts'
export { HYPERION_API_VERSION, HYPERION_LIMITS, hyperionChainName } from './limits.ts'
export { healthEntries } from './health.ts'
export { hyperionAbiSnapshot } from './abi-snapshot.ts'
export { hyperionBlock, hyperionBlocks } from './block-queries.ts'
export { hyperionDeltas } from './delta-query.ts'
export { hyperionSchedule } from './schedule-history.ts'
export { hyperionTableState } from './table-state.ts'
export { deltaDocuments, rowDecoderOf, type HyperionDeltaDocument } from './delta-documents.ts'
export { V1GetActions } from './v1-get-actions.ts'
export { v1GetTransaction } from './v1-get-transaction.ts'
export { TraceApiBlocks } from './trace-api-block.ts'
export {
  createBlockDocumentMemo,
  parseActionRequest,
  parseDeltaRequest,
  planStream,
  runStream,
  StreamRequestError,
  type BlockDocumentMemo,
  type RunningStream,
  type StreamDeps,
  type StreamRequest,
  type StreamSink,
} from './stream/index.ts'
export { planActionQuery } from './action-query.ts'
export { searchActionDocuments } from './action-search.ts'
export { checkTransaction, createdAccounts, creatorOf, simpleAction, transactionDocuments } from './action-answers.ts'
export {
  actionDocuments,
  loadDocumentContexts,
  type ActionDocumentContext,
  type HyperionActionDocument,
} from './action-documents.ts'
export { tokenBalances, topHolders } from './tokens.ts'
export { keyAccountsAt } from './state-permissions.ts'
export { chainAccount, storeAccount } from './state-account.ts'
export { blockTime, proposalsAt, voterScopesAt, votersAt } from './state-system.ts'
