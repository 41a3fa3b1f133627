import { AntlerError } from '../antelope/index.ts'

/**
 * A search parameter out of its rules (range, limit, a start above the searchable head): dfuse's
 * `request_validation_error` with `details.errors` = `{ "<param>": ["<sentence>"] }`. Raised by the
 * service, so REST and GraphQL refuse the same requests; parameters are named as REST spells them.
 */
export function SearchParamError(args: { param: string; sentence: string }): AntlerError {
  return new AntlerError({
    code: 'request_validation_error',
    status: 400,
    message: 'The request is invalid.',
    details: { errors: { [args.param]: [args.sentence] } },
  })
}

/**
 * The chain forked under a page several times in a row, so no consistent page could be read.
 * Retryable: the next attempt reads the new chain.
 */
export function SearchForkRaceError(args: { attempts: number }): AntlerError {
  return new AntlerError({
    code: 'service_unavailable_error',
    status: 503,
    message: `The service is unavailable: the chain forked under the search ${args.attempts} times in a row; retry.`,
    details: { reason: 'the chain forked while the page was read' },
    retryable: true,
  })
}
