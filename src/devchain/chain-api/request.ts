import type { ABI } from '@wharfkit/antelope'
import { isValidName, type AbiDecoder } from '../../antelope/index.ts'
import type { Chain } from '../chain/chain.ts'
import { chainErrors } from '../errors.ts'

/** A request's JSON body (nodeos reads its parameters from the body, for GET as for POST). */
export type Body = Record<string, unknown>

/** What each group of `/v1/chain` endpoints is built from. */
export interface ChainRouteContext {
  readonly chain: Chain
  /** Registers an endpoint (GET and POST) answering with what `handler` returns for the body. */
  readonly route: (path: string, handler: (body: Body) => unknown) => void
  /** The ABI an account holds now. */
  readonly abiOf: (account: string) => ABI | undefined
  readonly decoder: AbiDecoder
}

/** A body field that must pass `check`; otherwise a bad request naming the field and `what` it must be. */
export function field<T>(body: Body, name: string, check: (v: unknown) => v is T, what: string): T {
  const value = body[name]
  if (!check(value)) throw chainErrors.badRequest(`${name} must be ${what}`)
  return value
}

export const isString = (v: unknown): v is string => typeof v === 'string'
export const isName = (v: unknown): v is string => typeof v === 'string' && isValidName(v)

/** The parsed body as an object: none (or an empty one) is `{}`, anything but an object is a bad request. */
export function asBody(body: unknown): Body {
  if (body === undefined || body === null || body === '') return {}
  if (typeof body !== 'object' || Array.isArray(body)) throw chainErrors.badRequest('the body must be a JSON object')
  return body as Body
}
