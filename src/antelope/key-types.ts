import { InvalidChainValueError } from './errors.ts'
import { bigIntToName, nameToBigInt } from './names.ts'
import { bigIntToSymbol, bigIntToSymbolCode, isSymbolForm, symbolCodeToBigInt, symbolToBigInt } from './symbols.ts'

/** How a uint64 table key or scope is rendered (`key_type` on the REST API). */
export type KeyType = 'name' | 'hex' | 'hex_be' | 'uint64' | 'symbol' | 'symbol_code'

export const KEY_TYPES: readonly KeyType[] = ['name', 'hex', 'hex_be', 'uint64', 'symbol', 'symbol_code']

const UINT64_MAX = (1n << 64n) - 1n

export function isKeyType(value: string): value is KeyType {
  return (KEY_TYPES as readonly string[]).includes(value)
}

function leBytesHex(value: bigint): string {
  let out = ''
  for (let i = 0; i < 8; i++)
    out += Number((value >> BigInt(8 * i)) & 0xffn)
      .toString(16)
      .padStart(2, '0')
  return out
}

/**
 * Renders a uint64 key. `hex` is the 8 bytes in memory (little-endian) order as dfuse printed it;
 * `hex_be` is the big-endian number, zero-padded to 16 digits, as dfuse documented it (its open-source server printed
 * `hex` instead; docs/API.md, `key_type`).
 */
export function renderKey(value: bigint, keyType: KeyType): string {
  switch (keyType) {
    case 'name':
      return bigIntToName(value)
    case 'uint64':
      return value.toString(10)
    case 'hex':
      return leBytesHex(value)
    case 'hex_be':
      return value.toString(16).padStart(16, '0')
    case 'symbol':
      return bigIntToSymbol(value)
    case 'symbol_code':
      return bigIntToSymbolCode(value)
  }
}

/**
 * Parses a key written in `keyType`: every rendering of `renderKey` parses back to its value.
 * `name` also accepts the `CODE` and `P,CODE` forms; `hex_be` also accepts unpadded hex numbers.
 */
export function parseKey(text: string, keyType: KeyType): bigint {
  const invalid = (reason: string) => InvalidChainValueError({ kind: `key (${keyType})`, value: text, reason })
  switch (keyType) {
    case 'name':
      if (isSymbolForm(text)) return symbolToBigInt(text)
      if (/^[A-Z]{1,7}$/.test(text)) return symbolCodeToBigInt(text)
      return nameToBigInt(text)
    case 'uint64': {
      if (!/^[0-9]{1,20}$/.test(text)) throw invalid('expected a decimal number')
      const value = BigInt(text)
      if (value > UINT64_MAX) throw invalid('above the uint64 range')
      return value
    }
    case 'hex': {
      if (!/^[0-9a-fA-F]{16}$/.test(text)) throw invalid('expected 16 hex digits (8 little-endian bytes)')
      let value = 0n
      for (let i = 7; i >= 0; i--) value = (value << 8n) | BigInt(parseInt(text.slice(2 * i, 2 * i + 2), 16))
      return value
    }
    case 'hex_be':
      if (!/^(0x)?[0-9a-fA-F]{1,16}$/.test(text)) throw invalid('expected 1 to 16 hex digits')
      return BigInt(text.startsWith('0x') ? text : `0x${text}`)
    case 'symbol':
      return symbolToBigInt(text)
    case 'symbol_code':
      return symbolCodeToBigInt(text)
  }
}
