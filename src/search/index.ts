export { parseSearchQuery, SEARCH_QUERY_LIMITS } from './parser.ts'
export { createCursorCodec, type CursorCodec, type SearchPosition } from './cursor.ts'
export { InvalidSearchQueryError, InvalidCursorError } from './errors.ts'
