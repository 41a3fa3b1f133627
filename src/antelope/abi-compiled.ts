import type { ABI } from '@wharfkit/antelope'
import type { AbiDecoder, DecodeResult } from './abi.ts'
import { BinaryDecodeError, BinaryReader } from './binary.ts'
import { readName, readPublicKey } from './binary-values.ts'
import { toHex } from './hash.ts'
import { bigIntToSymbolCode } from './symbols.ts'
import { formatNodeosTime, formatNodeosTimeSec, blockSlotToMs } from './time.ts'

type ReadValue = (r: BinaryReader) => unknown

/** A type this decoder does not read itself; the whole value then goes to the reference decoder. */
class Unsupported extends Error {}

function int(r: BinaryReader, bytes: 1 | 2 | 4, signed: boolean): number {
  const raw = bytes === 1 ? r.uint8() : bytes === 2 ? r.uint16() : r.uint32()
  if (!signed) return raw
  const bits = bytes * 8
  return raw >= 2 ** (bits - 1) ? raw - 2 ** bits : raw
}

function varint32(r: BinaryReader): number {
  const zigzag = r.varuint32()
  return zigzag & 1 ? -((zigzag + 1) / 2) : zigzag / 2
}

const TWO_POW_32 = 1n << 32n

/** A 64- or 128-bit integer as fc (nodeos) and wharfkit write it: a number below 2^32 in magnitude, else a string. */
function fcInteger(value: bigint): number | string {
  return value < TWO_POW_32 && value > -TWO_POW_32 ? Number(value) : value.toString()
}

function int128(r: BinaryReader, signed: boolean): number | string {
  const low = r.uint64()
  const high = r.uint64()
  const value = (high << 64n) | low
  return fcInteger(signed ? BigInt.asIntN(128, value) : value)
}

function formatAsset(amount: bigint, symbol: bigint): string {
  const precision = Number(symbol & 0xffn)
  const code = bigIntToSymbolCode(symbol >> 8n)
  const negative = amount < 0n
  const digits = (negative ? -amount : amount).toString().padStart(precision + 1, '0')
  const whole = digits.slice(0, digits.length - precision)
  const fraction = precision > 0 ? `.${digits.slice(digits.length - precision)}` : ''
  return `${negative ? '-' : ''}${whole}${fraction} ${code}`
}

function readAsset(r: BinaryReader): string {
  const amount = BigInt.asIntN(64, r.uint64())
  return formatAsset(amount, r.uint64())
}

function readSymbol(r: BinaryReader): string {
  const symbol = r.uint64()
  return `${Number(symbol & 0xffn)},${bigIntToSymbolCode(symbol >> 8n)}`
}

function readTimePoint(r: BinaryReader): string {
  const micros = BigInt.asIntN(64, r.uint64())
  // Milliseconds rounded half up, as the reference decoder renders them.
  const ms = micros / 1000n + (micros % 1000n >= 500n ? 1n : 0n)
  return formatNodeosTime(Number(ms))
}

const BUILTINS: Record<string, ReadValue> = {
  bool: (r) => r.bool(),
  int8: (r) => int(r, 1, true),
  uint8: (r) => int(r, 1, false),
  int16: (r) => int(r, 2, true),
  uint16: (r) => int(r, 2, false),
  int32: (r) => int(r, 4, true),
  uint32: (r) => int(r, 4, false),
  int64: (r) => fcInteger(BigInt.asIntN(64, r.uint64())),
  uint64: (r) => fcInteger(r.uint64()),
  int128: (r) => int128(r, true),
  uint128: (r) => int128(r, false),
  varint32,
  varuint32: (r) => r.varuint32(),
  time_point: readTimePoint,
  time_point_sec: (r) => formatNodeosTimeSec(r.uint32()),
  block_timestamp_type: (r) => formatNodeosTime(blockSlotToMs(r.uint32())),
  name: readName,
  bytes: (r) => toHex(r.bytes()),
  string: (r) => r.string(),
  checksum160: (r) => toHex(r.raw(20)),
  checksum256: (r) => toHex(r.raw(32)),
  checksum512: (r) => toHex(r.raw(64)),
  public_key: readPublicKey,
  symbol: readSymbol,
  symbol_code: (r) => bigIntToSymbolCode(r.uint64()),
  asset: readAsset,
  extended_asset: (r) => ({ quantity: readAsset(r), contract: readName(r) }),
}

/**
 * An ABI compiled into plain reader functions: the same JSON as the reference (wharfkit) decoder
 * at a fraction of its cost, which matters where every action of a chain is decoded (search
 * terms at ingest, table rows in bulk). Types it does not read itself (floats, signatures) go to
 * the reference decoder whole, so results never differ in shape.
 */
