import { Asset } from '@wharfkit/antelope'
import { BinaryReader, BinaryWriter } from '../../antelope/index.ts'
import { check } from '../errors.ts'

/** An asset as contracts hold it: amount in the smallest unit and the symbol's uint64 value. */
export interface AssetValue {
  readonly amount: bigint
  /** precision in the low byte, symbol code above */
  readonly symbol: bigint
}

const MAX_AMOUNT = (1n << 62n) - 1n

export function symbolCode(symbol: bigint): bigint {
  return symbol >> 8n
}

export function parseAsset(text: string): AssetValue {
  let asset: Asset
  try {
    asset = Asset.from(text)
  } catch {
    check(false, `invalid asset ${JSON.stringify(text)}`)
  }
  return { amount: BigInt(asset.units.toString()), symbol: BigInt(asset.symbol.value.toString()) }
}

/** `asset::is_valid()`: amount within ±(2^62-1) and a valid symbol. */
export function isValidAsset(a: AssetValue): boolean {
  return a.amount <= MAX_AMOUNT && a.amount >= -MAX_AMOUNT && isValidSymbol(a.symbol)
}

export function isValidSymbol(symbol: bigint): boolean {
  let code = symbolCode(symbol)
  if (code === 0n) return false
  let seenZero = false
  for (let i = 0; i < 7; i++, code >>= 8n) {
    const c = Number(code & 0xffn)
    if (c === 0) seenZero = true
    else if (seenZero || c < 65 || c > 90) return false
  }
  return code === 0n
}

export function writeAsset(w: BinaryWriter, a: AssetValue): BinaryWriter {
  return w.int64(a.amount).uint64(a.symbol)
}

export function readAsset(r: BinaryReader): AssetValue {
  const amount = BigInt.asIntN(64, r.uint64())
  return { amount, symbol: r.uint64() }
}
