import { BinaryDecodeError, type BinaryReader } from '../antelope/index.ts'

// The bounded reads the hand-written SHiP decoders share: a malformed length or tag throws at once.

/** Reads a list's length, refusing one whose items (`minBytesEach` bytes or more each) cannot fit. */
export function readCount(r: BinaryReader, minBytesEach: number): number {
  const count = r.varuint32()
  if (count * minBytesEach > r.remaining)
    throw BinaryDecodeError(`a list of ${count} items cannot fit in ${r.remaining} bytes`, r.offset)
  return count
}

/** Reads a variant's index, refusing one above `max` (an alternative the decoder does not know). */
export function readVariant(r: BinaryReader, what: string, max: number): number {
  const index = r.varuint32()
  if (index > max) throw BinaryDecodeError(`unknown ${what} variant ${index}`, r.offset)
  return index
}