export class CompiledAbi {
  private readonly readers = new Map<string, ReadValue | Unsupported>()
  private readonly aliases = new Map<string, string>()
  private readonly structs = new Map<string, { base: string; fields: { name: string; type: string }[] }>()
  private readonly variants = new Map<string, string[]>()
  private readonly actionTypes = new Map<string, string>()

  constructor(
    readonly abi: ABI,
    private readonly fallback: AbiDecoder,
  ) {
    for (const t of abi.types) this.aliases.set(t.new_type_name, t.type)
    for (const s of abi.structs)
      this.structs.set(s.name, { base: s.base, fields: s.fields.map((f) => ({ name: f.name, type: f.type })) })
    for (const v of abi.variants) this.variants.set(v.name, v.types)
    for (const a of abi.actions) this.actionTypes.set(a.name.toString(), a.type)
  }

  /** The data type of an action, or undefined when the ABI does not declare it. */
  actionType(action: string): string | undefined {
    return this.actionTypes.get(action)
  }

  decode(type: string, data: Uint8Array): DecodeResult {
    const read = this.reader(type)
    if (read instanceof Unsupported) return this.fallback.decode({ abi: this.abi, type, data })
    const r = new BinaryReader(data)
    try {
      const value = read(r)
      if (r.remaining > 0) return { ok: false, error: `${r.remaining} bytes left after decoding ${type}` }
      return { ok: true, value }
    } catch (error) {
      if (error instanceof Unsupported) return this.fallback.decode({ abi: this.abi, type, data })
      return { ok: false, error: error instanceof Error ? error.message : String(error) }
    }
  }

  private reader(type: string): ReadValue | Unsupported {
    const known = this.readers.get(type)
    if (known) return known
    // A placeholder first, so recursive types compile to a reader that calls the finished one.
    let compiled: ReadValue | Unsupported | undefined
    this.readers.set(type, (r) => {
      if (typeof compiled !== 'function') throw compiled ?? new Unsupported(`type ${type} is incomplete`)
      return compiled(r)
    })
    try {
      compiled = this.compile(type, 0)
    } catch (error) {
      if (!(error instanceof Unsupported)) throw error
      compiled = error
    }
    this.readers.set(type, compiled)
    return compiled
  }

  private resolved(type: string): ReadValue {
    const read = this.reader(type)
    if (read instanceof Unsupported) throw read
    return read
  }

  private compile(type: string, depth: number): ReadValue {
    if (depth > 32) throw new Unsupported(`type ${type} nests too deep`)
    if (type.endsWith('[]')) {
      const item = this.resolved(type.slice(0, -2))
      return (r) => {
        const count = r.varuint32()
        if (count > r.remaining) throw BinaryDecodeError(`array of ${count} items in ${r.remaining} bytes`, r.offset)
        const out = new Array<unknown>(count)
        for (let i = 0; i < count; i++) out[i] = item(r)
        return out
      }
    }
    if (type.endsWith('?')) {
      const inner = this.resolved(type.slice(0, -1))
      return (r) => (r.bool() ? inner(r) : null)
    }
    if (type.endsWith('$')) {
      const inner = this.resolved(type.slice(0, -1))
      return (r) => (r.remaining > 0 ? inner(r) : null)
    }
    const builtin = BUILTINS[type]
    if (builtin) return builtin
    const alias = this.aliases.get(type)
    if (alias !== undefined) return this.compile(alias, depth + 1)
    const variant = this.variants.get(type)
    if (variant) {
      const options = variant.map((t) => ({ name: t, read: this.resolved(t) }))
      return (r) => {
        const index = r.varuint32()
        const option = options[index]
        if (!option) throw BinaryDecodeError(`variant ${type} has no option ${index}`, r.offset)
        return [option.name, option.read(r)]
      }
    }
    const struct = this.structs.get(type)
    if (struct) return this.compileStruct(type, struct)
    throw new Unsupported(`type ${type} is not read here`)
  }

  private compileStruct(type: string, struct: { base: string; fields: { name: string; type: string }[] }): ReadValue {
    const fields: { name: string; read: ReadValue }[] = []
    const chain: string[] = []
    for (
      let s: typeof struct | undefined = struct, name = type;
      s;
      name = s.base, s = s.base ? this.structs.get(s.base) : undefined
    ) {
      if (chain.includes(name)) throw new Unsupported(`struct ${type} has a cyclic base`)
      chain.push(name)
      if (s.base && !this.structs.has(s.base)) throw new Unsupported(`struct ${name} has unknown base ${s.base}`)
    }
    for (const name of chain.reverse()) {
      for (const f of this.structs.get(name)?.fields ?? []) fields.push({ name: f.name, read: this.resolved(f.type) })
    }
    return (r) => {
      const out: Record<string, unknown> = {}
      for (const f of fields) out[f.name] = f.read(r)
      return out
    }
  }
}
