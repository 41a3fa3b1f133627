export { parseSearchQuery, SEARCH_QUERY_LIMITS } from './parser.ts'
export { InvalidSearchQueryError } from './errors.ts'
