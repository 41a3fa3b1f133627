import { decodeAbiBinary, createWharfkitDecoder, type DecodeResult } from './abi.ts'
import { CompiledAbi } from './abi-compiled.ts'
import { sha256, toHex } from './hash.ts'

/**
 * Parsed and compiled ABIs keyed by the hash of their binary form, bounded (least recently used
 * goes first), so the same ABI bytes seen at many heights or accounts parse once.
 */
export class AbiCache {
  private readonly entries = new Map<string, CompiledAbi>()
  private readonly fallback = createWharfkitDecoder()

  constructor(private readonly capacity = 512) {}

  /** The compiled ABI of these bytes, or the decoding error. */
  fromBinary(data: Uint8Array): DecodeResult<CompiledAbi> {
    const key = toHex(sha256(data))
    const hit = this.entries.get(key)
    if (hit) {
      this.entries.delete(key)
      this.entries.set(key, hit)
      return { ok: true, value: hit }
    }
    const decoded = decodeAbiBinary(data)
    if (!decoded.ok) return decoded
    const compiled = new CompiledAbi(decoded.value, this.fallback)
    this.entries.set(key, compiled)
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string)
    return { ok: true, value: compiled }
  }

  get size(): number {
    return this.entries.size
  }
}
