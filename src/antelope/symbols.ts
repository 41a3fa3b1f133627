import { InvalidChainValueError } from './errors.ts'

const SYMBOL_CODE_PATTERN = /^[A-Z]{1,7}$/
const SYMBOL_PATTERN = /^([0-9]{1,2}),([A-Z]{1,7})$/

/** The uint64 of a symbol code (`EOS` → 0x534f45): ASCII bytes from the low byte up. */
export function symbolCodeToBigInt(code: string): bigint {
  if (!SYMBOL_CODE_PATTERN.test(code)) {
    throw InvalidChainValueError({ kind: 'symbol_code', value: code, reason: 'expected 1 to 7 capital letters' })
  }
  let value = 0n
  for (let i = code.length - 1; i >= 0; i--) value = (value << 8n) | BigInt(code.charCodeAt(i))
  return value
}

/** The symbol code text of a uint64: its bytes low to high, up to the first zero byte (7 at most). */
export function bigIntToSymbolCode(value: bigint): string {
  let text = ''
  for (let v = value; v !== 0n && text.length < 8; v >>= 8n) {
    const byte = Number(v & 0xffn)
    if (byte === 0) break
    text += String.fromCharCode(byte)
  }
  return text
}

/** The uint64 of a symbol `P,CODE`: precision in the low byte, the code above it. */
export function symbolToBigInt(symbol: string): bigint {
  const match = SYMBOL_PATTERN.exec(symbol)
  if (!match) throw InvalidChainValueError({ kind: 'symbol', value: symbol, reason: 'expected <precision>,<CODE>' })
  const precision = Number(match[1])
  if (precision > 18) throw InvalidChainValueError({ kind: 'symbol', value: symbol, reason: 'precision above 18' })
  return (symbolCodeToBigInt(match[2]) << 8n) | BigInt(precision)
}

/** `<precision>,<CODE>` of a uint64 symbol value. */
export function bigIntToSymbol(value: bigint): string {
  return `${Number(value & 0xffn)},${bigIntToSymbolCode(value >> 8n)}`
}

/** True for the `P,CODE` form. */
export function isSymbolForm(value: string): boolean {
  return SYMBOL_PATTERN.test(value)
}
