import { AntlerError } from '../antelope/index.ts'

/**
 * A search query that does not parse or asks for what the index does not hold: where (0-based character position) and
 * why.
 */
export function InvalidSearchQueryError(args: { query: string; position: number; reason: string }): AntlerError {
  return new AntlerError({
    code: 'invalid_search_query_error',
    status: 400,
    message: `invalid query: ${args.reason} at position ${args.position} (query: ${JSON.stringify(args.query.length > 200 ? `${args.query.slice(0, 200)}…` : args.query)})`,
    details: { position: args.position, reason: args.reason },
  })
}

/** A cursor that is garbage, altered or made by another server (DESIGN §7). */
export function InvalidCursorError(args: { reason: string }): AntlerError {
  return new AntlerError({
    code: 'invalid_cursor_error',
    status: 400,
    message: `invalid cursor: ${args.reason}`,
    details: { reason: args.reason },
  })
}
