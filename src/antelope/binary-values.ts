import { PublicKey, Serializer } from '@wharfkit/antelope'
import { BinaryDecodeError, type BinaryReader } from './binary.ts'
import { toHex } from './hash.ts'
import { bigIntToName } from './names.ts'

// Names and keys repeat heavily in chain data; rendering one costs microseconds, a lookup far less.
const CACHE_LIMIT = 50_000
// module-memo: uint64 → name text is a pure function; shared and bounded, no caller can tell it is there.
const names = new Map<bigint, string>()
// module-memo: packed key → key text is a pure function; shared and bounded, no caller can tell it is there.
const publicKeys = new Map<string, string>()

/** Reads a `name` and renders it, through a bounded cache. */
export function readName(r: BinaryReader): string {
  const value = r.uint64()
  let name = names.get(value)
  if (name === undefined) {
    name = bigIntToName(value)
    if (names.size >= CACHE_LIMIT) names.clear()
    names.set(value, name)
  }
  return name
}

/** Reads a `public_key` (K1, R1 or WebAuthn) and renders it in the `PUB_` form, through a bounded cache. */
export function readPublicKey(r: BinaryReader): string {
  const start = r.offset
  const type = r.uint8()
  r.raw(33)
  if (type === 2) {
    r.uint8()
    r.bytes()
  } else if (type > 2) throw BinaryDecodeError(`unknown public key type ${type}`, start)
  const bytes = r.slice(start)
  const hex = toHex(bytes)
  let text = publicKeys.get(hex)
  if (text === undefined) {
    text = Serializer.decode({ data: bytes, type: PublicKey }).toString()
    if (publicKeys.size >= CACHE_LIMIT) publicKeys.clear()
    publicKeys.set(hex, text)
  }
  return text
}
