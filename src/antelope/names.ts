import { Name, UInt64 } from '@wharfkit/antelope'
import { InvalidChainValueError } from './errors.ts'

const NAME_PATTERN = /^[.1-5a-z]{0,12}[.1-5a-j]?$/

/** True when `value` is a canonical Antelope name (at most 13 chars, last one limited to a-j/1-5). */
export function isValidName(value: string): boolean {
  return NAME_PATTERN.test(value) && Name.from(value).toString() === value
}

// Names repeat heavily (accounts, tables, scopes); parsing one costs microseconds, a lookup far less.
const NAME_CACHE_LIMIT = 100_000
// module-memo: name text → uint64 is a pure function; shared and bounded, no caller can tell it is there.
const nameCache = new Map<string, bigint>()

/** The uint64 value of a name; throws `invalid_chain_value_error` for a non-canonical name. */
export function nameToBigInt(value: string): bigint {
  const cached = nameCache.get(value)
  if (cached !== undefined) return cached
  if (!isValidName(value)) throw InvalidChainValueError({ kind: 'name', value, reason: 'not a valid name' })
  const parsed = BigInt(Name.from(value).value.toString())
  if (nameCache.size >= NAME_CACHE_LIMIT) nameCache.clear()
  nameCache.set(value, parsed)
  return parsed
}

/** The name rendering of a uint64 (trailing dots trimmed, as nodeos prints it). */
export function bigIntToName(value: bigint): string {
  return Name.from(UInt64.from(value.toString())).toString()
}
