import { BinaryReader, bigIntToSymbolCode } from '../../antelope/index.ts'
import { readAsset, symbolCode, type AssetValue } from './asset.ts'

/** The asset at the start of a row (a token balance or a stat row's supply). */
export function readAssetRow(value: Uint8Array): AssetValue {
  return readAsset(new BinaryReader(value))
}

/** `1000.0000 EOS`, as nodeos prints an asset. */
export function formatAsset(a: AssetValue): string {
  const precision = Number(a.symbol & 0xffn)
  const negative = a.amount < 0n
  const digits = (negative ? -a.amount : a.amount).toString().padStart(precision + 1, '0')
  const whole = digits.slice(0, digits.length - precision)
  const fraction = precision > 0 ? `.${digits.slice(-precision)}` : ''
  return `${negative ? '-' : ''}${whole}${fraction} ${bigIntToSymbolCode(symbolCode(a.symbol))}`
}
