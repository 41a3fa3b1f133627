export type * from './types.ts'
export { TRANSACTION_CANCELED, SECRET_NAMES } from './types.ts'
export type {
  Store,
  ExecutionActions,
  KeyStore,
  WebhookStore,
  PortalStore,
  StoreWriter,
  StateReader,
  BlockReader,
  SearchReader,
  StepReader,
  StoreVerifier,
  TimeComparator,
  SnapshotReader,
  SnapshotSource,
} from './port.ts'
export type { SearchExpr, SearchFlag, SearchDirection, SearchMatch, SearchRange } from './search/query.ts'
export {
  MAX_FILTER_VALUES,
  type HistoryPageReader,
  type RowVersionQuery,
  type RowVersionEntry,
  type BlockQuery,
  type BlockUsageEntry,
  type PageArgs,
} from './history-pages.ts'
export { FLAG_INPUT, FLAG_NOTIF, FLAG_SCHEDULED, termKey, decodeEntries } from './search/postings.ts'
export {
  SEARCH_DATA_FIELDS,
  MAX_TERM_LENGTH,
  MAX_ROW_POSTINGS_PER_CONTRACT,
  dataSearchTerms,
  actionSearchTerms,
  blockTermContexts,
  blockSearchTerms,
  deferredCreator,
  type ActionTermContext,
} from './search/terms.ts'
export {
  StoreLinkError,
  StoreIrreversibleUndoError,
  StoreApiKeyExistsError,
  StoreReadOnlyError,
  StoreNotFoundError,
  StoreSchemaVersionError,
} from './errors.ts'
export { StoreWebhookExistsError } from './webhooks-sql.ts'
export { StoreAccountExistsError } from './portal-sql.ts'
export { openSqliteStore } from './sqlite/sqlite-store.ts'
export { openPostgresStore } from './postgres/postgres-store.ts'
export { openStore } from './open-store.ts'
export { FORKED_RETENTION_BLOCKS } from './block-content.ts'
export type { OpenStoreOptions } from './read-only.ts'
