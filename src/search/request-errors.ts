import { AntlerError } from '../antelope/index.ts'

/**
 * A search parameter out of its rules (range, limit, a start above the searchable head): dfuse's
 * `request_validation_error` with `details.errors` = `{ "<param>": ["<sentence>"] }`. Raised by the
 * service, so REST and GraphQL refuse the same requests; parameters are named as REST spells them.
 */
export function SearchParamError(args: { param: string; sentence: string }): AntlerError {
  return new AntlerError('request_validation_error', { errors: { [args.param]: [args.sentence] } })
}

/**
 * The chain forked under a page several times in a row, so no consistent page could be read.
 * Retryable: the next attempt reads the new chain.
 */
export function SearchForkRaceError(args: { attempts: number }): AntlerError {
  return new AntlerError('service_unavailable_error', {
    reason: 'the chain forked while the page was read',
    attempts: args.attempts,
  })
}
