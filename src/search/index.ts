export { parseSearchQuery, SEARCH_QUERY_LIMITS } from './parser.ts'
export { createCursorCodec, type CursorCodec, type SearchPosition } from './cursor.ts'
export { InvalidSearchQueryError, InvalidCursorError } from './errors.ts'
export { SEARCH_LIMITS, type SearchSort } from './range.ts'
export { SearchForkRaceError } from './request-errors.ts'
export { IRREVERSIBLE_READ_LIMITS, type IrreversibleReadLimits } from './irreversible-reads.ts'
export {
  createSearchService,
  type SearchService,
  type SearchStore,
  type SearchRequest,
  type SearchRow,
  type SearchRowsPage,
  type SearchTransactionsPage,
} from './service.ts'
