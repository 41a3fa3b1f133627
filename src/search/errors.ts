import { AntlerError } from '../antelope/index.ts'

/**
 * A search query that does not parse or asks for what the index does not hold: where (0-based character position)
 * and why. dfuse answered a bad query with `request_validation_error`; so does Antler, the position and reason in
 * `details` (docs/ERRORS.md).
 */
export function InvalidSearchQueryError(args: { query: string; position: number; reason: string }): AntlerError {
  return new AntlerError('request_validation_error', { param: 'q', ...args })
}

/**
 * A cursor that is garbage, altered or made by another server: `request_validation_error` naming `cursor`, the reason
 * in `details.reason` (docs/ERRORS.md says how this differs from dfuse).
 */
export function InvalidCursorError(args: { reason: string }): AntlerError {
  return new AntlerError('request_validation_error', { param: 'cursor', reason: args.reason })
}
