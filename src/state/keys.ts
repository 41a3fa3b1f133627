import { renderKey, type KeyType } from '../antelope/index.ts'

/**
 * Row keys rendered per `key_type`, as `renderKey` renders them, for the thousand keys of a table
 * read: the uint64 is split once into two 32-bit halves and rendered with number arithmetic
 * (renderKey's `name` goes through a 64-bit name library from the decimal text, its `symbol_code`
 * allocates a BigInt per byte: 5 % of the API's CPU on a 1,000-row answer). test/state/keys.test.ts
 * holds both to the same output.
 */
export function keyRenderer(keyType: KeyType): (value: bigint) => string {
  switch (keyType) {
    case 'name':
      return (value) => nameOf(high(value), low(value))
    case 'symbol_code':
      return (value) => bytesText(high(value), low(value), 0)
    case 'symbol': {
      return (value) => {
        const lo = low(value)
        return `${lo & 0xff},${bytesText(high(value), lo, 1)}`
      }
    }
    case 'hex':
      return (value) => leHex(low(value)) + leHex(high(value))
    case 'hex_be':
      return (value) => beHex(high(value)) + beHex(low(value))
    default:
      return (value) => renderKey(value, keyType)
  }
}

const MASK_32 = 0xffff_ffffn
const high = (value: bigint) => Number((value >> 32n) & MASK_32)
const low = (value: bigint) => Number(value & MASK_32)

const NAME_CHARS = '.12345abcdefghijklmnopqrstuvwxyz'

/**
 * An Antelope name: twelve 5-bit characters from the top bit, a thirteenth of the last 4 bits; trailing dots dropped.
 */
function nameOf(hi: number, lo: number): string {
  let text = ''
  let kept = 0
  for (let i = 0; i < 12; i++) {
    const shift = 59 - 5 * i // lowest bit of the character's 5 bits
    let c: number
    if (shift >= 32) c = (hi >>> (shift - 32)) & 31
    else if (shift + 5 <= 32) c = (lo >>> shift) & 31
    else c = ((hi << (32 - shift)) | (lo >>> shift)) & 31
    text += NAME_CHARS[c]
    if (c !== 0) kept = i + 1
  }
  const last = lo & 15
  if (last !== 0) return text + NAME_CHARS[last]
  return text.slice(0, kept)
}

/**
 * The value's bytes from byte `from`, least significant first, as characters up to the first zero byte (a symbol code).
 */
function bytesText(hi: number, lo: number, from: number): string {
  let text = ''
  for (let i = from; i < 8; i++) {
    const byte = i < 4 ? (lo >>> (8 * i)) & 0xff : (hi >>> (8 * (i - 4))) & 0xff
    if (byte === 0) break
    text += String.fromCharCode(byte)
  }
  return text
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'))
/** 4 bytes, least significant first. */
const leHex = (n: number) => HEX[n & 0xff] + HEX[(n >>> 8) & 0xff] + HEX[(n >>> 16) & 0xff] + HEX[n >>> 24]
/** 4 bytes, most significant first. */
const beHex = (n: number) => HEX[n >>> 24] + HEX[(n >>> 16) & 0xff] + HEX[(n >>> 8) & 0xff] + HEX[n & 0xff]
