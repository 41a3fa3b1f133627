import { AntlerError } from '../antelope/index.ts'

/** A parameter Hyperion refuses in its handler (skip or limit too big, a bad date…): 400 with Hyperion's sentence. */
export function HyperionBadRequestError(message: string): AntlerError {
  return new AntlerError('hyperion_bad_request_error', { message })
}

/** What a route looks up is not there (a block, an account's creation): 404 with Hyperion's sentence. */
export function HyperionNotFoundError(message: string): AntlerError {
  return new AntlerError('hyperion_not_found_error', { message })
}
